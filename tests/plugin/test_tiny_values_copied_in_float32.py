"""High precision failed a model the default passed, at an op that only copies values (T1's
random-init ConvNeXt: its layer scale's float16 Mul passed by float16's allowance for values
below its smallest normal, the float32 Transpose after it failed at cosine 0.333783 with the
same values). Built small: two float16 MatMuls (Cube ops: high precision keeps them float16)
whose output lies on float16's subnormal grid, then a Transpose, which high precision runs in
float32. On the parent the high-precision check failed at ``swap`` (cosine 0.976117, float32);
both pass now, as the float16 ops that made the values do
(``compare.tiny_values.float16_values``)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TEST = '''
from pytest_ascend_accuracy import accuracy, HIGH_PRECISION
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.99, modes=["default", HIGH_PRECISION])
def test_copy(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/tiny_copy.onnx")
    actual = ascend_model("models/tiny_copy.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/tiny_copy.onnx", inputs))
'''


def tiny_copy(directory):
    """proj (MatMul, weights ~1e-4: values ~2e-4) -> scale_mm (MatMul, weights ~1e-4: values
    ~1e-7, on float16's subnormal grid) -> swap (Transpose)."""
    r = np.random.default_rng(0)
    inits = [numpy_helper.from_array((r.standard_normal((16, 16)) * 1e-4).astype(np.float32), n)
             for n in ("w1", "w2")]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="proj"),
             helper.make_node("MatMul", ["h", "w2"], ["m"], name="scale_mm"),
             helper.make_node("Transpose", ["m"], ["y"], name="swap", perm=[0, 2, 1])]
    graph = helper.make_graph(
        nodes, "tiny_copy", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 32])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(directory / "tiny_copy.onnx"))


def test_high_precision_passes_a_float32_copy_of_values_float16_made(pytester):
    tiny_copy(pytester.mkdir("models"))
    pytester.makepyfile(test_copy=TEST)
    result = pytester.runpytest("-p", "no:cacheprovider",
                                "--accuracy-report", str(pytester.path / "report"))
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["  tiny_copy  passed   passed"])
    # the copy is float32 under high precision, and passes by the float16 op's rule
    import csv

    rows = {}
    for path in sorted((pytester.path / "report").rglob("compare.csv")):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                rows.setdefault(row["NPUDump"], []).append(row)
    assert any("float32 values that float16 holds exactly" in str(row)
               for row in rows.get("swap", [])), rows.keys()
