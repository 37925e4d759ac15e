"""The diagnose flow's op tables show the cosine the verdict judged (with a float16 tensor's
positions below its smallest normal compared as equal, ``compare/tiny_values.py``), as the
failure text and the reports do, not msaccucmp's plain figure (a helper's review)."""
import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.triage.verdict_view import _table


def test_the_table_shows_the_judged_cosine_of_a_tiny_float16_row():
    logits = -10.5 - np.random.default_rng(0).gamma(2.0, 3.0, 4096)  # a sigmoid's tail
    noisy = logits + np.random.default_rng(1).normal(0, 0.1, logits.shape)  # off by ulps
    golden = (1.0 / (1.0 + np.exp(-logits))).astype(np.float32)
    device = (1.0 / (1.0 + np.exp(-noisy))).astype(np.float16)
    r = compare_dumps(DumpSet.from_arrays({"sig": [device]}),
                      DumpSet.from_arrays({"sig": [golden]}))
    m = r.rows[0].metrics
    assert 1.0 > m.value("cosine") > m.cosine
    verdict = r.judge(m.value("cosine") + 1e-7)  # fails by a hair, judged by the higher figure
    (line,) = _table(verdict)
    assert line.cosine == m.value("cosine")
