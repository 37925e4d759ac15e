"""``diagnose`` where a mode helps without fixing an op (a review, H69): a faulty fusion rule
whose error reaches the buffer fault's op (buffer off changes that op, which still fails), both
faults on one fused op (each mode lifts its cosine, neither fixes it), and float16 rounding
before a buffer fault (high precision moves the first failure to the fault). Each said "NOT
RESTORED ... check the operator implementations" where ``buffer_off+fusion_off``, or buffer off
with two ops kept in float32, passed pasted. A mode helps now where it changes the run (ops that
differ from the default run) or lifts the value at the first failure: the two are tried
together, and steps 3 and 4 are tried under a step 2 that got further; each fix pasted passes."""
import re

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from pytest_ascend_accuracy.backends.emulator import EmulatorBackend, Fault  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.core.modes import Mode  # noqa: E402
from pytest_ascend_accuracy.triage.flow import diagnose  # noqa: E402

from test_triage_combos import cbr, diagnosed_and_pasted  # noqa: E402

RULE = "GraphFusion:ConvBatchnormFusionPass"
BUFFER_OFF_KEEP = Mode(buffer_optimize="off_optimize", keep_dtype=("shift_down", "shift_up"))


def _model(nodes, name, inits, x_shape, y_shape):
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
        [numpy_helper.from_array(np.asarray(v, np.float32), n) for n, v in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def cbr_prop():
    """Conv + BatchNorm + Relu flattened straight into a Gemm ``head`` (no pooling: the error
    of a faulty ConvBatchnormFusionPass reaches ``head``)."""
    rng = np.random.default_rng(3)
    inits = [("cw", rng.standard_normal((8, 3, 3, 3)) * 0.3), ("cb", rng.standard_normal(8) * 0.1),
             ("s", rng.uniform(0.5, 1.5, 8)), ("b", rng.standard_normal(8) * 0.1),
             ("m", rng.standard_normal(8) * 0.1), ("v", rng.uniform(0.5, 1.5, 8)),
             ("fw", rng.standard_normal((10, 512)) * 0.1), ("fb", rng.standard_normal(10) * 0.1)]
    nodes = [helper.make_node("Conv", ["x", "cw", "cb"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["bn"],
                              name="bn1"),
             helper.make_node("Relu", ["bn"], ["r"], name="relu1"),
             helper.make_node("Flatten", ["r"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], name="head", transB=1)]
    return _model(nodes, "cbr_prop", inits, [1, 3, 8, 8], [1, 10])


def buf_round():
    """An MLP with ``+1500 -1500`` (float16 rounding) before ``fc2``."""
    rng = np.random.default_rng(7)
    inits = [("w1", rng.standard_normal((16, 16)) * 0.3), ("off", [1500.0]),
             ("w2", rng.standard_normal((16, 8)))]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h1"], name="fc1"),
             helper.make_node("Relu", ["h1"], ["h2"], name="act"),
             helper.make_node("Add", ["h2", "off"], ["h3"], name="shift_up"),
             helper.make_node("Sub", ["h3", "off"], ["h4"], name="shift_down"),
             helper.make_node("MatMul", ["h4", "w2"], ["y"], name="fc2")]
    return _model(nodes, "buf_round", inits, [1, 16], [1, 8])


PROP = [Fault.on_rule("ConvBatchnormFusionPass"), Fault.on_buffer("head")]
ONE_OP = [Fault.on_rule("ConvBatchnormFusionPass"), Fault.on_buffer("relu1")]


@pytest.fixture
def cache(tmp_path):
    return Cache(tmp_path / "cache")


def run(model, cache, faults, **kw):
    return diagnose(model, backend=EmulatorBackend(cache, faults=faults), cache=cache, **kw)


def test_a_buffer_fault_the_rule_faults_error_reaches_is_fixed_with_fusion_off(cache):
    d = run(cbr_prop(), cache, PROP)
    assert d.restored_by == "buffer_off+fusion_rules", d.verdict
    assert d.step("buffer_off").first_failure == "conv1relu1"  # head changes, still fails
    assert d.step("buffer_off").differing == ("head",)
    assert d.step("buffer_off+fusion_off").passed is True
    assert d.fix_mode == Mode(buffer_optimize="off_optimize", fusion_rules_off=(RULE,))
    assert d.verdict.startswith("default fails at op conv1relu1; buffer_off changes op(s) head "
                                "and fails at op conv1relu1; fusion_off fixes conv1relu1, flat "
                                "and fails at op head; the two together restore cosine "), \
        d.verdict
    assert d.conversions <= 10 and not d.budget_exhausted, d.conversions
    assert run(cbr_prop(), cache, PROP, mode=d.fix_mode).restored_by == "default"
    assert run(cbr_prop(), cache, PROP, mode="buffer_off+fusion_off").restored_by == "default"


def test_both_faults_on_one_fused_op_each_mode_lifting_it_are_fixed_together(cache):
    d = run(cbr(), cache, ONE_OP)
    assert d.restored_by == "buffer_off+fusion_rules", d.verdict
    assert d.step("buffer_off").first_failure == "conv1relu1"
    assert d.step("fusion_off").first_failure == "relu1"
    assert re.match(r"default fails at op conv1relu1; buffer_off lifts cosine at op conv1relu1 "
                    r"from 0\.\d+ to 0\.\d+ and fails at op conv1relu1; fusion_off lifts "
                    r"cosine at op relu1 from 0\.\d+ to 0\.\d+ and fails at op relu1; the two "
                    r"together restore",
                    d.verdict), d.verdict
    assert d.fix_mode == Mode(buffer_optimize="off_optimize", fusion_rules_off=(RULE,))
    assert run(cbr(), cache, ONE_OP, mode=d.fix_mode).restored_by == "default"


def test_rounding_before_a_buffer_fault_keeps_two_ops_with_buffer_off(cache):
    faults = [Fault.on_buffer("fc2")]
    d = run(buf_round(), cache, faults)
    assert d.restored_by == "buffer_off+keep_dtype", d.verdict
    assert d.step("high_precision").first_failure == "fc2"
    assert d.fix_mode == BUFFER_OFF_KEEP
    assert d.verdict.startswith("default fails at op shift_down; buffer_off changes op(s) fc2 and "
                                "fails at op shift_down; high precision passes; keep_dtype "
                                "{shift_down, shift_up} restores cosine "), d.verdict
    assert d.conversions <= 16 and not d.budget_exhausted, d.conversions
    assert run(buf_round(), cache, faults, mode=d.fix_mode).restored_by == "default"
    assert run(buf_round(), cache, faults,
               mode="buffer_off+high_precision").restored_by == "default"


def test_steps_3_and_4_are_tried_under_high_precision_where_it_got_further(cache):
    """A buffer fault too small to change the default run past the threshold, under a tighter
    per-op threshold: buffer off helps nothing there; high precision fails at ``fc2`` instead
    of ``shift_down``, and buffer off under it passes."""
    faults, per_op = [Fault.on_buffer("fc2", amount=0.4)], {"fc2": 0.99}
    d = run(buf_round(), cache, faults, per_op=per_op)
    assert d.step("buffer_off").differing == () and d.step("buffer_off+fusion_off") is None
    assert d.restored_by == "buffer_off+keep_dtype", d.verdict
    assert d.verdict.startswith("default fails at op shift_down; high_precision fails at op fc2 "
                                "instead (cosine 0.972295 vs 0.99); buffer_off fixes it; high "
                                "precision passes; keep_dtype {shift_down, shift_up} restores "), \
        d.verdict
    hp_buffer = [s for s in d.steps if s.mode == "high_precision+buffer_off"]
    assert len(hp_buffer) == 1 and hp_buffer[0].passed and hp_buffer[0].conversions == 1
    assert sum(s.conversions for s in d.steps) == d.conversions
    assert d.fix_mode == BUFFER_OFF_KEEP
    assert run(buf_round(), cache, faults, per_op=per_op,
               mode=d.fix_mode).restored_by == "default"


def test_a_model_no_mode_fixes_says_which_combinations_it_tried(cache):
    faults = [Fault.on_op("fc2", effect="scale", amount=-1.0)]
    d = run(buf_round(), cache, faults)
    assert d.restored_by is None
    assert d.step("high_precision").first_failure == "fc2"  # further: steps 3 and 4 under it
    assert [s.step for s in d.steps if "+" in s.step] == [
        "high_precision+buffer_off", "high_precision+fusion_off",
        "high_precision+buffer_off+fusion_off", "buffer_off+fusion_off"]
    assert ("no mode tried passes, alone or in the combinations tried (high_precision+buffer_off, "
            "high_precision+fusion_off, high_precision+buffer_off+fusion_off, "
            "buffer_off+fusion_off) (the diagnosis's steps") in d.verdict, d.verdict
    assert d.verdict.endswith("check the operator implementations against the reference")


@pytest.mark.parametrize("make, fault_args, files", [
    (cbr_prop, ["--fault", "rule:ConvBatchnormFusionPass", "--fault", "buffer:head"],
     ["--precision_mode=force_fp16", "--buffer_optimize=off_optimize",
      "--fusion_switch_file=fix/fusion_switch.cfg"]),
    (cbr, ["--fault", "rule:ConvBatchnormFusionPass", "--fault", "buffer:relu1"],
     ["--precision_mode=force_fp16", "--buffer_optimize=off_optimize",
      "--fusion_switch_file=fix/fusion_switch.cfg"]),
    (buf_round, ["--fault", "buffer:fc2"],
     ["--precision_mode=force_fp16", "--keep_dtype=fix/keep_dtype.cfg",
      "--buffer_optimize=off_optimize"]),
])
def test_the_cli_prints_restored_and_its_fix_passes_pasted(tmp_path, capsys, monkeypatch, make,
                                                           fault_args, files):
    diagnosed_and_pasted(tmp_path, capsys, monkeypatch, make(), fault_args, files)


def bnvar():
    """``cbr_prop`` with a BatchNorm variance past float16's range (harmless folded into the
    Conv, infinite unfused)."""
    model = cbr_prop()
    rng = np.random.default_rng(5)
    for init in model.graph.initializer:
        if init.name == "v":
            init.CopyFrom(numpy_helper.from_array(
                (rng.uniform(0.5, 1.5, 8) * 1e5).astype(np.float32), "v"))
        elif init.name == "s":
            init.CopyFrom(numpy_helper.from_array(
                (rng.uniform(0.5, 1.5, 8) * 400).astype(np.float32), "s"))
    return model


@pytest.mark.parametrize("model, faults, fix", [
    # a review: fusion off fails earlier (at bn1, out of range) and buffer off only changes
    # head: neither "helped", so the pair, which with bn1 kept passes, was never tried
    (bnvar, PROP, Mode(buffer_optimize="off_optimize", fusion_rules_off=(RULE,),
                       keep_dtype=("bn1",))),
    # a review: a small rule fault beside a big buffer fault on one fused op: fusion off lifts
    # it 8.5% of the way, under the quarter a mode must lift to "help"
    (cbr_prop, [Fault.on_rule("ConvBatchnormFusionPass", amount=0.5),
                Fault.on_buffer("relu1", amount=3.0)],
     Mode(buffer_optimize="off_optimize", fusion_rules_off=(RULE,))),
], ids=["range-at-bn1", "small-rule-big-buffer"])
def test_the_pair_is_tried_last_whenever_each_alone_failed(cache, model, faults, fix):
    d = run(model(), cache, faults)
    assert d.step("buffer_off+fusion_off") is not None, d.verdict
    assert d.fix_mode == fix, d.verdict
    assert run(model(), cache, faults, mode=d.fix_mode).restored_by == "default"


def rrb():
    """``cbr_prop`` behind ``+1500 -1500`` on its input (float16 rounding before the fused
    Conv + BatchNorm + Relu)."""
    model = cbr_prop()
    nodes = [helper.make_node("Add", ["x", "off"], ["x1"], name="shift_up"),
             helper.make_node("Sub", ["x1", "off"], ["x2"], name="shift_down")]
    for node in model.graph.node:
        node.input[:] = ["x2" if i == "x" else i for i in node.input]
    rest = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(nodes + rest)
    model.graph.initializer.append(numpy_helper.from_array(np.array([1500.0], np.float32),
                                                           "off"))
    return model


def test_the_pair_is_tried_under_a_step_2_that_got_further_whatever_each_alone_did(cache):
    # a review: high precision got past the rounding to conv1relu1, where fusion off lifted the
    # small rule fault under the quarter that counts, so the pair under step 2 was skipped
    faults = [Fault.on_rule("ConvBatchnormFusionPass", amount=0.5),
              Fault.on_buffer("relu1", amount=3.0)]
    d = run(rrb(), cache, faults)
    assert d.fix_mode == Mode(buffer_optimize="off_optimize", fusion_rules_off=(RULE,),
                              keep_dtype=("shift_down", "shift_up")), d.verdict
    assert run(rrb(), cache, faults, mode=d.fix_mode).restored_by == "default"


def test_an_op_fault_in_a_fused_ops_member_costs_the_pair_alone(cache):
    # a review: the unfused member of the failing fused op read as "further", and step 2 ran
    # under the pair (two conversions more) for an operator's own fault
    d = run(cbr_prop(), cache, [Fault.on_op("relu1", effect="scale", amount=-1.0)])
    assert d.restored_by is None
    assert d.step("buffer_off+fusion_off").first_failure == "relu1"
    assert not [s.step for s in d.steps if s.step.startswith("buffer_off+fusion_off+")]
