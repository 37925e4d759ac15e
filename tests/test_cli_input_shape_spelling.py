"""A model with dynamic dimensions: the CLI says how to fix it with its own --input-shape
(ATC syntax), not with the Python keyword ``input_shape={...}`` a shell cannot take (a diagnose
trial); the library keeps the Python spelling."""
import onnx
import pytest
from onnx import TensorProto, helper

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph.onnx_graph import resolve_input_shapes

pytest.importorskip("onnxruntime")


def _dynamic(tmp_path):
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "dyn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / "dyn.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def test_the_cli_names_its_own_option_and_the_library_its_keyword(tmp_path, capsys):
    model = _dynamic(tmp_path)
    code = cli.main(["diagnose", str(model), "--cache-dir", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert code == 2
    assert ("error: --input-shape: input 'x' dimension 0 ('N') is dynamic ([?, 8, 4]); nothing "
            "gives its size: choose it") in err
    assert err.rstrip().endswith("e.g. with 1 for each dynamic dimension: --input-shape 'x:1,8,4'")
    assert "input_shape={" not in err
    assert cli.main(["diagnose", str(model), "--cache-dir", str(tmp_path / "c"),
                     "--input-shape", "x:2,8,4"]) == 0  # the spelling, filled in, runs
    with pytest.raises(ConfigError, match=r"e.g. with 1 for each dynamic dimension: "
                                          r"input_shape=\{'x': \(1, 8, 4\)\}$"):
        resolve_input_shapes(onnx.load(model))


def test_the_cli_with_inputs_converts_at_their_shape(tmp_path, capsys):
    """``--inputs`` gives the dynamic dimensions' sizes, as it gives them to the golden: no
    --input-shape needed (a PP-OCRv4 rec trial got the error above with its own .npy)."""
    import numpy as np

    model = _dynamic(tmp_path)
    np.save(tmp_path / "x.npy", np.random.default_rng(0).random((3, 8, 4), np.float32))
    code = cli.main(["diagnose", str(model), "--cache-dir", str(tmp_path / "c"),
                     "--inputs", f"x={tmp_path / 'x.npy'}", "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "step 1 default [default]: PASSED" in out
