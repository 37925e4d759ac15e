"""A tensor of one value per sample, ``[N, 1]``, is judged per sample as one element is
(compare/per_sample_scalars.py): Smart Turn's end-of-turn probability for a batch of two clips,
0.0064 and 0.114 golden against 0.0064 and 0.221, passed cosine 0.95 as a 2-vector (0.9996)
where the second clip alone failed by its relative error (audit 35, section 3)."""
import ast
import re

import numpy as np
import pytest

from pytest_ascend_accuracy import compare_dumps
from pytest_ascend_accuracy.compare.per_sample_scalars import MAX_SAMPLES, per_sample
from pytest_ascend_accuracy.dump.model import DumpSet


def result(actual, golden, shape):
    return compare_dumps(
        DumpSet.from_arrays({"prob": [np.asarray(actual, np.float32).reshape(shape)]}),
        DumpSet.from_arrays({"prob": [np.asarray(golden, np.float32).reshape(shape)]}))


GOLDEN, ACTUAL = [0.0064, 0.114], [0.0064, 0.221]


def test_a_batch_fails_what_its_sample_alone_fails_and_the_printed_fix_pasted_passes():
    alone = result(ACTUAL[1:], GOLDEN[1:], (1, 1)).judge(0.95)
    batch = result(ACTUAL, GOLDEN, (2, 1)).judge(0.95)
    assert not alone.passed and not batch.passed
    (failure,) = batch.failures
    assert failure.row.metrics.cosine > 0.999  # what passed it before
    assert failure.reason.startswith(
        "one element: per sample, as [2, 1] holds one value for each of 2 samples (their cosine "
        "is led by the largest and tells little of the others): its samples' largest relative "
        "error 0.9386 is over the 0.3287 that cosine >= 0.95 allows"), failure.reason
    # the same figure and the same fix as the sample alone
    fix = re.search(r"per_op=(\{.*?\}) in a test", failure.reason).group(1)
    assert fix == re.search(r"per_op=(\{.*?\}) in a test", alone.failures[0].reason).group(1)
    assert fix == '{"prob": 0.729138}', fix
    assert result(ACTUAL, GOLDEN, (2, 1)).judge(0.95, per_op=ast.literal_eval(fix)).passed
    assert "(one value per sample: the relative error it allows)" in batch.describe()
    assert "(a one-element tensor: the relative error it allows)" in alone.describe()


@pytest.mark.parametrize("shape", [(2, 1), (2, 1, 1), (2, 1, 1, 1)])
def test_every_axis_but_the_first_of_size_1_is_per_sample(shape):
    assert per_sample(shape)
    assert not result(ACTUAL, GOLDEN, shape).judge(0.95).passed


@pytest.mark.parametrize("shape", [
    (1, 2),  # class logits of one sample
    (2,),  # 1-D: a sample's feature vector as much as a batch's scores
    (1, 2, 1),  # one sample, two positions
    (MAX_SAMPLES + 1, 1),  # a per-row statistic of a flattened [B*T, C] more likely
])
def test_vectors_keep_their_cosine(shape):
    assert not per_sample(shape)
    n = int(np.prod(shape))
    golden = np.full(n, 0.0064, np.float32)
    golden[-1] = 0.114
    actual = golden.copy()
    actual[-1] = 0.221
    if n > 2:  # a vector of many values: cosine 0.95 passes a 0.9% error at each
        golden = np.linspace(1, 2, n).astype(np.float32)
        actual = golden * np.where(np.arange(n) % 2, 1.009, 0.991).astype(np.float32)
    assert result(actual, golden, shape).judge(0.95).passed


def test_samples_below_float16_s_smallest_normal_on_both_sides_pass_as_one_element_does():
    # 1e-5 against 3e-6: relative error 0.7, below 6.1e-5 on both sides: noise, alone and here
    assert result([3e-6], [1e-5], (1, 1)).judge(0.95).passed
    assert result([3e-6, 0.5], [1e-5, 0.5], (2, 1)).judge(0.95).passed
    # a sample above the floor off by the same error still fails
    assert not result([3e-6, 0.15], [1e-5, 0.5], (2, 1)).judge(0.95).passed


def test_an_error_each_sample_may_have_passes():
    assert result([0.0066, 0.13], GOLDEN, (2, 1)).judge(0.95).passed  # 3% and 14% < 32.9%
