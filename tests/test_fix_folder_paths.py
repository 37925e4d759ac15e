"""A diagnosis's fix folder, copied to the Ascend machine, pastes there (fix-files trial
findings 2, 6): the CLI's ``--out a/b/fix`` and the plugin's folder named their config files by
the path the diagnosis wrote them to (absolute for the plugin), which does not resolve once the
folder is copied; now ``fix/keep_dtype.cfg``, run from the folder holding ``fix/``, as the
printed line says. An ``--out`` holding characters ATC refuses in config-file paths (GE
CheckInputPathValid: ``fix+v1``, ``my fix``) is refused before any conversion, naming the rule,
and the printed ATC line is quoted for the shell (``--input_shape=x:1,16;y:1,16``)."""
import shlex
import shutil

import onnx
import pytest

from pytest_ascend_accuracy import cli
from pytest_ascend_accuracy.testing import fake_atc, models


@pytest.fixture
def overflow(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("FAKE_ATC_FAIL", "FAKE_ATC_HANG", "FAKE_ATC_REJECT", "FAKE_ATC_CALLS",
                "FAKE_ATC_VERSION"):
        monkeypatch.delenv(var, raising=False)
    onnx.save(models.overflow_model(), "overflow.onnx")
    return tmp_path / "overflow.onnx"


def _atc(model, args):
    return fake_atc.main([f"--model={model}", "--framework=5", "--output=fixed",
                          "--soc_version=Ascend310P3", *args])


@pytest.mark.parametrize("out, bad", [("fix+v1", "'+'"), ("my fix", "' '")])
def test_an_out_folder_atc_refuses_is_refused_up_front(overflow, capsys, out, bad):
    assert cli.main(["diagnose", str(overflow), "--cache-dir", "c", "--out", out]) == 2
    err = capsys.readouterr().err
    assert f"--out: {out!r} resolves to " in err and f", which holds {bad}: ATC refuses" in err
    assert ("GE CheckInputPathValid, E10001, for --model, --weight, --keep_dtype, "
            "--insert_op_conf and --fusion_switch_file") in err
    assert not (overflow.parent / out).exists() and not (overflow.parent / "c").exists()


def test_a_copied_fix_folder_pastes_from_the_folder_holding_it(overflow, capsys, monkeypatch):
    assert cli.main(["diagnose", str(overflow), "--cache-dir", "c", "--out", "nested/fix"]) == 0
    printed = capsys.readouterr().out
    line = next(x for x in printed.splitlines() if x.startswith("  fix: "))
    assert line.endswith("; ATC (run from nested, which holds fix/): --precision_mode=force_fp16 "
                         "--keep_dtype=fix/keep_dtype.cfg"), line
    args = (overflow.parent / "nested" / "fix" / "atc_args.txt").read_text().split()
    assert args == ["--precision_mode=force_fp16", "--keep_dtype=fix/keep_dtype.cfg"]
    # the Ascend machine: the folder alone, copied elsewhere, the original gone
    shutil.copytree(overflow.parent / "nested" / "fix", overflow.parent / "npu" / "fix")
    shutil.rmtree(overflow.parent / "nested")
    monkeypatch.chdir(overflow.parent / "npu")
    assert _atc(overflow, args) == 0, capsys.readouterr().out  # $(cat fix/atc_args.txt)
    assert _atc(overflow, shlex.split(line.partition("fix/): ")[2])) == 0


def test_the_printed_atc_line_is_quoted_for_the_shell():
    from pytest_ascend_accuracy.core.modes import Mode
    from pytest_ascend_accuracy.triage.atc_args import FixAtc
    from pytest_ascend_accuracy.triage.report import text
    from pytest_ascend_accuracy.triage.result import Diagnosis

    options = (("input_shape", "x:1,16;y:1,16"), ("precision_mode", "force_fp16"),
               ("keep_dtype", "keep_dtype.cfg"))
    d = Diagnosis(model="m", backend="b", threshold=0.95, metric="cosine",
                  restored_by="keep_dtype", verdict="v", steps=(),
                  fix_mode=Mode(keep_dtype=("a",)),
                  fix_atc=FixAtc(options, ("keep_dtype.cfg",)),
                  fix_files={"keep_dtype.cfg": "fix/keep_dtype.cfg"})
    line = next(x for x in text(d).splitlines() if x.startswith("  fix: "))
    pasted = line.partition("ATC: ")[2]
    assert pasted == ("'--input_shape=x:1,16;y:1,16' --precision_mode=force_fp16 "
                      "--keep_dtype=fix/keep_dtype.cfg"), line
    assert shlex.split(pasted) == ["--input_shape=x:1,16;y:1,16", "--precision_mode=force_fp16",
                                   "--keep_dtype=fix/keep_dtype.cfg"]
