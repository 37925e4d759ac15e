"""STFT and DFT are refused at conversion, as ATC's parser stops at them (E19010: no ONNX
plugin is registered for them, ``graph.signal_ops``). Audit 33: onnx_asr's ``kaldi.onnx`` and
``nemo80.onnx`` passed on the emulator, a verdict on a model no NPU would get; the same
transform as a Conv over frames (their ``*_conv.onnx`` twins) converts."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.errors import ConversionError


def stft_model(path, conv: bool = False):
    """|STFT(x)|^2 of a [1, 64] signal, frame 16, step 8, or the same as a Conv over frames."""
    inits = [numpy_helper.from_array(np.array(8, np.int64), "step"),
             numpy_helper.from_array(np.array(16, np.int64), "length"),
             numpy_helper.from_array(np.array([1, 64, 1], np.int64), "as_signal")]
    if conv:
        k = np.arange(9)[:, None] * np.arange(16)[None, :] * 2 * np.pi / 16
        w = np.concatenate([np.cos(k), -np.sin(k)]).astype(np.float32)[:, None, :]
        inits = [numpy_helper.from_array(w, "dft")]
        nodes = [helper.make_node("Unsqueeze", ["x", "one"], ["x3"], name="to_ncl"),
                 helper.make_node("Conv", ["x3", "dft"], ["spec"], name="stft_conv",
                                  strides=[8]),
                 helper.make_node("Mul", ["spec", "spec"], ["y"], name="power")]
        inits.append(numpy_helper.from_array(np.array([1], np.int64), "one"))
    else:
        nodes = [helper.make_node("Reshape", ["x", "as_signal"], ["signal"], name="to_signal"),
                 helper.make_node("STFT", ["signal", "step", "", "length"], ["spec"],
                                  name="stft", onesided=1),
                 helper.make_node("Mul", ["spec", "spec"], ["y"], name="power")]
    graph = helper.make_graph(nodes, "signal", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       [1, 18, 7] if conv else [1, 7, 9, 2])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def _convert(path, tmp_path):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    return EmulatorBackend(Cache(tmp_path / "cache")).convert(path)


def test_an_stft_is_refused_naming_it_and_the_export_a_device_runs(tmp_path):
    with pytest.raises(ConversionError) as err:
        _convert(stft_model(tmp_path / "s.onnx"), tmp_path)
    said = str(err.value)
    assert "model 's' has 1 STFT/DFT operator: 'stft' (STFT). " in said
    assert 'E19010 "No parser is registered for Op [stft, optype [ai.onnx::17::STFT]]"' in said
    assert "export the transform as a Conv over frames" in said


def test_the_conv_export_converts(tmp_path):
    assert _convert(stft_model(tmp_path / "c.onnx", conv=True), tmp_path) is not None


def test_the_fake_atc_refuses_an_stft_with_e19010(tmp_path, capsys, monkeypatch):
    from pytest_ascend_accuracy.testing import fake_atc

    monkeypatch.chdir(tmp_path)  # ATC writes fusion_result.json where it runs
    path = stft_model(tmp_path / "s.onnx")
    rc = fake_atc.main(["--framework=5", f"--model={path}", f"--output={tmp_path / 'out'}",
                        "--soc_version=Ascend310P3"])
    assert rc != 0
    assert ("E19010: No parser is registered for Op [stft, optype [ai.onnx::17::STFT]]."
            in capsys.readouterr().out)
