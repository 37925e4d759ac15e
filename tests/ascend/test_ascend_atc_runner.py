"""Running ATC, against the FAKE atc: success, failure codes, timeout, progress, rejected options."""
import time

import pytest

from pytest_ascend_accuracy.backends.ascend.atc_runner import (
    parse_atc_errors, rejected_option, run_atc)
from pytest_ascend_accuracy.errors import ConversionError


def argv(atc, model, *extra):
    return [str(atc), f"--model={model}", "--framework=5", "--output=tiny",
            "--soc_version=Ascend310P3", "--precision_mode_v2=fp16", "--log=error", *extra]


def test_fake_atc_success_writes_om_and_reports_progress(fake_toolkit, fake_atc_on_path, tiny_model, tmp_path,
                                                         atc_calls):
    out = tmp_path / "build"
    out.mkdir()
    lines = []
    run = run_atc(argv(fake_toolkit.atc, tiny_model), cwd=out, timeout=60, what="tiny.onnx",
                  progress=lines.append)
    assert run.returncode == 0 and "ATC run success, welcome to the next use." in run.output
    assert run.output.splitlines()[0] == "ATC start working now, please wait for a moment."
    assert (out / "tiny.om").is_file() and (out / "atc.log").read_text() == run.output
    assert lines[0].startswith("ATC converting tiny.onnx: started") and lines[-1].startswith(
        "ATC converting tiny.onnx: done in")
    [call] = atc_calls(fake_atc_on_path)
    assert call["argv"] == argv(fake_toolkit.atc, tiny_model)[1:] and call["cwd"] == str(out)


def test_fake_atc_failure_carries_code_log_tail_and_command(fake_toolkit, fake_atc_on_path, tiny_model,
                                                            tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_ATC_FAIL", "E19010")
    with pytest.raises(ConversionError) as info:
        run_atc(argv(fake_toolkit.atc, tiny_model), cwd=tmp_path, timeout=60, what="tiny.onnx")
    err = info.value
    assert err.code == "E19010"
    text = str(err)
    assert "ATC failed converting tiny.onnx (exit status 255), error E19010:" in text
    assert "E19010: No parser is registered for Op [conv1, optype [ai.onnx::17::Conv]]." in text
    assert "command: " + str(fake_toolkit.atc) in text and "--precision_mode_v2=fp16" in text
    assert "plog file plog-" in text and "[ERROR] GE(" in text
    assert "ATC run failed" in err.log_tail and err.command[0] == str(fake_toolkit.atc)
    assert not (tmp_path / "tiny.om").exists()


def test_fake_atc_hanging_is_stopped_at_the_timeout(fake_toolkit, fake_atc_on_path, tiny_model, tmp_path,
                                                    monkeypatch):
    # a warm-up call first: the fake atc's persistent interpreter is up and has its imports
    # done, so the hanging call prints its start line at once, not after a cold start that
    # measured 0.24-0.30 s here and may take longer on a loaded CI machine; the timeout (3 s)
    # still stops a call that would hang for 120 s
    run_atc(argv(fake_toolkit.atc, tiny_model), cwd=tmp_path, timeout=60, log_name="warm-up.log")
    monkeypatch.setenv("FAKE_ATC_HANG", "120")
    start = time.monotonic()
    with pytest.raises(ConversionError) as info:
        run_atc(argv(fake_toolkit.atc, tiny_model), cwd=tmp_path, timeout=3, what="tiny.onnx",
                progress=None)
    assert time.monotonic() - start < 60  # stopped, not waited for
    assert info.value.code == "TIMEOUT"
    assert "did not finish converting tiny.onnx within 3s and was stopped" in str(info.value)
    assert "ATC start working now" in str(info.value)


def test_option_the_installed_fake_atc_does_not_know(fake_toolkit, fake_atc_on_path, tiny_model, tmp_path,
                                                     monkeypatch):
    monkeypatch.setenv("FAKE_ATC_REJECT", "precision_mode_v2")
    with pytest.raises(ConversionError) as info:
        run_atc(argv(fake_toolkit.atc, tiny_model), cwd=tmp_path, timeout=60, toolkit_version="6.3.RC1")
    text = str(info.value)
    assert info.value.code == "E10001"
    assert "E10001: Value [fp16] for parameter [--precision_mode_v2] is invalid." in text
    assert "The installed ATC (toolkit 6.3.RC1) rejected --precision_mode_v2=fp16." in text
    assert ("pass the precision mode as --precision_mode, as toolkits before 7.0 take it: pytest "
            "--ascend-precision-policy=precision_mode (ini ascend_precision_policy)") in text


def test_a_rejected_option_other_than_the_v2_flag_gets_no_precision_policy_advice(
        fake_toolkit, fake_atc_on_path, tiny_model, tmp_path, monkeypatch):
    """Every rejected option got "set precision_policy='precision_mode'", which changes nothing
    for --buffer_optimize or --precision_mode itself (a review)."""
    monkeypatch.setenv("FAKE_ATC_REJECT", "log")
    with pytest.raises(ConversionError) as info:
        run_atc(argv(fake_toolkit.atc, tiny_model), cwd=tmp_path, timeout=60, toolkit_version="8.0.RC2")
    text = str(info.value)
    assert "rejected --log=" in text and "precision" not in text.split("command:")[0].split(
        "rejected")[1], text


def test_unstartable_atc(tmp_path):
    with pytest.raises(ConversionError, match="could not be started"):
        run_atc([str(tmp_path / "missing-atc")], cwd=tmp_path)


def test_parse_errors_from_real_shaped_output():
    out = ("ATC start working now, please wait for a moment.\n...\n"
           "ATC run failed, Please check the detail log, Try 'atc --help' for more information\n"
           "E10007: [PID: 10490] 2025-03-18-09:02:18.501.341 [--framework] is required. The value must be "
           "[0(Caffe) or 1(MindSpore) or 3(TensorFlow) or 5(Onnx)].\n"
           "EZ3003: No supported Ops kernel and engine are found for [AddDsl], optype [AddDsl].\n"
           "        Possible Cause: The operator is not supported by the system.\n")
    errors = parse_atc_errors(out)
    assert [c for c, _ in errors] == ["E10007", "EZ3003"]
    assert rejected_option(errors, ["atc", "--framework=5", "--model=m"]) == "--framework=5"
    assert rejected_option(errors, ["atc", "--model=m"]) is None


def test_progress_lines_while_the_fake_atc_runs(fake_toolkit, fake_atc_on_path, tiny_model, tmp_path,
                                                monkeypatch):
    monkeypatch.setenv("FAKE_ATC_HANG", "1.0")
    lines = []
    run_atc(argv(fake_toolkit.atc, tiny_model), cwd=tmp_path, timeout=60, what="tiny.onnx",
            progress=lines.append, progress_interval=0.25)
    elapsed = [line for line in lines if line.endswith("s elapsed")]
    assert elapsed and all(line.startswith("ATC converting tiny.onnx: ") for line in elapsed)
    assert lines[0].endswith(f"started ({fake_toolkit.atc})") and "done in" in lines[-1]
