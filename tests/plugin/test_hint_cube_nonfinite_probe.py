"""NaN/Inf at a Cube op whose golden values stay within float16: the hint's probe was high
precision, which still feeds a Conv float16, so pasted it failed as the default did and read
as "not float16 rounding, a fault" (a fix-files trial: conv weights near 1e3 that ATC folds with
a BatchNorm scale of 100 leave float16, while the golden, unfolded, stays within it; the
diagnosis beside it: "high precision does not pass; keep_dtype {conv} restores"). The probe now
keeps the failing op's own ops in float32 and says what its failing does and does not mean;
pasted, it passes, and high precision still fails."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from test_hints_contract import parse_hint

TEST = '''
from pytest_ascend_accuracy import accuracy, {imports}
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95, modes=[{modes}])
def test_fold(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/conv_bn_fold.onnx")
    actual = ascend_model("models/conv_bn_fold.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/conv_bn_fold.onnx", inputs))
'''


def _conv_bn_fold(directory):
    """x * 0.01 -> Conv (weights ~1e3) -> BatchNormalization (scale 100) -> Relu: the golden
    stays within float16 (its largest value near 1.6e4), the weights ATC folds (1e5) do not."""
    r = np.random.default_rng(1)
    inits = [numpy_helper.from_array(a, n) for a, n in (
        ((r.standard_normal((8, 4, 3, 3)) * 1e3).astype(np.float32), "W"),
        (np.full(8, 100.0, np.float32), "s"), (np.zeros(8, np.float32), "b"),
        (np.zeros(8, np.float32), "m"), (np.ones(8, np.float32), "v"),
        (np.full(1, 1e-2, np.float32), "k"))]
    nodes = [helper.make_node("Mul", ["x", "k"], ["xs"], name="prescale"),
             helper.make_node("Conv", ["xs", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["bn"], name="bn",
                              epsilon=1e-5),
             helper.make_node("Relu", ["bn"], ["y"], name="relu")]
    graph = helper.make_graph(
        nodes, "conv_bn_fold",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(directory / "conv_bn_fold.onnx"))


def test_nan_at_a_cube_op_gets_its_ops_kept_as_the_probe_which_passes_pasted(pytester):
    _conv_bn_fold(pytester.mkdir("models"))
    pytester.makepyfile(test_fold=TEST.format(imports="DEFAULT", modes="DEFAULT"))
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    text = failed.stdout.str()
    block = text[text.index("next step:"):]
    assert block.startswith("next step: values turn NaN/Inf at convrelu though the golden values "
                            "stay within float16"), block
    assert ("convrelu runs on the Cube unit, which takes float16 inputs and weights even in high "
            "precision") in block and "still fails: not this op's float16 inputs" in block, block
    exprs, yamls, imports = parse_hint(block)
    assert exprs == ["keep_dtype(['conv', 'bn', 'relu'])"], block  # not HIGH_PRECISION
    assert yamls == ['{keep_dtype: ["conv", "bn", "relu"]}']
    # pasted: it passes, as promised ("passes: it is [float16]"); the high precision the hint
    # gave before fails as the default does
    pytester.makepyfile(test_fold=TEST.format(imports=f"{imports}, HIGH_PRECISION",
                                              modes=f"{exprs[0]}, HIGH_PRECISION"))
    pasted = pytester.runpytest("-p", "no:cacheprovider")
    pasted.assert_outcomes(passed=1, failed=1)
    pasted.stdout.fnmatch_lines(["FAILED test_fold.py::test_fold?high_precision? *"])


def test_assert_accuracy_names_the_same_probe(tmp_path):
    """``assert_accuracy`` (no plugin) printed "convert in mode HIGH_PRECISION" there too."""
    import pytest

    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.core.modes import keep_dtype
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
    from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy

    _conv_bn_fold(tmp_path)
    model = onnx.load(str(tmp_path / "conv_bn_fold.onnx"))
    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache)
    inputs = make_inputs(model)
    golden = golden_dump(model, inputs, cache=cache)
    actual = backend.run(backend.convert(model), inputs, dump_dir=tmp_path / "d1")
    with pytest.raises(AccuracyFailure) as exc:
        assert_accuracy(actual, golden, 0.95)
    hint = str(exc.value)[str(exc.value).index("next step:"):]
    assert "HIGH_PRECISION" not in hint, hint
    assert "converting in mode keep_dtype(['conv', 'bn', 'relu'])" in hint, hint
    kept = backend.convert(model, keep_dtype(["conv", "bn", "relu"]))
    assert_accuracy(backend.run(kept, inputs, dump_dir=tmp_path / "d2"), golden, 0.95)
