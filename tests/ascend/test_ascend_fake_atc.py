"""The FAKE atc itself: it must reject what ATC rejects (documented option set and values) and
accept what the backend sends, so argv contract tests against it mean something."""
import json
import zipfile

import pytest

from pytest_ascend_accuracy.testing import fake_atc
from pytest_ascend_accuracy.testing.fake_om import (
    parse_fusion_switch, plan_ops, read_fake_om)


def run(capsys, *argv):
    code = fake_atc.main(list(argv))
    return code, capsys.readouterr().out


def base(model, *extra):
    return [f"--model={model}", "--framework=5", "--output=tiny", "--soc_version=Ascend310P3", *extra]


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("FAKE_ATC_FAIL", "FAKE_ATC_HANG", "FAKE_ATC_REJECT", "FAKE_ATC_CALLS"):
        monkeypatch.delenv(var, raising=False)


def test_success_prints_atc_lines_and_writes_a_marked_fake_om(capsys, tiny_model, tmp_path):
    code, out = run(capsys, *base(tiny_model, "--precision_mode_v2=fp16", "--log=error"))
    assert code == 0
    assert out.splitlines() == ["ATC start working now, please wait for a moment.", "...",
                                "ATC run success, welcome to the next use."]
    with zipfile.ZipFile(tmp_path / "tiny.om") as zf:
        assert "NOT an Ascend offline model" in zf.read("FAKE_OM").decode()
    fake = read_fake_om(tmp_path / "tiny.om")
    assert fake.model_name == "tiny" and fake.precision == "fp16" and fake.input_shapes == {"x": (1, 3, 4, 4)}


@pytest.mark.parametrize("arg, reason", [
    ("--precision_mode=fp16", "The value must be one of force_fp16"),
    ("--precision_mode_v2=force_fp16", "The value must be one of fp16, origin"),
    ("--buffer_optimize=off", "The value must be one of l2_optimize"),
    ("--log=verbose", "The value must be one of debug"),
    ("--input_format=NHWC", "The value must be one of NCHW, ND, NCDHW"),
    ("--no_such_option=1", "The parameter is not supported by this ATC"),
    ("--keep_dtype=missing.cfg", "The file does not exist"),
    ("--input_shape=y:1,3,4,4", "not model inputs"),
    ("--input_shape=x:1;3", "expected"),
])
def test_documented_option_set_and_values(capsys, tiny_model, arg, reason):
    code, out = run(capsys, *base(tiny_model, arg))
    assert code == 255
    lines = out.splitlines()
    assert lines[-2] == fake_atc.FAILED_LINE and lines[-1].startswith("E10001: Value [") and reason in lines[-1]


def test_both_precision_options_and_missing_required(capsys, tiny_model):
    code, out = run(capsys, *base(tiny_model, "--precision_mode=force_fp16", "--precision_mode_v2=fp16"))
    assert code == 255 and "cannot be used together" in out
    code, out = run(capsys, f"--model={tiny_model}", "--framework=5", "--output=tiny")
    assert code == 255 and "E10054: The requied parameter [--soc_version] for ATC is empty." in out
    code, out = run(capsys, f"--model={tiny_model}", "--output=tiny", "--soc_version=Ascend310P3")
    assert code == 255 and out.splitlines()[-1].startswith("E10007: [--framework] is required.")


def test_bad_model_and_bad_fusion_switch(capsys, tmp_path, tiny_model):
    (tmp_path / "bad.onnx").write_bytes(b"not onnx")
    code, out = run(capsys, *base(tmp_path / "bad.onnx"))
    assert code == 255 and "is not a valid ONNX model" in out
    (tmp_path / "fs.cfg").write_text('{"Switch": {"GraphFusion": {"ALL": "maybe"}}}')
    code, out = run(capsys, *base(tiny_model, f"--fusion_switch_file={tmp_path / 'fs.cfg'}"))
    assert code == 255 and "must be 'on' or 'off'" in out


def test_space_separated_form_and_reject_knob(capsys, tiny_model, monkeypatch):
    code, _ = run(capsys, "--model", str(tiny_model), "--framework", "5", "--output", "tiny",
                  "--soc_version", "Ascend310P3")
    assert code == 0
    monkeypatch.setenv("FAKE_ATC_REJECT", "buffer_optimize=off_optimize")
    code, out = run(capsys, *base(tiny_model, "--buffer_optimize=off_optimize"))
    assert code == 255 and "The value is not supported by this ATC" in out


def test_mode_1_writes_om_json_with_fused_original_names(capsys, tiny_model, tmp_path):
    assert run(capsys, *base(tiny_model))[0] == 0
    code, out = run(capsys, "--mode=1", "--om=tiny.om", "--json=tiny.json")
    assert code == 0 and out.splitlines()[-1] == fake_atc.SUCCESS_LINE
    from pytest_ascend_accuracy.dump.om_json import read_om_json

    graph = read_om_json(tmp_path / "tiny.json")
    assert graph.name == "tiny"
    assert [(op.name, op.type) for op in graph.ops] == [("x", "Data"), ("conv1", "Conv"), ("add1", "Add"),
                                                        ("sig1", "Sigmoid")]
    conv = graph.by_name["conv1"]
    assert conv.original_names == ("conv1", "relu1") and conv.output_origins == (("relu1", 0),)
    assert graph.by_name["add1"].inputs[0] == "conv1:0"
    assert graph.attrs["soc_version"] == "Ascend310P3" and "atc" in str(graph.attrs["atc_cmdline"])
    assert json.loads((tmp_path / "tiny.json").read_text())["name"] == "tiny"


def test_fusion_switch_formats_and_plan(tiny_model):
    import onnx

    assert parse_fusion_switch('{"Switch": {"GraphFusion": {"ALL": "off"}, "UBFusion": {"ALL": "off"}}}') == {
        "GraphFusion": {"ALL": "off"}, "UBFusion": {"ALL": "off"}}
    assert parse_fusion_switch("FakeConvReluFusionPass:off\n") == {"GraphFusion": {"FakeConvReluFusionPass": "off"}}
    with pytest.raises(ValueError, match="line 1"):
        parse_fusion_switch("nonsense")
    model = onnx.load(str(tiny_model))
    assert [op.members for op in plan_ops(model, True)] == [("conv1", "relu1"), ("add1",), ("sig1",)]
    assert [op.members for op in plan_ops(model, False)] == [("conv1",), ("relu1",), ("add1",), ("sig1",)]


def test_fail_knob(capsys, tiny_model, monkeypatch):
    monkeypatch.setenv("FAKE_ATC_FAIL", "E19999")
    code, out = run(capsys, *base(tiny_model))
    assert code == 255 and out.splitlines()[-1] == "E19999: Inner Error!"
