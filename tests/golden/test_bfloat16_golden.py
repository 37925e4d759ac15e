"""A model with a bfloat16 intermediate (x -> Cast(bf16) -> Cast(float) -> Relu): onnxruntime's
Python API returns no bfloat16 array, yet the golden, the emulated run and the check work. The
golden's ``.npy`` files hold such a tensor as its float32 values (exact; ``.npy`` has no
bfloat16), the emulator's Ascend dump as DT_BF16."""
import csv

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
ml_dtypes = pytest.importorskip("ml_dtypes")

from onnx import TensorProto, helper  # noqa: E402

from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402

X = np.array([1.3, -2.7, 3.1], np.float32)
BF = X.astype(ml_dtypes.bfloat16).astype(np.float32)  # what the bfloat16 tensor holds


def bf16_model():
    nodes = [helper.make_node("Cast", ["x"], ["b"], name="to_bf16", to=TensorProto.BFLOAT16),
             helper.make_node("Cast", ["b"], ["f"], name="to_f32", to=TensorProto.FLOAT),
             helper.make_node("Relu", ["f"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "bf16",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_the_golden_holds_a_bfloat16_intermediate_as_its_float32_values(tmp_path):
    dump = golden_dump(bf16_model(), {"x": X}, cache=Cache(tmp_path / "cache"))
    assert dump.names == ["to_bf16", "to_f32", "relu"]
    out = dump["to_bf16"].output(0)
    assert out.dtype == "float32"
    np.testing.assert_array_equal(out.load(), BF)
    np.testing.assert_array_equal(dump["to_f32"].inputs[0].load(), BF)  # the same file
    np.testing.assert_array_equal(dump["relu"].output(0).load(), np.maximum(BF, 0))


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_npy_files_hold_low_floats_as_float32(tmp_path, name):
    from pytest_ascend_accuracy.dump.dtypes import npy_values

    low = X.astype(getattr(ml_dtypes, name))
    assert npy_values(low).dtype == np.float32
    np.testing.assert_array_equal(npy_values(low), low.astype(np.float32))
    with NpyDumpWriter(tmp_path / "npy") as writer:
        (path,) = writer.write_op("op", [], [low])
    loaded = np.load(path)
    assert loaded.dtype == np.float32
    np.testing.assert_array_equal(loaded, low.astype(np.float32))


def test_npy_values_leaves_numpy_arrays_alone():
    from pytest_ascend_accuracy.dump.dtypes import npy_values

    for arr in (X, X.astype(np.float16), np.arange(3, dtype=np.uint16), np.zeros(2, "V2")):
        assert npy_values(arr) is arr


def test_check_accuracy_passes_on_a_bfloat16_model(pytester):
    onnx.save(bf16_model(), str(pytester.path / "bf16.onnx"))
    pytester.makepyfile(test_bf16="""
import numpy as np
from pytest_ascend_accuracy import accuracy

@accuracy(threshold=0.99)
def test_bf16(ascend_model, golden_dump, check_accuracy):
    inputs = {"x": np.array([1.3, -2.7, 3.1], dtype=np.float32)}
    check_accuracy(ascend_model("bf16.onnx").run(inputs, dump=True),
                   golden_dump("bf16.onnx", inputs))
""")
    result = pytester.runpytest("--accuracy-report=reports")
    result.assert_outcomes(passed=1)
    (report,) = (pytester.path / "reports").glob("*/compare.csv")
    with open(report, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    row = next(r for r in rows[1:] if r[header.index("NPUDump")] == "to_bf16")
    assert row[header.index("DataType")] == "bfloat16"  # the NPU side's (the first such column)
    assert row[header.index("GroundTruth")] == "to_bf16"
    assert float(row[header.index("CosineSimilarity")]) == pytest.approx(1.0)
