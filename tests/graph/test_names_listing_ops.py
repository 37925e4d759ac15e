"""An op name that is nothing like any of the model's lists some of the model's ops, as a glob
matching nothing does ("its ops: ..."): a CI trial's ``ignore=["zzz"]`` and
``keep_dtype(["zzz"])`` read "... 'zzz' is not an op of model 'passing_mlp'" and no name at
all, so the user could not see how the model spells its ops. A name close to one still gets
only the closest names; the list is short (8 names, then ``...``)."""
import pytest

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph.op_catalogue import ModelOps, check_setting_names, model_ops
from pytest_ascend_accuracy.testing import models as tiny_models

MLP_OPS = ("'fc1/MatMul', 'fc1/Add', 'relu1', 'fc2/MatMul', 'fc2/Add', 'relu2', 'fc3/MatMul', "
           "'fc3/Add'")


def _refusal(call) -> str:
    with pytest.raises(ConfigError) as err:
        call()
    return str(err.value)


def test_keep_dtype_entry_like_no_op_lists_the_models_ops():
    ops = model_ops(tiny_models.passing_mlp())
    text = _refusal(lambda: ops.check_keep_dtype(["zzz"], "t.py::test"))
    assert text == ("t.py::test: keep_dtype entry 'zzz' is not an op of model 'passing_mlp'; "
                    f"its ops: {MLP_OPS}")


@pytest.mark.parametrize("what", ["per_op", "ignore"])
def test_per_op_and_ignore_entries_like_no_op_list_some_ops(what):
    names = [f"op{k}" for k in range(12)] + ["op0:output:0"]  # tensors are not offered
    per_op, ignore = (["zzz"], []) if what == "per_op" else ([], ["zzz"])
    text = _refusal(lambda: check_setting_names(per_op, ignore, names, "the dumps", "judge"))
    assert text == (f"judge: {what} entry 'zzz' is not an op of the dumps; their ops: "
                    + ", ".join(f"'op{k}'" for k in range(8)) + ", ...")


def test_a_close_name_gets_the_closest_names_only():
    ops = ModelOps("m", ("norm", "relu"), ("LayerNormalization", "Relu"))
    text = _refusal(lambda: ops.check_names(["nrom"], "ignore entry", None))
    assert text == "ignore entry 'nrom' is not an op of model 'm'; closest: 'norm'"


def test_the_listing_leaves_out_constants():
    """Audit 36 A: a Paddle2ONNX model's 878 unnamed weight Constants (named ``Constant_N``
    here) filled the list, and each, pasted, was refused as folded at conversion."""
    names = tuple(f"Constant_{k}" for k in range(10)) + ("p2o.Conv.0", "p2o.Mul.4")
    ops = ModelOps("layout", names, ("Constant",) * 10 + ("Conv", "Mul"))
    text = _refusal(lambda: ops.check_keep_dtype(["zzz"], "t.py::test"))
    assert text.endswith("is not an op of model 'layout'; its ops: 'p2o.Conv.0', 'p2o.Mul.4'"), text


def test_the_closest_names_leave_out_constants_too():
    """Review RM: 'Constant_1x' was offered 'Constant_1', 'Constant_9', ... (folded weights)."""
    names = tuple(f"Constant_{k}" for k in range(10)) + ("Conv_1", "Mul_4")
    ops = ModelOps("layout", names, ("Constant",) * 10 + ("Conv", "Mul"))
    text = _refusal(lambda: ops.check_keep_dtype(["Constant_1x"], "t.py::test"))
    assert "'Constant_1'" not in text and "Conv_1" in text, text
