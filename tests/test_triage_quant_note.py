"""A diagnosis of a QDQ model, which ATC does not convert as it is (audit 35, Smart Turn v3.2):
the fix it found holds on the emulator's float16 model of the quantised graph only, so its
verdict (text, json, html) says so, names the op types and the AMCT route, and writes no
atc_args.txt nor keep_dtype.cfg (ATC options and op names for a model ATC refuses: a comment
line in atc_args.txt would reach atc as arguments through ``$(cat ...)``), but atc_note.txt;
the emulator fix it prints still passes pasted. A float model's fix folder is as it was."""
import json
import re

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.cli import app as cli  # noqa: E402

NOTE = "ATC does not convert this model as it is: its ONNX quantisation ops"


def qdq_scale_up(path, quantised=True):
    """x -> QuantizeLinear -> DequantizeLinear -> Mul by 1e5 (past float16's range: keeping
    the Mul in float32 fixes it); without ``quantised``, the Mul alone."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, src = [], "x"
    inits = [numpy_helper.from_array(np.float32(1e5), "k")]
    if quantised:
        nodes += [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], name="x_q"),
                  helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["d"], name="x_dq")]
        inits += [numpy_helper.from_array(np.float32(1 / 255.3), "s"),
                  numpy_helper.from_array(np.uint8(0), "zp")]
        src = "d"
    nodes.append(helper.make_node("Mul", [src, "k"], ["y"], name="scale_up"))
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [1, 256])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [1, 256])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def _diagnose(capsys, *argv):
    code = cli.main(["diagnose", *argv])
    return code, capsys.readouterr().out


@pytest.mark.filterwarnings("ignore:ONNX quantisation ops")
def test_a_qdq_models_fix_says_atc_does_not_convert_it_and_writes_no_atc_files(
        tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    qdq_scale_up(tmp_path / "qdq.onnx")
    code, out = _diagnose(capsys, "qdq.onnx", "--cache-dir", "cache", "--out", "fix")
    assert code == 0 and "diagnosis of qdq: RESTORED" in out, out
    verdict = out.splitlines()[1]
    assert NOTE in verdict and "(QuantizeLinear, DequantizeLinear)" in verdict, verdict
    assert "amct_onnx.convert_qat_model(model_file, save_path)" in verdict
    assert ("this fix was found on the emulator's float16 model of the quantised graph"
            in verdict and "check the deployed (AMCT-adapted) model on an NPU" in verdict)
    # no ATC line, no ATC files: their options and op names are for a model ATC refuses
    assert "ATC: --" not in out and "fix: mode keep_dtype(scale_up), on the emulator only" in out
    files = sorted(p.name for p in (tmp_path / "fix").iterdir())
    assert files == ["atc_note.txt", "diagnosis.html", "diagnosis.json", "diagnosis.txt"], files
    note = (tmp_path / "fix" / "atc_note.txt").read_text()
    assert "ATC does not convert qdq as it is" in note and "NPU" in note
    data = json.loads((tmp_path / "fix" / "diagnosis.json").read_text())
    assert data["atc_converts"] is False and data["fix"]["atc_args"] == []
    assert data["atc_quant_ops"] == ["QuantizeLinear", "DequantizeLinear"]
    assert NOTE in data["verdict"]
    page = (tmp_path / "fix" / "diagnosis.html").read_text()
    assert "ATC does not convert this model as it is" in page and "on the emulator only" in page
    assert NOTE in (tmp_path / "fix" / "diagnosis.txt").read_text()
    # the emulator fix it prints passes pasted
    mode = re.search(r"in a test: modes=\[(.+?)\] \(from", out).group(1)
    assert mode == "keep_dtype(['scale_up'])"
    yaml_mode = re.search(r"in a YAML suite: modes: \[(.+)\]$", out, re.M).group(1)
    code, again = _diagnose(capsys, "qdq.onnx", "--cache-dir", "cache", "--mode", yaml_mode)
    assert code == 0 and ": PASSES" in again, again


@pytest.mark.filterwarnings("ignore:ONNX quantisation ops")
def test_a_qdq_model_with_no_fix_to_give_says_it_too(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    qdq_scale_up(tmp_path / "qdq.onnx")
    code, out = _diagnose(capsys, "qdq.onnx", "--cache-dir", "cache", "--mode",
                          '{keep_dtype: ["scale_up"]}', "--out", "fix")
    assert code == 0 and ": PASSES" in out, out  # (no fix: still said)
    assert not (tmp_path / "fix" / "atc_note.txt").exists()
    assert NOTE in out and "this diagnosis ran on the emulator's float16 model" in out


def test_a_float_models_fix_folder_still_holds_its_atc_files(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    qdq_scale_up(tmp_path / "f.onnx", quantised=False)
    code, out = _diagnose(capsys, "f.onnx", "--cache-dir", "cache", "--out", "fix")
    assert code == 0 and "RESTORED" in out and NOTE not in out, out
    assert (tmp_path / "fix" / "atc_args.txt").is_file()
    assert (tmp_path / "fix" / "keep_dtype.cfg").is_file()
    assert not (tmp_path / "fix" / "atc_note.txt").exists()
