"""Fault injection: deterministic wrong values, active only where the target exists."""
import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.backends.emulator.faults import Fault  # noqa: E402
from pytest_ascend_accuracy.backends.emulator.rewrite import emulate_graph  # noqa: E402
from pytest_ascend_accuracy.errors import ConfigError  # noqa: E402
from pytest_ascend_accuracy.core.modes import BUFFER_OFF, DEFAULT, FUSION_OFF, Mode  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402

from .conftest import cosine, emulate, golden_values  # noqa: E402

MODEL = models.conv_bn_relu()
X = make_inputs(MODEL)
GOLD = golden_values(MODEL, X)


def _cos(out, op, golden_name):
    return cosine(out[op][0], GOLD[golden_name][0])


def test_op_fault_breaks_exactly_that_op_and_follows_it_into_its_fused_group():
    plan, out = emulate(MODEL, FUSION_OFF, X, faults=[Fault.on_op("conv2")])
    assert _cos(out, "relu1", "relu1") > 0.999
    assert 0.5 < _cos(out, "conv2", "conv2") < 0.9
    assert plan.info["faults_active"] == {"op fault on 'conv2': noise (1)": ["conv2"]}
    plan, out = emulate(MODEL, DEFAULT, X, faults=[Fault.on_op("conv2")])
    assert _cos(out, "conv2relu2", "relu2") < 0.95
    assert plan.info["faults_active"] == {"op fault on 'conv2': noise (1)": ["conv2relu2"]}


def test_faults_are_deterministic():
    a = emulate(MODEL, DEFAULT, X, faults=[Fault.on_op("fc")])[1]["fc"][0]
    b = emulate(MODEL, DEFAULT, X, faults=[Fault.on_op("fc")])[1]["fc"][0]
    np.testing.assert_array_equal(a, b)
    c = emulate(MODEL, DEFAULT, X, faults=[Fault.on_op("fc", seed=1)])[1]["fc"][0]
    assert not np.array_equal(a, c)


def test_rule_fault_is_active_only_when_the_rule_fires():
    fault = Fault.on_rule("ConvBatchnormFusionPass")
    plan, out = emulate(MODEL, DEFAULT, X, faults=[fault])
    assert sorted(plan.info["faults_active"][fault.describe()]) == ["conv1relu1", "conv2relu2"]
    assert _cos(out, "conv1relu1", "relu1") < 0.95
    for mode in (FUSION_OFF, Mode(fusion_rules_off=("ConvBatchnormFusionPass",))):
        plan, out = emulate(MODEL, mode, X, faults=[fault])
        assert plan.info["faults_active"] == {} and plan.info["faults_inactive"] == [fault.describe()]
        assert cosine(out["fc"][0], GOLD["fc"][0]) > 0.999


def test_buffer_fault_is_active_only_with_buffer_optimisation_on():
    fault = Fault.on_buffer("gap")
    plan, out = emulate(MODEL, DEFAULT, X, faults=[fault])
    assert plan.info["faults_active"] == {fault.describe(): ["gap"]}
    assert _cos(out, "gap", "gap") < 0.95
    plan, out = emulate(MODEL, BUFFER_OFF, X, faults=[fault])
    assert plan.info["faults_active"] == {}
    assert _cos(out, "gap", "gap") > 0.999


def test_fault_on_a_missing_or_folded_op_is_inactive():
    plan, _ = emulate(MODEL, DEFAULT, X, faults=[Fault.on_op("no_such_op")])
    assert plan.info["faults_inactive"] == ["op fault on 'no_such_op': noise (1)"]
    _, plan = emulate_graph(models.if_model(), DEFAULT, input_shape={"x": (1, 4)}, faults=[Fault.on_op("batch")])
    assert plan.info["faults_active"] == {}


