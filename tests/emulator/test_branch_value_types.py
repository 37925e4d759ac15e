"""An If kept as one operator whose branches name values alike with different types (H340):
optimum's merged decoders (t5, whisper) compute ``/decoder/Add_output_0`` as int64 in one
branch and float in the other. One name -> type map for all branches gave float16 rounding to
the int64 value, and onnxruntime refused the emulated model (``Concat bound to different
types``): every such decoder crashed in the default mode. Each branch rounds by its own types."""
import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

from pytest_ascend_accuracy.backends.emulator.faults import Fault  # noqa: E402
from pytest_ascend_accuracy.core.modes import DEFAULT  # noqa: E402
from pytest_ascend_accuracy.errors import ConfigError  # noqa: E402

from .conftest import emulate  # noqa: E402

X = np.array([0.3, 0.6, 0.9, 0.45], np.float32)
BIG = 2048.0  # float16's spacing at 2048 is 2: (x + 2048) - 2048 is 0 where x + 2048 rounds


def _out():
    return [h.make_tensor_value_info("out", TP.FLOAT, ["n"])]


def int_branch(tag):
    """``v`` is int64 here: Shape(x) doubled, concatenated, cast to float."""
    return h.make_graph([h.make_node("Shape", ["x"], ["s"], name=f"{tag}_shape"),
                         h.make_node("Add", ["s", "s"], ["v"], name=f"{tag}_iadd"),
                         h.make_node("Concat", ["v", "s"], ["vc"], name=f"{tag}_cat", axis=0),
                         h.make_node("Cast", ["vc"], ["out"], name=f"{tag}_tofloat", to=TP.FLOAT)],
                        tag, [], _out())


def float_branch(tag):
    """``v`` is float here: x + 2048 (float16 rounds it), then - 2048."""
    return h.make_graph([h.make_node("Add", ["x", "big"], ["v"], name=f"{tag}_fadd"),
                         h.make_node("Sub", ["v", "big"], ["out"], name=f"{tag}_sub")],
                        tag, [], _out(), [nh.from_array(np.array(BIG, np.float32), "big")])


def if_model(then_g, else_g, more_inputs=()):
    g = h.make_graph([h.make_node("If", ["cond"], ["out_if"], name="if", then_branch=then_g,
                                  else_branch=else_g),
                      h.make_node("Relu", ["out_if"], ["y"], name="after")], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [4]),
                      h.make_tensor_value_info("cond", TP.BOOL, [])] + list(more_inputs),
                     [h.make_tensor_value_info("y", TP.FLOAT, ["n"])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def run(model, cond, faults=(), **more):
    _, outs = emulate(model, DEFAULT, {"x": X, "cond": np.array(cond), **more}, faults=faults)
    return outs["if"][0]


INT_VALUE = [8.0, 4.0]  # Shape(x) = [4]: v = [8], concatenated with s


def check_float(y):
    # each op of the branch in float16: x + 2048 rounds to 2048, the difference to 0
    # (in float32 it kept x, and only the If's output was rounded)
    np.testing.assert_array_equal(y, np.zeros(4, np.float32))


@pytest.mark.parametrize("int_then", [True, False], ids=["int_then", "float_then"])
def test_each_branch_rounds_by_its_own_value_types(int_then):
    model = (if_model(int_branch("then"), float_branch("else")) if int_then
             else if_model(float_branch("then"), int_branch("else")))
    takes_int = run(model, int_then)  # the parent: onnxruntime refused the model (int_then)
    takes_float = run(model, not int_then)
    assert takes_int.tolist() == INT_VALUE
    check_float(takes_float)  # the parent left it 0.3 .. (float_then: v taken as int64)


def test_a_nested_if_s_branches_each_round_by_their_own_types():
    inner = h.make_graph([h.make_node("If", ["cond2"], ["out"], name="inner",
                                      then_branch=int_branch("ithen"),
                                      else_branch=float_branch("ielse"))],
                         "outer_then", [], _out())
    model = if_model(inner, int_branch("oelse"),
                     [h.make_tensor_value_info("cond2", TP.BOOL, [])])
    assert run(model, True, cond2=np.array(True)).tolist() == INT_VALUE
    check_float(run(model, True, cond2=np.array(False)))
    assert run(model, False, cond2=np.array(False)).tolist() == INT_VALUE


@pytest.mark.parametrize("int_then", [True, False], ids=["int_then", "float_then"])
def test_a_branch_fault_sees_its_own_branch_s_types(int_then):
    model = (if_model(int_branch("then"), float_branch("else")) if int_then
             else if_model(float_branch("then"), int_branch("else")))
    side = "else" if int_then else "then"
    faulty = run(model, not int_then, faults=[Fault.on_op(f"{side}_fadd", "scale", 4.0)])
    assert np.all(faulty > 1000)  # (x + 2048) * 4 - 2048: the fault on float v is active
    other = "then" if int_then else "else"
    with pytest.raises(ConfigError, match="iadd"):  # int64 v: nothing to corrupt
        run(model, int_then, faults=[Fault.on_op(f"{other}_iadd", "scale", 4.0)])
