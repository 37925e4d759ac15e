"""A YAML entry of ``model:`` and ``dataset:`` alone, of a model that leaves a size open, checks
its accuracy item at the first sample's shape (audit 33, PP-OCRv6 rec ``x [N, 3, 48, W]``: the
accuracy item failed with "nothing gives their sizes" though every sample holds them, and its
advice, 1 for each open dimension, pasted checked a text line 1 pixel wide)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

pytest.importorskip("onnxruntime")

SUITE = """
models:
  - name: lines
    model: lines.onnx
    dataset: {samples: samples, metric: agreement, max_drop: 0.01}
"""


def lines_model(path):
    """y = relu(x * w) over [N, 3, W]: batch and width open."""
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "w"], ["m"], name="scale"),
         helper.make_node("Relu", ["m"], ["y"], name="relu")], "lines",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3, "W"])],
        [numpy_helper.from_array(np.full((1, 3, 1), 0.5, np.float32), "w")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def test_the_accuracy_item_takes_the_first_samples_shape(pytester):
    lines_model(pytester.path / "lines.onnx")
    (pytester.path / "samples").mkdir()
    rng = np.random.default_rng(0)
    for k in range(3):
        np.savez(pytester.path / "samples" / f"{k:03d}.npz",
                 x=rng.standard_normal((1, 3, 40)).astype(np.float32))
    pytester.makefile(".yaml", accuracy_lines=SUITE)
    result = pytester.runpytest("-p", "no:randomly", "-rA")
    result.assert_outcomes(passed=2)
    assert "nothing gives their sizes" not in result.stdout.str()


def test_an_entry_that_gives_its_shape_keeps_it(pytester):
    lines_model(pytester.path / "lines.onnx")
    (pytester.path / "samples").mkdir()
    np.savez(pytester.path / "samples" / "000.npz", x=np.ones((1, 3, 40), np.float32))
    pytester.makefile(".yaml", accuracy_lines=SUITE.replace(
        "    dataset:", "    input_shape: {x: [2, 3, 8]}\n    dataset:"))
    from pytest_ascend_accuracy.plugin.yaml_dataset_shape import first_sample_shape

    assert first_sample_shape(str(pytester.path / "lines.onnx"), {"samples": str(
        pytester.path / "samples")}, {"x": (2, 3, 8)}, None, None) == {"x": (2, 3, 8)}
    assert first_sample_shape(str(pytester.path / "lines.onnx"), {"samples": str(
        pytester.path / "samples")}, None, None, None) == {"x": (1, 3, 40)}
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=2)


def test_an_unreadable_first_sample_fails_the_dataset_item_only(pytester):
    """A review: reading it at collection stopped the whole file, its other entries too."""
    lines_model(pytester.path / "lines.onnx")
    (pytester.path / "samples").mkdir()
    (pytester.path / "samples" / "000.npz").write_bytes(b"not an npz")
    pytester.makefile(".yaml", accuracy_lines=SUITE + """
  - name: other
    model: lines.onnx
    input_shape: {x: [1, 3, 8]}
""")
    result = pytester.runpytest("-p", "no:randomly")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 1 and "error" not in outcomes, result.stdout.str()
    assert "Interrupted" not in result.stdout.str()
