"""Wording of a dataset check (audit 34 C, findings 3 and 8): no figure prints as one it
differs from ("rise 0.00003 > max_drop 0.00000" for a max_drop of 1e-6, a passing drop of
-0.0000), and the refusal of an output of no single class axis guesses classes last where the
last axis is the smallest (MTCNN's pnet [1, H, W, 2] read as "a segmentation map [N, C, H, W]?")."""
from __future__ import annotations

import numpy as np
import pytest

from pytest_ascend_accuracy.dataset import run_dataset_check
from pytest_ascend_accuracy.dataset.result import DatasetResult


@pytest.mark.parametrize("kwargs,figures", [
    # audit 34 C: "rise 0.00003 > max_drop 0.00000"
    (dict(reference=0.12833, device=0.12835, max_drop=1e-6, higher_is_better=False),
     "0.12835 on the device vs 0.12833 reference (lower is better: rise 0.00002 > max_drop "
     "1e-06)"),
    # a passing drop below the figures' last decimal read "-0.0000"
    (dict(reference=0.12834999, device=0.12835001, max_drop=1e-6),
     "0.12835001 on the device vs 0.12834999 reference (drop -0.00000002 <= max_drop 1e-06)"),
    (dict(reference=0.5, device=0.4, max_drop=0.01),
     "0.4000 on the device vs 0.5000 reference (drop 0.1000 > max_drop 0.0100)"),
    (dict(reference=0.7, device=0.1 + 0.6, max_drop=0.0),  # a float sum's residue is no drop
     "0.7000 on the device vs 0.7000 reference (drop 0.0000 <= max_drop 0.0000)"),
])
def test_no_figure_prints_as_one_it_differs_from(kwargs, figures):
    result = DatasetResult(metric="m", samples=1, rows=1, **kwargs)
    assert result.figures() == f"m {figures}"


@pytest.mark.parametrize("shape,guess", [
    ([1, 4, 3, 2], "a per-position map with classes last [N, H, W, C]?"),  # MTCNN's pnet
    ([1, 2, 3, 4], "a segmentation map [N, C, H, W]?"),
])
def test_the_refusal_of_a_map_guesses_its_class_axis_from_the_sizes(device, shape, guess):
    from pytest_ascend_accuracy.errors import ConfigError

    from .test_sequence_outputs import mul_model

    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    with pytest.raises(ConfigError) as info:
        run_dataset_check(device(mul_model(shape)), [{"x": x}], metric="agreement")
    assert f"no single class axis ({guess}); score it with" in str(info.value)
