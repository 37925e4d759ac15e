"""A one-element tensor judged by a cosine threshold is judged by its relative error against
the error that threshold allows (compare/one_element.py): silero-vad's speech probability,
1.8x off, passed threshold=0.99 on cosine (its sign) and the 2x scale guard (H110)."""
import ast
import math
import re

import numpy as np
import pytest

from pytest_ascend_accuracy import compare_dumps
from pytest_ascend_accuracy.compare.one_element import allowed_error, passing_threshold
from pytest_ascend_accuracy.dump.model import DumpSet


def result(actual, golden, extra=None):
    arrays = {"prob": [np.float32(actual).reshape(1, 1)]}
    goldens = {"prob": [np.float32(golden).reshape(1, 1)]}
    if extra is not None:
        arrays["feat"], goldens["feat"] = [extra[0]], [extra[1]]
    return compare_dumps(DumpSet.from_arrays(arrays), DumpSet.from_arrays(goldens))


def test_a_probability_1_8x_off_fails_and_the_printed_threshold_pasted_passes():
    verdict = result(0.00164, 0.00091).judge(0.99)
    assert not verdict.passed
    (failure,) = verdict.failures
    assert failure.reason.startswith("one element: cosine tells only its sign; its relative "
                                     "error 0.8022 is over the 0.1425 that cosine >= 0.99 allows")
    assert "(a one-element tensor: the relative error it allows)" in verdict.describe()
    printed = re.search(r"passes it: per_op=(\{.*\}) in a test \(YAML: per_op: \{prob: "
                        r"0.780031\}\), --per-op (\S+) on the command line$", failure.reason)
    assert printed.group(2) == "prob=0.780031"
    assert result(0.00164, 0.00091).judge(0.99, per_op=ast.literal_eval(printed.group(1))).passed


@pytest.mark.parametrize("actual, golden", [
    (1.05, 1.0),  # 5%: within the 14% cosine 0.99 allows
    (-0.7, -0.75),
    (3e-5, 1e-5),  # below float16's smallest normal on both sides: noise
])
def test_an_error_the_threshold_allows_passes(actual, golden):
    assert result(actual, golden).judge(0.99).passed


def test_tensors_of_many_elements_are_judged_as_before():
    golden = np.linspace(1, 2, 64, dtype=np.float32)
    verdict = result(1.0, 1.0, (golden * 1.8, golden)).judge(0.99, scale_tolerance=2.0)
    assert verdict.passed


def test_the_bound_and_its_inverse():
    assert allowed_error(0.99) == pytest.approx(0.14249, abs=1e-5)
    assert allowed_error(0.95) == pytest.approx(0.32868, abs=1e-5)
    assert allowed_error(0.0) == math.inf and allowed_error(1.0) == 0.0
    for error in (1e-4, 0.01, 0.3, 0.8022, 5.0):
        assert allowed_error(passing_threshold(error)) >= error


def test_the_verdict_line_says_how_many_one_element_failures_beside_others():
    """T3: "fail cosine >= 0.95 (a one-element tensor: the relative error it allows); first
    failure in graph order: ..." where the first failure had 96,000 elements and one-element
    failures came later: the bracket counts them."""
    feat = (np.ones((1, 8), np.float32), -np.ones((1, 8), np.float32))
    verdict = result(0.00164, 0.00091, extra=feat).judge(0.99)
    assert len(verdict.failures) == 2
    assert ("fail cosine >= 0.99 (1 of them one-element, by the relative error it allows); "
            "first failure in graph order: ") in verdict.describe(), verdict.describe()
