"""--accuracy-diagnose's fix folder pastes once copied to the Ascend machine (fix-files trial
finding 6): its atc_args.txt held --keep_dtype=/abs/.../diagnosis/keep_dtype.cfg, a path only
the machine that ran pytest has. It now names diagnosis/keep_dtype.cfg, run from the folder
holding diagnosis/ (said under the fix), and where the report folder's path holds characters
ATC refuses in config-file paths (finding 2: GE CheckInputPathValid) the failure says so."""
import os
import shutil

from conftest import ACCURACY_TESTS

from pytest_ascend_accuracy.testing import fake_atc


def test_the_fix_folder_pastes_copied_and_a_folder_atc_refuses_is_warned_of(
        pytester, models_dir, monkeypatch):
    monkeypatch.delenv("FAKE_ATC_CALLS", raising=False)
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    result = pytester.runpytest("-q", "--accuracy-diagnose", "--accuracy-report=rep",
                                "-k", "overflow and default")
    result.assert_outcomes(failed=1, deselected=3)
    (fix,) = (pytester.path / "rep").glob("test_acc.py--test_overflow_default-*/diagnosis")
    result.stdout.fnmatch_lines([
        "  fix files written to rep/test_acc.py--test_overflow_default-*/diagnosis/ *",
        "  (atc_args.txt names them as diagnosis/...: run atc from "
        f"rep/{fix.parent.name})"])
    assert "warning: this folder's path" not in result.stdout.str()
    args = (fix / "atc_args.txt").read_text().split()
    assert "--keep_dtype=diagnosis/keep_dtype.cfg" in args, args
    # the Ascend machine: the folder alone, copied elsewhere, the original gone
    shutil.copytree(fix, pytester.path / "npu" / "diagnosis")
    shutil.rmtree(pytester.path / "rep")
    os.chdir(pytester.path / "npu")
    model = pytester.path / "models" / "overflow.onnx"
    assert fake_atc.main([f"--model={model}", "--framework=5", "--output=fixed",
                          "--soc_version=Ascend310P3", *args]) == 0
    os.chdir(pytester.path)
    # a report folder ATC refuses: the failure says so, and what to do
    result = pytester.runpytest("-q", "--accuracy-diagnose", "--accuracy-report=rep+1",
                                "-k", "overflow and default")
    result.assert_outcomes(failed=1, deselected=3)
    result.stdout.fnmatch_lines([
        "  warning: this folder's path holds '+': ATC refuses a model or config file whose "
        "resolved path holds any character but ASCII letters, digits, '-', '.', '_', '/' and "
        "Chinese characters (GE CheckInputPathValid, E10001, for --model, --weight, "
        "--keep_dtype, --insert_op_conf and --fusion_switch_file); copy diagnosis/ into a "
        "folder whose path holds none of them and run atc from that folder"])
