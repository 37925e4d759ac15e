"""per_op and ignore entries naming an op inside an If's branch, in an @accuracy test: they
said "is not an op of model" (untrue) where the YAML suite and diagnose said where the op is
and what to name (a review); the name they give, pasted, is taken."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "emulator"))
from test_control_flow import X, if_model  # noqa: E402

TEST = """
import numpy as np
from pytest_ascend_accuracy import accuracy

@accuracy(threshold=0.5, {setting})
def test_if(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("ifov.onnx", inputs={{"x": np.load("x.npy")}})
    check_accuracy(ascend_model("ifov.onnx").run(inputs), golden_dump("ifov.onnx", inputs))
"""


@pytest.mark.parametrize("setting, what, pasted", [
    ("per_op={'then/Mul_sq': 0.4}", "per_op entry 'then/Mul_sq'", "per_op={'branch': 0.4}"),
    ("ignore=['then/Mul_a']", "ignore entry 'then/Mul_a'", "ignore=['branch']")])
def test_a_branch_op_named_in_a_test_says_where_it_is(pytester, setting, what, pasted):
    if_model(pytester.path / "ifov.onnx")
    np.save(pytester.path / "x.npy", X)
    pytester.makepyfile(test_if=TEST.format(setting=setting))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines([f"*{what} names an op inside the then_branch of If 'branch', "
                                 "which a run executes and a comparison judges as one op: name "
                                 "'branch'*"])
    pytester.makepyfile(test_if=TEST.format(setting=pasted))
    out = pytester.runpytest("-p", "no:cacheprovider").stdout.str()
    assert "configuration error" not in out  # taken: the If judged by 0.4, or ignored
    assert ("accuracy FAILED" in out) == setting.startswith("per_op")
