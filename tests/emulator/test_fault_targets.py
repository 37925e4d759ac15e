"""Op faults prove a check catches a wrong device only if they really corrupt what they name:
a target inside an If branch must name a real branch node (a misspelled one was accepted and
did nothing), a float16 model's ops are corrupted too (they were reported active and left
exact), two faults on one branch node both apply (the second did nothing), and a fault on an
op with no float output is refused rather than reported active."""
import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper as h, numpy_helper as nh  # noqa: E402

from pytest_ascend_accuracy.backends.emulator.faults import Fault, check_fault_targets  # noqa: E402
from pytest_ascend_accuracy.core.modes import DEFAULT  # noqa: E402
from pytest_ascend_accuracy.errors import ConfigError  # noqa: E402
from pytest_ascend_accuracy.report.assertion import AccuracyFailure  # noqa: E402

from .conftest import emulate  # noqa: E402
from .test_sweep_if_and_types import X, check, if_on_input_value  # noqa: E402

F16 = TensorProto.FLOAT16


def _vi(name, elem=TensorProto.FLOAT):
    return h.make_tensor_value_info(name, elem, [3])


def nested_if(elem=TensorProto.FLOAT):
    """An If on sum(x) > 0 whose then branch holds ``tadd`` and an inner If on max(x) > 2
    (unnamed Mul / Sub): branch nodes named ``tadd``, ``outer/then/If_3/then/Mul_0``, ..."""
    dtype = np.float16 if elem == F16 else np.float32
    inner_then = h.make_graph([h.make_node("Mul", ["t1", "c"], ["it"])], "ithen", [],
                              [_vi("it", elem)])
    inner_else = h.make_graph([h.make_node("Sub", ["t1", "c"], ["ie"])], "ielse", [],
                              [_vi("ie", elem)])
    then_g = h.make_graph([h.make_node("Add", ["r", "c"], ["t1"], name="tadd"),
                           h.make_node("ReduceMax", ["x"], ["mx"], keepdims=0),
                           h.make_node("Greater", ["mx", "two"], ["c2"]),
                           h.make_node("If", ["c2"], ["t2"], then_branch=inner_then,
                                       else_branch=inner_else)], "then", [], [_vi("t2", elem)])
    else_g = h.make_graph([h.make_node("Sub", ["r", "c"], ["e"])], "else", [], [_vi("e", elem)])
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"),
             h.make_node("ReduceSum", ["x"], ["s"], keepdims=0, name="sum"),
             h.make_node("Greater", ["s", "zero"], ["cond"], name="gt"),
             h.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g,
                         name="outer"),
             h.make_node("Mul", ["y", "y"], ["z"], name="square")]
    g = h.make_graph(nodes, "nested", [_vi("x", elem)], [_vi("z", elem)], initializer=[
        nh.from_array(np.array(0, dtype), "zero"), nh.from_array(np.array(2, dtype), "two"),
        nh.from_array(np.array([1, 2, 3], dtype), "c")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("model, target, closest", [
    (if_on_input_value, "branch/then/Add_1", "'branch/then/Add_0'"),
    (nested_if, "outer/then/If_3/then/Mul_1", "'outer/then/If_3/then/Mul_0'"),
    (nested_if, "outer/else/Sub_1", "'outer/else/Sub_0'"),
    (nested_if, "tad", "'tadd'"),  # a named branch node is offered too
])
def test_a_branch_target_that_names_no_node_is_refused_naming_the_closest(
        model, target, closest):
    with pytest.raises(ConfigError, match="is not an op of model") as err:
        check_fault_targets([Fault.on_op(target)], model())
    assert f"closest: {closest}" in str(err.value)


@pytest.mark.parametrize("target", ["tadd", "outer/then/ReduceMax_1",
                                    "outer/then/If_3", "outer/then/If_3/else/Sub_0",
                                    "outer/else/Sub_0", "outer"])
def test_every_real_branch_node_is_a_target(target):
    check_fault_targets([Fault.on_op(target)], nested_if())


def _x(dtype=np.float32):
    return {"x": np.array([1, 2, 3], dtype)}


@pytest.mark.parametrize("target", ["relu", "outer", "tadd", "outer/then/If_3/then/Mul_0",
                                    "square"])
def test_a_fault_on_a_float16_model_changes_what_it_names(target):
    clean = emulate(nested_if(F16), DEFAULT, _x(np.float16))[1]
    plan, out = emulate(nested_if(F16), DEFAULT, _x(np.float16),
                        faults=[Fault.on_op(target, "offset", 1.0)])
    assert plan.info["faults_active"] == {f"op fault on {target!r}: offset (1)":
                                          ["outer" if "/" in target or target == "tadd"
                                           else target]}
    assert out["square"][0].dtype == np.float16
    assert not np.array_equal(out["square"][0], clean["square"][0])


def test_a_fault_on_a_float16_model_fails_the_check(cache):
    model = nested_if(F16)
    check(model, _x(np.float16), cache)  # clean, it passes
    with pytest.raises(AccuracyFailure, match="first failure in graph order: outer"):
        check(model, _x(np.float16), cache, faults=[Fault.on_op("tadd", amount=2.0)])


@pytest.mark.parametrize("elem", [TensorProto.FLOAT, F16])
def test_two_faults_on_one_branch_node_both_apply(elem):
    dtype = np.float16 if elem == F16 else np.float32
    offset = Fault.on_op("tadd", "offset", 1.0)
    scale = Fault.on_op("tadd", "scale", 3.0)
    clean = emulate(nested_if(elem), DEFAULT, _x(dtype))[1]["outer"][0]
    one = emulate(nested_if(elem), DEFAULT, _x(dtype), faults=[offset])[1]["outer"][0]
    two = emulate(nested_if(elem), DEFAULT, _x(dtype), faults=[offset, scale])[1]["outer"][0]
    # x = [1, 2, 3]: tadd = relu(x) + c = 2x, max(x) > 2 so outer = tadd * c
    c = np.array([1, 2, 3], np.float32)
    np.testing.assert_allclose(clean, 2 * c * c)
    np.testing.assert_allclose(one, (2 * c + 1) * c)
    np.testing.assert_allclose(two, (2 * c + 1) * 3 * c)  # in turn: offset, then scale


@pytest.mark.parametrize("target, where", [
    ("gt", "operator 'gt' (Greater)"),
    ("outer/then/Greater_2", "node 'outer/then/Greater_2' (Greater, in a branch of If 'outer')"),
])
def test_a_fault_on_an_op_without_float_output_is_refused(target, where):
    with pytest.raises(ConfigError) as err:
        emulate(nested_if(), DEFAULT, X, faults=[Fault.on_op(target)])
    assert f"{where} has no floating-point output" in str(err.value)
    assert "bool" in str(err.value)
