"""The float16-range hint offered "or modes=[HIGH_PRECISION | FUSION_OFF]" where that fails
pasted: PP-OCRv4 det at 96x96 in fusion_off (a fix-files trial), its BatchNorm's variance past
65504, its last op a Sigmoid whose golden values all lie below float16's smallest normal
(|2.4e-07|). keep_dtype of the BatchNorm passed: the Sigmoid stays float16, where the compare
counts such values as equal within float16's allowance (``compare/tiny_values.py``). High
precision failed at the Sigmoid (cosine 0.775262): it outputs float32, judged by its plain
cosine, and values that small differ by the float32 rounding of whatever computes them
(onnxruntime's own Sigmoid there: 7 distinct values, cosine 0.851 with the exact sigmoid of its
logits). The hint now offers high precision only where no such op fails, or passes only by that
allowance, and says why; the same pattern built small here (a BatchNorm with a 1e9 variance, a
1x1 Conv with a bias of -17, a Sigmoid), and the failing variant (an all-zero Sigmoid) as a
unit test."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from test_hints_contract import parse_hint

TEST = '''
from pytest_ascend_accuracy import accuracy, {imports}
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95, modes=[{modes}])
def test_map(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/tiny_map.onnx")
    actual = ascend_model("models/tiny_map.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/tiny_map.onnx", inputs))
'''


def tiny_map(directory, bias: float = -17.0):
    """norm (variance 1e9 on 6 of 8 channels, scale its root) -> head (1x1 Conv, bias ``bias``)
    -> prob (Sigmoid): golden probabilities all below 2.4e-07 at -17 (6e-08 at -19)."""
    r = np.random.default_rng(0)
    var = np.full(8, 1e9, np.float32)
    var[[1, 5]] = 1.0
    inits = [numpy_helper.from_array(a, n) for a, n in (
        (np.sqrt(var).astype(np.float32), "s"), (np.zeros(8, np.float32), "b"),
        (np.zeros(8, np.float32), "m"), (var, "v"),
        ((r.standard_normal((1, 8, 1, 1)) * 0.5).astype(np.float32), "w"),
        (np.array([bias], np.float32), "cb"))]
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["n"], name="norm"),
             helper.make_node("Conv", ["n", "w", "cb"], ["l"], name="head", kernel_shape=[1, 1]),
             helper.make_node("Sigmoid", ["l"], ["y"], name="prob")]
    graph = helper.make_graph(
        nodes, "tiny_map", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 16, 16])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(directory / "tiny_map.onnx"))


def test_high_precision_is_not_offered_beside_a_sigmoid_below_float16s_normal_range(pytester):
    tiny_map(pytester.mkdir("models"))
    pytester.makepyfile(test_map=TEST.format(imports="FUSION_OFF", modes="FUSION_OFF"))
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    text = failed.stdout.str()
    block = text[text.index("next step:"):]
    exprs, _, imports = parse_hint(block)
    assert exprs == ["FUSION_OFF | keep_dtype(['norm'])"], block
    assert "HIGH_PRECISION" not in block, block
    assert ("(not high precision: prob's golden values all lie below float16's smallest normal "
            "(|2.38e-07|) and it passes only by float16's allowance for them (plain cosine "
            "0.") in block, block
    # pasted: the keep_dtype line passes; the high precision the hint gave before fails at prob
    pytester.makepyfile(test_map=TEST.format(imports=f"{imports}, HIGH_PRECISION",
                                             modes=f"{exprs[0]}, HIGH_PRECISION | FUSION_OFF"))
    pasted = pytester.runpytest("-p", "no:cacheprovider")
    pasted.assert_outcomes(passed=1, failed=1)
    pasted.stdout.fnmatch_lines(["FAILED *high_precision+fusion_off*: first failing op prob *"])


def _verdict(prob_golden, prob_actual):
    """A failing ``bn`` (values in range), then ``prob`` with these golden and actual values."""
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.dump.model import DumpSet

    bn = np.linspace(-1, 1, 64).astype(np.float32)
    golden = DumpSet.from_arrays({"bn": [bn], "prob": [prob_golden.astype(np.float32)]})
    actual = DumpSet.from_arrays({"bn": [bn[::-1].astype(np.float16)],
                                  "prob": [prob_actual.astype(np.float16)]})
    result = compare_dumps(actual, golden)
    return result, result.judge(0.95)


def _hint(result, verdict):
    from pytest_ascend_accuracy.compare.fp16_range import RangeFinding, RangeFindings
    from pytest_ascend_accuracy.core.modes import FUSION_OFF
    from pytest_ascend_accuracy.report.hints import next_step

    found = RangeFindings([RangeFinding("bn", "input:4", 9.79e7)])  # bn's variance
    found.checked = 5
    return next_step(verdict, found, FUSION_OFF, rows=result.rows)


def test_an_all_zero_sigmoid_below_float16s_normal_range_takes_high_precision_out():
    """The det's own pattern: its Sigmoid failed too (all zero, the golden below 2.4e-07), past
    the failing ops whose operands are looked at, so no keep_dtype names it."""
    tiny = np.linspace(1e-8, 2.4e-7, 64)
    hint = _hint(*_verdict(tiny, np.zeros(64)))
    assert [m.python_expr() for m in hint.modes] == ["FUSION_OFF | keep_dtype(['bn'])"]
    assert "not high precision: prob's golden values all lie below" in hint.text()
    # values in float16's normal range: high precision stays on offer
    hint = _hint(*_verdict(tiny * 1e3, np.zeros(64)))
    assert [m.python_expr() for m in hint.modes] == ["FUSION_OFF | keep_dtype(['bn'])",
                                                     "HIGH_PRECISION | FUSION_OFF"]