@pytest.mark.parametrize("effect, check", [
    ("scale", lambda out, gold: np.allclose(out, gold * 2, rtol=2e-3, atol=1e-3)),
    ("offset", lambda out, gold: np.allclose(out, gold + 2, rtol=2e-3, atol=2e-3)),
    ("nan", lambda out, gold: np.isnan(out).all()),
])
def test_fault_effects(effect, check):
    _, out = emulate(MODEL, DEFAULT, X, faults=[Fault.on_op("fc", effect=effect, amount=2.0)])
    assert check(out["fc"][0].astype(np.float32), GOLD["fc"][0])


def test_bad_faults_are_config_errors():
    with pytest.raises(ConfigError, match="unknown fault effect 'melt'"):
        Fault.on_op("x", effect="melt")
    with pytest.raises(ConfigError, match="unknown fault kind"):
        Fault("disk", "x")
    with pytest.raises(ConfigError, match="needs a target"):
        Fault.on_op("")


@pytest.mark.parametrize("fault, message", [
    (Fault.on_op("bn11"), r"op fault on 'bn11'.*target 'bn11' is not an op of model.*"
                          r"closest: 'bn1'"),
    (Fault.on_buffer("relu"), r"target 'relu' is not an op of model"),
    # --fault op:bn1:scal: the misspelled effect is read as part of the target; named as both
    (Fault.on_op("bn1:scal"), r"target 'bn1:scal' is not an op of model .*; or a misspelled "
                              r"effect: op:bn1:scale \(effects: noise, scale, offset, nan\)"),
    (Fault.on_rule("ConvBatchnormFusionPas"), r"the emulator imitates no fusion rule of that "
                                              r"name; closest: 'ConvBatchnormFusionPass'"),
    (Fault.on_input("y"), r"has no graph input of that name \(its graph inputs: x\)"),
])
def test_a_fault_that_names_nothing_in_the_model_is_refused(tmp_path, fault, message):
    """A fault whose target the model lacks was never active, and the run passed as if it had
    been injected (a reviewer's diagnose --fault op:head/fcc said '1 fault(s) injected' and
    PASSES)."""
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    with pytest.raises(ConfigError, match=message):
        EmulatorBackend(Cache(tmp_path), faults=[fault]).convert(models.conv_bn_relu())


def test_faults_on_nodes_fused_names_rules_and_inputs_are_accepted(tmp_path):
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    faults = [Fault.on_op("bn1"), Fault.on_op("conv1relu1"), Fault.on_buffer("relu2"),
              Fault.on_rule("ConvBatchnormFusionPass"), Fault.on_input("x")]
    converted = EmulatorBackend(Cache(tmp_path), faults=faults).convert(models.conv_bn_relu())
    assert converted.info["emulator"]["faults_active"]


def test_a_fault_on_a_node_of_an_if_branch_the_emulator_inlines_is_accepted(tmp_path):
    """Branch nodes are not top-level ops, but the emulator runs the inlined branch and a fault
    there was active before targets were checked (review of the check)."""
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    model = models.if_model()
    converted = EmulatorBackend(Cache(tmp_path), faults=[Fault.on_op("pick/then/Mul_0")]
                                ).convert(model, input_shape={"x": [1, 4]})
    assert converted.info["emulator"]["faults_active"]


def test_a_fault_on_a_loop_body_node_is_refused_as_never_injected(tmp_path):
    """graph.inline brings up If branches only: a fault on a Loop body's node was accepted and
    then never active (the run passed as if it had been injected)."""
    from onnx import TensorProto, helper

    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "acc_in"], ["acc_out"], name="body_add"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond")],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2])])
    trip = helper.make_tensor("trip", TensorProto.INT64, [], [2])
    cond = helper.make_tensor("cond", TensorProto.BOOL, [], [True])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trip", "cond", "x"], ["y"], name="loop", body=body)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], initializer=[trip, cond])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    # (since a Loop is refused as ATC refuses it: the target's text says where it is and why)
    with pytest.raises(ConfigError, match="target 'body_add' names an op inside the body of "
                                          "Loop 'loop'; ATC's ONNX parser converts no Loop"):
        EmulatorBackend(Cache(tmp_path), faults=[Fault.on_op("body_add")]).convert(model)
