import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.fp16_range import RangeFinding, golden_inputs_past_fp16
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.failure_text import default_hint


def _golden():
    return DumpSet.from_arrays(
        {"fc": [np.ones(4, np.float32)], "norm": [np.ones(4, np.float32)], "out": [np.ones(4, np.float32)]},
        inputs={"fc": [np.ones(4, np.float32), np.full(4, 3.0, np.float32)],
                "norm": [np.ones(4, np.float32), np.array([1e9, 1.0, -7e4, np.inf], np.float32),
                         np.arange(4)],
                "out": [np.full(4, -1e5, np.float32)]})


def test_operands_past_65504_are_found_in_order_and_limited():
    found = golden_inputs_past_fp16(_golden(), ["fc", "norm", "out"], limit=2)
    assert found == [RangeFinding("norm", "input:1", 1e9)]  # inf ignored: not a range problem
    assert found[0].describe() == "norm input:1 reaches |1e+09|"
    assert golden_inputs_past_fp16(_golden(), ["missing", "out"]) == [RangeFinding("out", "input:0", 1e5)]


def test_hint_points_at_keep_dtype_when_only_an_operand_overflows():
    actual = DumpSet.from_arrays({"fc": [np.ones(4)], "norm": [np.array([1.0, -1, 1, -1])], "out": [np.ones(4)]})
    verdict = compare_dumps(actual, _golden()).judge(0.95)
    assert default_hint(verdict).startswith("no float16 overflow seen")
    hint = default_hint(verdict, golden_inputs_past_fp16(_golden(), ["norm"]))
    assert hint == ("golden operands leave the float16 range (norm input:1 reaches |1e+09|): "
                    "convert in mode HIGH_PRECISION, or keep these ops in float32 in mode "
                    "keep_dtype(['norm']) (from pytest_ascend_accuracy import HIGH_PRECISION, "
                    "keep_dtype)")


def test_the_hint_keeps_both_the_op_with_the_big_operand_and_the_ops_past_the_range():
    """An op fed an operand past 65504 fails first; ops after it fail on their own values. The
    keep_dtype advice names both kinds, in graph order: keeping only the later ones leaves the
    first failing (found pasting the printed advice on overflow() followed by a Mul by 1e5)."""
    from pytest_ascend_accuracy.core.modes import DEFAULT
    from pytest_ascend_accuracy.report.hints import next_step

    golden = DumpSet.from_arrays(
        {"norm": [np.ones(4, np.float32)], "fc": [np.full(4, 7e4, np.float32)]},
        inputs={"norm": [np.ones(4, np.float32), np.full(4, 1e9, np.float32)],
                "fc": [np.ones(4, np.float32)]})
    actual = DumpSet.from_arrays({"norm": [np.array([1.0, -1, 1, -1])],
                                  "fc": [np.full(4, np.inf)]})
    verdict = compare_dumps(actual, golden).judge(0.95)
    ranges = golden_inputs_past_fp16(golden, ["norm", "fc"])
    hint = next_step(verdict, ranges, DEFAULT)
    assert hint.kind == "keep_dtype"
    assert hint.modes[0].python_expr() == "keep_dtype(['norm', 'fc'])"
    assert hint.reason.startswith("golden values leave the float16 range (norm input:1 "
                                  "reaches |1e+09|; fc output:0 reaches |7e+04|), and so do "
                                  "failing values (NaN/Inf in the actual output")
    assert "in mode keep_dtype(['norm', 'fc'])" in default_hint(verdict, ranges)


