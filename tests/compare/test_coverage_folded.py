import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.result import CompareResult
from pytest_ascend_accuracy.dump.model import DumpSet


def test_ops_folded_at_conversion_are_counted_apart_from_unmatched():
    golden = DumpSet.from_arrays({"shape/Constant": [np.array([1, 4])], "Shape_3": [np.array([4])],
                                  "fc": [np.ones(4)], "lost": [np.ones(4)]})
    actual = DumpSet.from_arrays({"fc": [np.ones(4, np.float16)]})
    actual.meta["folded_ops"] = ["shape/Constant", "Shape_3", "not_in_golden"]
    result = compare_dumps(actual, golden)
    cov = result.coverage
    assert cov.folded == ("shape/Constant", "Shape_3") and cov.unmatched_golden == ("lost",)
    assert cov.describe() == ("4 golden ops: 1 compared, 0 inside fused ops, 2 folded at "
                              "conversion, 1 unmatched (lost); 0 actual ops unmatched")
    assert CompareResult.from_json(result.to_json()).coverage == cov
