"""The streamed Top-k agrees with ``topk_accuracy`` on whole arrays (ties, batches, NaN rows)."""
from __future__ import annotations

import numpy as np
import pytest

from pytest_ascend_accuracy.dataset.metrics import topk_accuracy
from pytest_ascend_accuracy.dataset.samples import Labels, Sample
from pytest_ascend_accuracy.dataset.scoring import RowFlips, TopK


@pytest.mark.parametrize("k", [1, 5])
def test_streamed_topk_matches_topk_accuracy(k):
    rng = np.random.default_rng(k)
    logits = rng.integers(0, 4, size=(60, 8)).astype(np.float32)  # many ties
    logits[7, 2] = np.nan
    labels = rng.integers(0, 8, size=60)
    scorer = TopK(k, "y", Labels([labels[i:i + 3] for i in range(0, 60, 3)]))
    flips = RowFlips("y")
    for n, i in enumerate(range(0, 60, 3)):  # batches of 3 rows
        sample = Sample(str(n), n, {})
        ref, dev = {"y": logits[i:i + 3] * 0 + logits[i:i + 3]}, {"y": logits[i:i + 3]}
        scorer.add(sample, ref, dev)
        flips.add(sample, ref, dev)
    expected = topk_accuracy(logits, labels, k)  # the NaN row is wrong in both
    assert scorer.values() == pytest.approx((expected, expected))
    assert flips.flipped == ["2[1]"] and flips.nonfinite == ["2[1]"]
