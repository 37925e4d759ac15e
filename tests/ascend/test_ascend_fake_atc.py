"""The FAKE atc itself: it must reject what ATC rejects (documented option set and values) and
accept what the backend sends, so argv contract tests against it mean something."""
import json
import os
import re
import zipfile

import pytest

from pytest_ascend_accuracy.testing import fake_atc
from pytest_ascend_accuracy.testing.fake_om import (
    parse_fusion_switch, plan_ops, read_fake_om)


def run(capsys, *argv):
    code = fake_atc.main(list(argv))
    return code, capsys.readouterr().out


def failure(out):
    """(error line, the lines after it) of a failed run; checks the real ATC console layout:
    start line, failed line, ``Exxxxx: ...``, indented Solution/TraceBack lines."""
    lines = out.splitlines()
    assert lines[0] == fake_atc.START_LINE and lines[1] == fake_atc.FAILED_LINE, lines
    assert re.match(r"E[0-9A-Z]{5}: \S", lines[2]) and lines[-1] == "        TraceBack (most recent call last):"
    return lines[2], lines[3:]


def base(model, *extra):
    return [f"--model={model}", "--framework=5", "--output=tiny", "--soc_version=Ascend310P3", *extra]


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("FAKE_ATC_FAIL", "FAKE_ATC_HANG", "FAKE_ATC_REJECT", "FAKE_ATC_CALLS", "FAKE_ATC_VERSION"):
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
    ("--precision_mode=fp16", "Valid values are: force_fp16, force_fp32, allow_fp32_to_fp16"),
    ("--precision_mode_v2=force_fp16", "Valid values are: fp16, origin"),
    ("--buffer_optimize=off", "Valid values are: l2_optimize"),
    ("--input_format=NHWC", "Valid values are: NCHW, ND, NCDHW."),
    ("--no_such_option=1", "The parameter is not supported by this ATC"),
    ("--keep_dtype=missing.cfg", "The file does not exist"),
    ("--input_shape=y:1,3,4,4", "not model inputs"),
    ("--input_shape=x:1;3", "expected"),
])
def test_documented_option_set_and_values(capsys, tiny_model, arg, reason):
    code, out = run(capsys, *base(tiny_model, arg))
    assert code == 255
    line, rest = failure(out)
    assert line.startswith("E10001: Value [") and reason in line
    assert rest[0] == "        Solution: Try again with a valid argument."


def test_log_level_is_checked_first_as_ge_main_does(capsys, tiny_model):
    # GE main.cc init(): {"default", "null", "debug", "info", "warning", "error"}, E10010
    code, out = run(capsys, *base(tiny_model, "--log=verbose"))
    assert code == 255
    assert failure(out)[0] == ("E10010: invalid value for --log:verbose, only support debug, info, "
                               "warning, error, null")
    assert run(capsys, *base(tiny_model, "--log=default"))[0] == 0


@pytest.mark.parametrize("version, accepted, refused", [
    ("6.0.1", ["force_fp16", "force_fp32", "allow_fp32_to_fp16", "must_keep_origin_dtype",
               "allow_mix_precision"],
     ["cube_fp16in_fp32out", "allow_mix_precision_fp16", "allow_mix_precision_bf16", "allow_fp32_to_bf16"]),
    ("6.3.RC2", ["allow_mix_precision_fp16", "allow_mix_precision_bf16"],
     ["cube_fp16in_fp32out", "allow_fp32_to_bf16"]),
    ("7.0.0", ["cube_fp16in_fp32out"], ["allow_fp32_to_bf16"]),
    ("8.0.RC2", ["allow_fp32_to_bf16", "cube_fp16in_fp32out", "force_fp16"], []),
])
def test_precision_mode_values_follow_the_toolkit_version(capsys, tiny_model, monkeypatch, version,
                                                          accepted, refused):
    monkeypatch.setenv("FAKE_ATC_VERSION", version)
    for value in accepted:
        assert run(capsys, *base(tiny_model, f"--precision_mode={value}"))[0] == 0, value
    for value in refused:
        code, out = run(capsys, *base(tiny_model, f"--precision_mode={value}"))
        line, _ = failure(out)
        assert code == 255 and line.startswith(
            f"E10001: Value [{value}] for parameter [--precision_mode] is invalid. Reason: The current "
            "value is not within the valid range. Valid values are: force_fp16, force_fp32, "), line
    if version == "6.0.1":  # exactly the five values CANN 6.0.1's ATC page documents
        line, _ = failure(run(capsys, *base(tiny_model, "--precision_mode=x"))[1])
        assert line.endswith("Valid values are: force_fp16, force_fp32, allow_fp32_to_fp16, "
                             "must_keep_origin_dtype, allow_mix_precision.")


REAL_ATC_LOGS = "/work/shared/realdata/msit/msit/test/UT/resource/analyze/dataset/atc_err"


