"""Our metric values against msaccucmp's own numpy functions (PyPI ``mindstudio-probe``,
``msprobe/msaccucmp/algorithm_manager/builtin_algorithm/alg_*.py``) on random data.

msaccucmp formats every value with ``'{:.6f}'``; we feed it float64 copies of the same data
(its own float32 cast would add its own rounding) and require agreement to the printed digit.
Skipped, with the reason, when the package is not installed.
"""
import importlib
import os
import sys
import warnings

import numpy as np
import pytest

from pytest_ascend_accuracy.compare.metrics import METRIC_COLUMNS, compute_metrics


def _msaccucmp():
    try:
        import msprobe
    except ImportError:
        pytest.skip("mindstudio-probe is not installed (pip install mindstudio-probe): cannot "
                    "compare against msaccucmp's own metric functions")
    root = os.path.join(os.path.dirname(msprobe.__file__), "msaccucmp")
    if not os.path.isdir(os.path.join(root, "algorithm_manager", "builtin_algorithm")):
        pytest.skip(f"msaccucmp algorithms not found under {root}")
    if root not in sys.path:
        sys.path.insert(0, root)  # its modules import each other as top-level packages
    from algorithm_manager.algorithm_parameter import AlgorithmParameter
    from cmp_utils import utils_type
    funcs = {k: importlib.import_module(f"algorithm_manager.builtin_algorithm.alg_{name}").compare
             for k, name in METRIC_COLUMNS.items()}
    return funcs, AlgorithmParameter, utils_type


def _reference(x, y, shape):
    funcs, AlgorithmParameter, utils_type = _msaccucmp()
    args = AlgorithmParameter()
    args.shape_type = (utils_type.ShapeType.Scalar if sum(shape) == len(shape)
                       else utils_type.ShapeType.Tensor)
    args.my_output_dump_file, args.ground_truth_dump_file = "actual", "golden"
    out = {}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for key, fn in funcs.items():
            out[key] = fn(x.astype(np.float64).ravel(), y.astype(np.float64).ravel(), args)[0]
    return out


def _agree(ours, theirs: str, key: str):
    if theirs == "NaN":
        return np.isnan(ours)
    value = float(theirs)
    tol = 1.5e-6 + 2e-6 * abs(value)  # printed to 6 decimals, our fast path is float32-chunked
    return abs(ours - value) <= tol


CASES = {
    "fp16 vs fp32 noise": lambda r: (lambda y: ((y + 0.01 * r.standard_normal(y.shape)).astype(np.float16),
                                                y))(r.standard_normal((4, 3000)).astype(np.float32)),
    "relu zeros": lambda r: (lambda y: ((y * (1 + 0.02 * r.standard_normal(y.shape))).astype(np.float16),
                                        y))(np.maximum(r.standard_normal(50_000), 0).astype(np.float32)),
    "large offset": lambda r: (lambda y: ((y + 0.1 * r.standard_normal(y.shape)).astype(np.float32),
                                          y))((500 + r.standard_normal(20_000)).astype(np.float32)),
    "float64 both": lambda r: (r.standard_normal(777), r.standard_normal(777)),
    "constant golden": lambda r: (r.standard_normal(100).astype(np.float32), np.full(100, 3.0, np.float32)),
    "negated": lambda r: (lambda y: (-y, y))(r.standard_normal(1000).astype(np.float32)),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("seed", [0, 1])
def test_metrics_agree_with_msaccucmp(case, seed):
    x, y = CASES[case](np.random.default_rng(seed))
    ref = _reference(x, y, y.shape)
    ours = compute_metrics(x, y, chunk_size=4096)
    for key in METRIC_COLUMNS:
        if key == "std":
            assert ours.std == ref["std"], (case, key)
        else:
            assert _agree(getattr(ours, key), ref[key], key), (case, key, getattr(ours, key), ref[key])


def test_all_zero_pair_and_scalar_agree_with_msaccucmp():
    ref = _reference(np.zeros(8), np.zeros(8), (8,))
    ours = compute_metrics(np.zeros(8, np.float16), np.zeros(8, np.float32))
    assert ref["cosine"] == "1.0" and ours.cosine == 1.0 and ours.all_zero
    ref = _reference(np.array([[2.0]]), np.array([[5.0]]), (1, 1))
    ours = compute_metrics(np.array([[2.0]]), np.array([[5.0]]))
    assert float(ref["cosine"]) == ours.cosine == 1.0
    assert float(ref["rel_l2"]) == pytest.approx(ours.rel_l2, abs=1e-6)


def test_deliberate_differences_from_msaccucmp():
    # golden all zero, actual not: msaccucmp says rel-L2 0.0 (a silent pass); we say inf
    ref = _reference(np.ones(4), np.zeros(4), (4,))
    assert ref["rel_l2"] == "0.000000"
    assert compute_metrics(np.ones(4), np.zeros(4)).rel_l2 == float("inf")
    # NaN propagates in msaccucmp; we compare the finite rest and count the mismatch
    x = np.array([1.0, np.nan, 3.0])
    ref = _reference(x, np.array([1.0, 2.0, 3.0]), (3,))
    assert ref["cosine"] == "nan"
    ours = compute_metrics(x, np.array([1.0, 2.0, 3.0]))
    assert ours.cosine == pytest.approx(1.0) and ours.mismatch == 1