def _magnitudes(path):
    """The user trial's model: x in [0.5, 1.5) times 1e-30 and back by 1e30 (to_tiny, from_tiny),
    and times 1e30 and back by 1e-30 (to_huge, from_huge)."""
    import onnx
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Mul", ["x", "tiny"], ["t1"], name="to_tiny"),
             helper.make_node("Mul", ["t1", "huge"], ["y1"], name="from_tiny"),
             helper.make_node("Mul", ["x", "huge"], ["t2"], name="to_huge"),
             helper.make_node("Mul", ["t2", "tiny"], ["y2"], name="from_huge")]
    graph = helper.make_graph(
        nodes, "magnitudes", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, [1, 4]) for y in ("y1", "y2")],
        initializer=[helper.make_tensor("tiny", TensorProto.FLOAT, [], [1e-30]),
                     helper.make_tensor("huge", TensorProto.FLOAT, [], [1e30])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def _magnitudes_golden(tmp_path):
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump

    model = _magnitudes(tmp_path / "magnitudes.onnx")
    x = np.random.default_rng(0).uniform(0.5, 1.5, (1, 4)).astype(np.float32)
    return model, golden_dump(model, {"x": x}, cache=Cache(tmp_path / "cache"))


def test_an_operand_flushed_to_zero_names_its_op_and_the_op_that_produced_it(tmp_path):
    """float16 rounds 1e-30 to 0: from_tiny's operand is to_tiny's output, so keeping only
    from_tiny in float32 still hands it 0 (the hint printed that, and pasted it failed again)."""
    from pytest_ascend_accuracy.compare.fp16_range import UNDERFLOW

    _, golden = _magnitudes_golden(tmp_path)
    found = golden_inputs_past_fp16(golden, ["from_tiny", "to_huge", "from_huge"])
    assert [(f.op, f.slot, f.kind) for f in found] == [
        ("from_tiny", "input:0", UNDERFLOW), ("to_tiny", "output:0", UNDERFLOW),
        ("from_tiny", "input:1", "overflow"), ("to_huge", "input:1", "overflow"),
        ("from_huge", "input:0", "overflow"), ("from_huge", "input:1", UNDERFLOW)]
    assert found[0].describe().startswith("from_tiny input:0 underflows to 0 (|1.")
    assert found[2].describe() == "from_tiny input:1 reaches |1e+30|"
    # an op whose own output flushes (Mul by 1e-30: failing once a flushed output fails)
    found = golden_inputs_past_fp16(golden, ["to_tiny"])
    assert [(f.op, f.slot) for f in found] == [("to_tiny", "input:1"), ("to_tiny", "output:0")]
    assert found[0].describe() == "to_tiny input:1 underflows to 0 (|1e-30|)"


def test_a_golden_of_outputs_only_finds_the_producer_through_the_model(tmp_path):
    model, full = _magnitudes_golden(tmp_path)
    outputs_only = DumpSet.from_arrays({op.name: [t.load() for t in op.outputs] for op in full.ops})
    found = golden_inputs_past_fp16(outputs_only, ["from_tiny"], model=model)
    assert [(f.op, f.slot, f.kind, f.op_type) for f in found] == [
        ("from_tiny", "input:0", "underflow", "Mul"), ("to_tiny", "output:0", "underflow", "Mul"),
        ("from_tiny", "input:1", "overflow", "")]


def test_only_values_flushed_to_zero_that_carry_the_tensor_count():
    """Only values float16 flushes to 0 count, and only when they carry the tensor: subnormals
    (6e-8..6.1e-5) stay non-zero, exact zeros are zeros on both sides, and a weight with a few
    1e-9 entries among values near 1 loses nothing a cosine sees; 1e-9 throughout is 0."""
    from pytest_ascend_accuracy.compare.fp16_range import UNDERFLOW

    few = np.ones(64, np.float32)
    few[::8] = 1e-9
    golden = DumpSet.from_arrays(
        {"scale": [np.ones(4, np.float32)]}, op_types={"scale": "Mul"},
        inputs={"scale": [np.full(4, 1e-6, np.float32), np.zeros(4, np.float32), few,
                          np.array([3e-8, 1.0, 0.0, 1e-7], np.float32),
                          np.full(4, 1e-9, np.float32)]})
    found = golden_inputs_past_fp16(golden, ["scale"])
    assert found == [RangeFinding("scale", "input:4", float(np.float32(1e-9)), UNDERFLOW, "Mul")]
    assert found.checked == 5
    assert found[0].describe() == "scale input:4 underflows to 0 (|1e-09|)"


def test_a_tiny_operand_added_to_larger_values_is_no_finding_unless_the_output_flushes_too():
    """Add(variance, 1e-12) (a layer norm's epsilon, as exports write it): flushing the epsilon
    moves the output by 1e-12, nothing; a false finding would turn a fusion hint into a
    keep_dtype hint that cannot fix the failure. Where the output is tiny as well, it counts."""
    eps = np.full(1, 1e-12, np.float32)
    var = np.linspace(0.5, 2.0, 8).astype(np.float32)
    golden = DumpSet.from_arrays({"add_eps": [var + eps]}, op_types={"add_eps": "Add"},
                                 inputs={"add_eps": [var, eps]})
    assert golden_inputs_past_fp16(golden, ["add_eps"]) == []
    untyped = DumpSet.from_arrays({"add_eps": [var + eps]}, inputs={"add_eps": [var, eps]})
    # the type from the compared rows (Ascend spelling here) when the golden has none
    assert golden_inputs_past_fp16(untyped, ["add_eps"], op_types={"add_eps": "AddN"}) == []
    assert [f.slot for f in golden_inputs_past_fp16(untyped, ["add_eps"])] == ["input:1"]
    tiny = DumpSet.from_arrays({"add_eps": [np.full(8, 2e-12, np.float32)]},
                               op_types={"add_eps": "Add"},
                               inputs={"add_eps": [np.full(8, 1e-12, np.float32), eps]})
    assert [f.slot for f in golden_inputs_past_fp16(tiny, ["add_eps"])] == [
        "input:0", "input:1", "output:0"]


def test_high_precision_is_not_offered_when_a_cube_op_produces_the_flushed_operand():
    """allow_fp32_to_fp16 still runs a MatMul in float16: its output flushes to 0 under high
    precision too, also where the MatMul is not among the failing rows (before tiny goldens
    failed as "actual all zero", 0 vs 3e-30 passed as both zero)."""
    from pytest_ascend_accuracy.core.modes import FUSION_OFF
    from pytest_ascend_accuracy.dump.model import OpRecord, TensorRef
    from pytest_ascend_accuracy.report.hints import next_step

    m = np.full(4, 3e-30, np.float32)
    golden = DumpSet([
        OpRecord("project", "MatMul", outputs=(TensorRef.from_array(m, source="pack#project.0"),),
                 order=0),
        OpRecord("rescale", "Mul", order=1,
                 inputs=(TensorRef.from_array(m, "input", 0, source="pack#project.0"),),
                 outputs=(TensorRef.from_array(np.full(4, 3.0, np.float32)),))])
    # project compared equal: high_precision_may_fix, which looks at the failing rows, sees a Mul
    actual = DumpSet.from_arrays({"project": [m], "rescale": [np.zeros(4, np.float32)]})
    verdict = compare_dumps(actual, golden).judge(0.95)
    assert [f.row.op_name for f in verdict.failures] == ["rescale"]
    ranges = golden_inputs_past_fp16(golden, [f.row.golden_name for f in verdict.failures])
    hint = next_step(verdict, ranges, FUSION_OFF)
    assert [m.python_expr() for m in hint.modes] == [
        "FUSION_OFF | keep_dtype(['rescale', 'project'])"]
    assert hint.advice == "keep these ops in float32"