@pytest.mark.skipif(not os.path.isdir(REAL_ATC_LOGS), reason="real ATC logs (../shared/realdata) absent")
def test_failure_layout_matches_real_atc_console_logs(capsys, tiny_model):
    """The real logs msit keeps (E19010, EZ3003, ...) and the fake's E10001 share one layout."""
    for name in sorted(os.listdir(REAL_ATC_LOGS)):
        with open(os.path.join(REAL_ATC_LOGS, name), encoding="utf-8") as f:
            real = f.read()
        if "Solution:" in real:
            failure(real.split("        TraceBack (most recent call last):")[0]
                    + "        TraceBack (most recent call last):")
            assert real.splitlines()[3].startswith("        Solution: ")
    _, rest = failure(run(capsys, *base(tiny_model, "--input_format=NHWC"))[1])
    assert rest[0].startswith("        Solution: ")


def test_both_precision_options_and_missing_required(capsys, tiny_model):
    code, out = run(capsys, *base(tiny_model, "--precision_mode=force_fp16", "--precision_mode_v2=fp16"))
    assert code == 255 and "cannot be used together" in out
    code, out = run(capsys, f"--model={tiny_model}", "--framework=5", "--output=tiny")
    assert code == 255 and "E10054: The requied parameter [--soc_version] for ATC is empty." in out
    code, out = run(capsys, f"--model={tiny_model}", "--output=tiny", "--soc_version=Ascend310P3")
    assert code == 255 and failure(out)[0].startswith("E10007: [--framework] is required.")


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
    assert code == 255 and failure(out) == ("E19999: Inner Error!", ["        TraceBack (most recent call last):"])


def test_a_model_with_external_data_is_converted_with_its_weights_inside(capsys, tiny_model, tmp_path):
    """ATC converts an ONNX model whose weights lie in external data beside it (how models over
    2 GB are kept), and the .om holds the weights; a missing data file is refused naming it."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    source = onnx.load(str(tiny_model))
    folder = tmp_path / "ext"
    folder.mkdir()  # (saving as external data rewrites the proto it saves: a copy of its own)
    onnx.save_model(onnx.load(str(tiny_model)), str(folder / "tiny.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="tiny.onnx.data", size_threshold=0)
    code, out = run(capsys, *base(folder / "tiny.onnx"))
    assert code == 0, out
    fake = read_fake_om(tmp_path / "tiny.om")
    assert not any(t.data_location == onnx.TensorProto.EXTERNAL for t in fake.model.graph.initializer)
    for t, s in zip(fake.model.graph.initializer, source.graph.initializer):
        np.testing.assert_array_equal(numpy_helper.to_array(t), numpy_helper.to_array(s))
    (folder / "tiny.onnx.data").unlink()
    code, out = run(capsys, *base(folder / "tiny.onnx"))
    line, _ = failure(out)
    assert code == 255 and line.startswith("E10001") and "tiny.onnx.data" in line


def test_keep_dtype_op_types_as_real_atc_reads_them(capsys, tiny_model, tmp_path):
    """GE attr_options.cc: an OpType:: entry not in PascalCase stops the conversion (E10003);
    one that matches no node as parsed is a warning (the fake accepted both silently). Types
    are matched as the ONNX parser gives them (core.ascend_optypes.PARSER_TYPES)."""
    (tmp_path / "lower.cfg").write_text("OpType::relu\n")
    code, out = run(capsys, *base(tiny_model, "--keep_dtype=lower.cfg"))
    line, _ = failure(out)
    assert code == 255 and line.startswith("E10003") and "must be in PascalCase" in line
    (tmp_path / "finished.cfg").write_text("OpType::BNInference\n")
    code, out = run(capsys, *base(tiny_model, "--keep_dtype=finished.cfg"))
    assert code == 0 and "[WARNING] keep_dtype op type [BNInference] matches no node" in out


def test_the_fake_om_keeps_an_op_in_float32_by_its_parser_type(capsys, tiny_model, tmp_path):
    """The fake om stored keep_dtype OpType:: entries by ONNX type (OpType::Conv kept the
    Conv, OpType::Conv2D nothing): the reverse of what ATC and the fake ATC's check match."""
    from pytest_ascend_accuracy.core.modes import keep_dtype

    entry = keep_dtype(["OpType::Conv"]).keep_dtype  # ("OpType::Conv2D",)
    (tmp_path / "k.cfg").write_text("\n".join(entry) + "\n")
    code, out = run(capsys, *base(tiny_model, "--precision_mode=force_fp16", "--keep_dtype=k.cfg"))
    assert code == 0 and "WARNING" not in out
    om = read_fake_om("tiny.om")
    stored = {op.type: om.storage_dtype(op) for op in om.plan()}
    assert stored["Conv"] == "float32" and "float16" in stored.values()
