"""The README's examples, pasted as a new user pastes them, give what the README shows: the
quick start's ``pytest example_project`` output (warm cache), the ``ascend-accuracy diagnose
example_project/models/overflow.onnx --out fix`` transcript, ``judge --threshold -1
--scale-tolerance none`` re-judging with nothing failing (without ``--scale-tolerance none`` the
recorded scale guard still failed norm: the README said -1 alone did), and the fixture table's
signatures (``check_dataset`` lacked ``postprocess``/``reference_inputs``). Lines that differ
from run to run (a temp path, the time taken, onnxruntime's version) are masked; every other
character of the README's blocks must be in the real output."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_ascend_accuracy.cli import main

pytest.importorskip("onnxruntime")

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
EXAMPLE = ROOT / "example_project"


def _block_starting(first_line: str) -> list:
    """The lines of the README's first fenced block whose first line starts with first_line."""
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", README, re.S | re.M):
        if block.startswith(first_line):
            return block.splitlines()
    raise AssertionError(f"no README block starts with {first_line!r}")


def _masked(line: str) -> str:
    line = re.sub(r"^dump kept: .*", "dump kept: <path>", line)
    line = re.sub(r"^(  compare them again: ascend-accuracy compare) \S+ \S+ --om-json \S+",
                  r"\1 <dump> <golden> --om-json <om json>", line)
    line = re.sub(r" in \d+\.\d+s =+$", " in <time> =", line)
    return re.sub(r"onnxruntime \d+\.\d+\.\d+", "onnxruntime <version>", line)


def _assert_block_in(expected: list, out: list) -> None:
    start = out.index(expected[0]) if expected[0] in out else None
    assert start is not None, f"{expected[0]!r} not in the output:\n" + "\n".join(out)
    got = [_masked(line) for line in out[start:start + len(expected)]]
    assert got == [_masked(line) for line in expected]


@pytest.fixture(scope="module")
def example_runs(tmp_path_factory):
    """``pytest example_project`` run twice from a folder holding a copy of it, at 80 columns:
    the first run fills the cache (and writes reports), the second is the README's warm run."""
    where = tmp_path_factory.mktemp("readme")
    shutil.copytree(EXAMPLE, where / "example_project",
                    ignore=shutil.ignore_patterns(".ascend-accuracy", "accuracy-report",
                                                  "__pycache__", ".pytest_cache"))
    # an xdist worker's own variables would make the inner run think it is one
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["COLUMNS"] = "80"
    for name in ("CI", "BUILD_NUMBER"):  # pytest then prints summary lines whole, not as shown
        env.pop(name, None)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "pytest", "example_project",
                               "-p", "no:cacheprovider", *args],
                              cwd=where, env=env, capture_output=True, text=True, timeout=300)

    cold = run("--accuracy-report=rep")
    warm = run()
    return where, cold, warm


def test_quick_start_output_is_the_readme_s(example_runs):
    _, cold, warm = example_runs
    assert cold.returncode == 1, cold.stdout + cold.stderr
    assert warm.returncode == 1, warm.stdout + warm.stderr
    expected = _block_starting("example_project/tests/accuracy_models.yaml")
    assert "cache: 29 hits, 0 misses" in expected
    _assert_block_in(expected, warm.stdout.splitlines())


def test_judge_threshold_minus_one_fails_nothing_only_without_the_scale_guard(
        example_runs, capsys):
    where, _, _ = example_runs
    assert "`judge --threshold -1 --scale-tolerance none` re-judges with nothing failing" in README
    (saved,) = (where / "rep").glob("*test_overflow_model_default*/compare.json")
    assert main(["judge", str(saved), "--threshold", "-1", "--scale-tolerance", "none"]) == 0
    assert capsys.readouterr().out.startswith("accuracy PASSED: 5 tensors meet cosine >= -1")
    # the recorded scale guard (2) still fails norm and to_flat
    assert main(["judge", str(saved), "--threshold", "-1"]) == 1
    assert capsys.readouterr().out.startswith("accuracy FAILED: 2 of 5 tensors fail cosine >= -1 "
                                              "or the scale guard")


def test_diagnose_transcript_is_the_readme_s(tmp_path, monkeypatch, capsys):
    block = _block_starting("$ ascend-accuracy diagnose ")
    argv = block[0][len("$ ascend-accuracy "):].split()
    assert argv == ["diagnose", "example_project/models/overflow.onnx", "--out", "fix"]
    (tmp_path / "example_project" / "models").mkdir(parents=True)
    shutil.copy(EXAMPLE / "models" / "overflow.onnx", tmp_path / "example_project" / "models")
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 0
    got = [_masked(line) for line in capsys.readouterr().out.splitlines()]
    assert got == [_masked(line) for line in block[1:]]
    assert (tmp_path / "fix" / "atc_args.txt").read_text().split() == [
        "--precision_mode=force_fp16", "--keep_dtype=fix/keep_dtype.cfg"]


def test_fixture_table_signatures_are_the_fixtures(pytester):
    rows = re.findall(r"^\| `(\w+)(\(.*?\))` \|", README, re.M)
    table = dict(rows)
    assert {"ascend_model", "golden_dump", "check_accuracy", "check_dataset",
            "check_preprocessing", "atc_convert", "accuracy_inputs"} <= set(table)
    pytester.makepyfile(test_sig=f"""
import inspect

def test_sig(request):
    for name in {sorted(table)!r}:
        print("SIG", name, inspect.signature(request.getfixturevalue(name)))
""")
    run = pytester.runpytest("-s", "-p", "no:cacheprovider")
    run.assert_outcomes(passed=1)
    real = dict(re.findall(r"\bSIG (\w+) (\(.*\))$", run.stdout.str(), re.M))
    assert {name: sig.replace("'", '"') for name, sig in real.items()} == table
