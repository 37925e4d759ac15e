"""ascend-accuracy console script: compare, judge, exit codes, reports, progress line."""
import argparse
import io
import json
import subprocess
import sys

import pytest

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.compare.engine import CompareProgress


def test_compare_failure_prints_the_block_and_exits_1(dumps, tmp_path, capsys):
    actual, golden = dumps
    out = tmp_path / "r"
    code = cli.main(["compare", str(actual), str(golden), "--csv", str(out / "r.csv"),
                     "--json", str(out / "r.json"), "--html", str(out / "r.html")])
    captured = capsys.readouterr()
    assert code == 1
    lines = captured.out.splitlines()
    assert lines[0] == ("accuracy FAILED: 1 of 2 tensors fail cosine >= 0.95; first failure in "
                        "graph order: Add/1 (#1)")
    assert "  dump name      Add/1" in lines
    assert f"full report: {out / 'r.csv'}" in lines
    assert captured.err == ""  # not a terminal and no --progress: no progress line
    assert (out / "r.csv").read_text().startswith("Index,OpType,NPUDump,")
    assert json.loads((out / "r.json").read_text())["verdict"]["passed"] is False
    assert (out / "r.html").read_text().startswith("<!DOCTYPE html>")


def test_compare_pass_exits_0(dumps, capsys):
    actual, golden = dumps
    assert cli.main(["compare", str(actual), str(golden), "--ignore", "Add*"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("accuracy PASSED: 1 tensor meets cosine >= 0.95 (1 ignored)\n")


def test_per_op_and_metric_options(dumps, capsys):
    actual, golden = dumps
    assert cli.main(["compare", str(actual), str(golden), "--per-op", "Add/1=-1", "--workers", "2"]) == 0
    assert cli.main(["compare", str(actual), str(golden), "--metric", "rel_l2",
                     "--threshold", "2.5"]) == 0
    assert cli.main(["compare", str(actual), str(golden), "--metric", "rel_l2",
                     "--threshold", "0.1"]) == 1
    assert "rel_l2 <= 0.1" in capsys.readouterr().out


def test_judge_rejudges_a_saved_result_without_dumps(dumps, tmp_path, capsys):
    actual, golden = dumps
    saved = tmp_path / "r.json"
    assert cli.main(["compare", str(actual), str(golden), "--json", str(saved)]) == 1
    assert cli.main(["judge", str(saved), "--threshold", "-1"]) == 0
    assert cli.main(["judge", str(saved)]) == 1


@pytest.mark.parametrize("argv,message", [
    (["compare", "/no/such/dump", "{golden}"], "ascend-accuracy: error: /no/such/dump: no such file or directory"),
    (["compare", "{actual}", "{golden}", "--per-op", "oops"],
     "ascend-accuracy: error: --per-op: expected NAME=THRESHOLD, got 'oops'"),
    (["compare", "{actual}", "{golden}", "--threshold", "3"],
     "ascend-accuracy: error: threshold: cosine threshold must lie in [-1, 1], got 3.0"),
    (["compare", "{actual}", "{golden}", "--mapping", "{missing}"],
     "ascend-accuracy: error: {missing}: cannot read mapping: No such file or directory"),
    (["judge", "{golden}"], "ascend-accuracy: error: {golden}: cannot read: Is a directory"),
])
def test_bad_input_exits_2_with_one_line_naming_the_file(dumps, tmp_path, capsys, argv, message):
    actual, golden = dumps
    fmt = {"actual": actual, "golden": golden, "missing": tmp_path / "nope.json"}
    code = cli.main([a.format(**fmt) for a in argv])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == message.format(**fmt)
    assert "Traceback" not in err


def test_bad_mapping_content(dumps, tmp_path, capsys):
    actual, golden = dumps
    m = tmp_path / "m.json"
    m.write_text('{"Conv_0": "NotThere"}')
    assert cli.main(["compare", str(actual), str(golden), "--mapping", str(m)]) == 2
    assert "golden op 'NotThere' (mapped from 'Conv_0') is not in the golden dump" in \
        capsys.readouterr().err
    m.write_text("[1]")
    assert cli.main(["compare", str(actual), str(golden), "--mapping", str(m)]) == 2
    assert "mapping must be a JSON object" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys):
    assert cli.main([]) == 2
    assert cli.main(["compare", "only-one"]) == 2
    assert cli.main(["frobnicate"]) == 2
    assert "invalid choice" in capsys.readouterr().err
    assert cli.main(["--help"]) == 0


def test_progress_flag_draws_a_line_on_stderr(dumps, capsys):
    actual, golden = dumps
    cli.main(["compare", str(actual), str(golden), "--progress"])
    err = capsys.readouterr().err
    assert err.startswith("\rcomparing ") and "2/2 tensors" in err and err.endswith("\n")


def test_progress_line_waits_and_throttles():
    stream = io.StringIO()
    line = cli.ProgressLine(stream, delay=3600)
    line(CompareProgress(1, 2, "a", 10, 20))
    line.close()
    assert stream.getvalue() == ""  # a short comparison prints nothing
    line = cli.ProgressLine(stream, delay=0, interval=3600)
    line(CompareProgress(1, 3, "a", 10, 30))
    line(CompareProgress(2, 3, "b", 20, 30))  # throttled
    line(CompareProgress(3, 3, "c", 30, 30))  # the last one always draws
    line.close()
    text = stream.getvalue()
    assert text.count("\r") == 2 and "1/3" in text and "3/3" in text and "2/3" not in text


def test_a_subcommand_can_be_registered(capsys):
    def configure(p):
        p.add_argument("--n", type=int, default=1)

    def run(args):
        print(f"n={args.n}")
        return 0
    cli.add_command(cli.Command("hello-test", "test command", configure, run))
    try:
        assert cli.main(["hello-test", "--n", "3"]) == 0
        assert capsys.readouterr().out == "n=3\n"
        assert isinstance(cli.build_parser(), argparse.ArgumentParser)
    finally:
        cli._COMMANDS.pop("hello-test")


def test_console_script_runs_as_a_module(dumps):
    actual, golden = dumps
    proc = subprocess.run([sys.executable, "-m", "pytest_ascend_accuracy.cli", "compare",
                           str(actual), str(golden)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stdout.startswith("accuracy FAILED")


def test_diagnose_fault_targets_may_hold_colons():
    """``--fault op:backbone/bn:1`` gave "unknown fault effect '1'": EFFECT and AMOUNT are
    only taken from the right when they are an effect and a number."""
    from pytest_ascend_accuracy.cli.diagnose import _faults

    got = [(f.kind, f.target, f.effect, f.amount) for f in _faults(
        ["op:backbone/bn:1", "op:backbone/bn:1:scale", "op:backbone/bn:1:scale:2", "op:a:nan",
         "input:x", "rule:R:offset:0.5", "rule:GraphFusion:R"])]
    assert got == [("op", "backbone/bn:1", "noise", 1.0), ("op", "backbone/bn:1", "scale", 1.0),
                   ("op", "backbone/bn:1", "scale", 2.0), ("op", "a", "nan", 1.0),
                   ("input", "x", "scale", 0.5), ("rule", "R", "offset", 0.5),
                   ("rule", "R", "noise", 1.0)]  # a rule as diagnose prints it: its section


def test_a_closed_output_pipe_ends_quietly(dumps):
    """``ascend-accuracy compare ... | head`` printed "ascend-accuracy: error: Broken pipe"
    once the reader had gone (a user trial): now nothing, and the status of a command a shell
    saw killed by SIGPIPE."""
    import os

    actual, golden = dumps
    read, write = os.pipe()
    os.close(read)  # the reader has gone before the first line
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest_ascend_accuracy.cli", "compare",
                               str(actual), str(golden)], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    finally:
        os.close(write)
    assert proc.returncode == 141
    assert proc.stderr == ""
