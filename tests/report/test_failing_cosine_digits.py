"""A failing cosine a hair below a strict threshold prints with the decimals that show it below:
an MTCNN check at 0.999999 listed ``0.999999  cosine < 0.999999`` for 0.9999985 in its table of
next worst operators, and its diagnosis's step table read ``cos 0.999999`` (audit 34); the first
failing op's block already printed ``0.9999985 < 0.999999``."""
import re

import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.failure_text import failure_text
from pytest_ascend_accuracy.triage.report import _cos


def _near(cos: float, n: int = 64) -> tuple:
    """(golden, actual) of cosine ``cos`` with each other."""
    rng = np.random.default_rng(1)
    g = rng.standard_normal(n)
    g /= np.linalg.norm(g)
    e = rng.standard_normal(n)
    e -= e.dot(g) * g
    e /= np.linalg.norm(e)
    t = np.arccos(cos)
    return g.astype(np.float32), (np.cos(t) * g + np.sin(t) * e).astype(np.float32)


def test_the_table_shows_a_failing_cosine_below_its_threshold():
    (g1, a1), (g2, a2) = _near(0.99999), _near(0.9999988)
    golden = DumpSet.from_arrays({"conv1": [g1], "conv2": [g2]})
    actual = DumpSet.from_arrays({"conv1": [a1], "conv2": [a2]},
                                 op_types={"conv1": "Conv", "conv2": "Conv"})
    verdict = compare_dumps(actual, golden).judge(0.999999)
    text = failure_text(compare_dumps(actual, golden), verdict)
    row = next(line for line in text.splitlines() if re.match(r"\s+1\s+conv2\s", line))
    cell = row.split()[3]
    assert cell != "0.999999" and float(cell) < 0.999999, row


def test_the_diagnosis_step_table_shows_it_too():
    class D:
        metric, threshold = "cosine", 0.999999

    assert _cos(0.9999985, D) == "0.9999985"
    assert _cos(0.98765432, D) == "0.987654"
    D.metric = "max_abs"
    assert _cos(0.9999996, D) == "1.000000"  # (judged by another metric: six places)


def test_a_cosine_at_or_above_the_threshold_keeps_six_places():
    class D:
        metric, threshold = "cosine", 0.99

    assert _cos(0.99, D) == "0.990000" and _cos(0.995, D) == "0.995000"
