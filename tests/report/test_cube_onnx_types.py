"""Whether an op runs on the Cube unit is one rule (``core.ascend_optypes.is_cube``): the hints
read it through ``ascend_type`` (an ONNX ``Conv`` is the Cube's ``Conv2D``), but
``high_precision_may_fix`` matched the raw type against the Ascend names, so a failing row typed
``Conv`` or ``MatMul`` (a golden's or an npy dump's naming) got high precision offered, which
still feeds that op float16 (found re-reading the change)."""
import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.core.ascend_optypes import is_cube
from pytest_ascend_accuracy.dump.model import DumpSet, OpRecord, TensorRef
from pytest_ascend_accuracy.report.fp16_fix_ops import high_precision_may_fix


@pytest.mark.parametrize("op_type, cube", [("Conv", True), ("Conv2D", True), ("MatMul", True),
                                           ("Gemm", True), ("Relu", False), ("", False)])
def test_is_cube_reads_onnx_and_ascend_types(op_type, cube):
    assert is_cube(op_type) is cube


@pytest.mark.parametrize("op_type", ["Conv", "Conv2D", "MatMul"])
def test_a_failing_cube_row_gets_no_high_precision_whatever_its_type_spelling(op_type):
    golden = np.full(8, 1e5, np.float32)
    actual = np.full(8, np.inf, np.float16)  # past 65504: float16 overflows

    def dump(values):
        return DumpSet([OpRecord("conv", op_type, order=0,
                                 outputs=(TensorRef.from_array(values),))])
    verdict = compare_dumps(dump(actual), dump(golden)).judge(0.95)
    assert not verdict.passed
    assert high_precision_may_fix(verdict, ["conv"]) is False
