"""benchmarks/bench_check_suite.py (bench_check.py's -n 2 part) measures -n 2 as a user's
project runs it: pytest with this plugin and pytest-xdist only. The plugins must be named by entry point, as autoloading registers them
(``-p xdist.plugin`` registered xdist under another name, and the workers' results were then not
merged: test_xdist.py::test_workers_results_merge_with_plugin_autoloading_off)."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

BENCHMARKS = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))


def _bench(name="bench_check_suite"):
    path = os.path.join(BENCHMARKS, name + ".py")
    if not os.path.exists(path):
        pytest.skip("benchmarks/ not present")
    if BENCHMARKS not in sys.path:  # its sibling modules (ocr_models)
        sys.path.insert(0, BENCHMARKS)
    spec = importlib.util.spec_from_file_location(name, path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_the_user_environment_names_this_plugin_and_xdist_by_entry_point():
    pytest.importorskip("xdist")
    args, env = _bench().user_environment()
    assert env == {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    named = args[1::2]
    assert args[0::2] == ["-p"] * len(named)
    assert "ascend_accuracy" in named and "xdist" in named
    assert not any(n.startswith(("hypothesis", "benchmark")) for n in named)


def test_that_environment_loads_both_plugins(tmp_path):
    """Both plugins' own options are accepted there (either missing: a usage error, rc 4)."""
    pytest.importorskip("xdist")
    args, env = _bench().user_environment()
    out = subprocess.run([sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider",
                          *args, "-n", "2", "--accuracy-cache-dir", str(tmp_path / "cache")],
                         cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ, **env))
    assert out.returncode == 5, out.stdout + out.stderr  # 5: accepted, and nothing to collect


def test_the_runs_read_bytecode_even_where_writing_it_is_off(tmp_path, monkeypatch):
    """Where PYTHONDONTWRITEBYTECODE is set, every pytest process of a run would compile the
    package again (-n 2: three processes, serial: one); the runs share a compiled cache."""
    bench = _bench()
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    assert bench.bytecode_environment(tmp_path) == {}
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = bench.bytecode_environment(tmp_path)
    assert env == {"PYTHONDONTWRITEBYTECODE": None, "PYTHONPYCACHEPREFIX": str(tmp_path / "pycache")}
    applied = bench._environ(env)
    assert "PYTHONDONTWRITEBYTECODE" not in applied
    assert applied["PYTHONPYCACHEPREFIX"] == str(tmp_path / "pycache")
    # a process under it writes its bytecode there, and the next one reads it: nothing new
    code = [sys.executable, "-c", "import pytest_ascend_accuracy.plugin, numpy"]
    subprocess.run(code, env=applied, check=True)
    first = sorted((tmp_path / "pycache").rglob("*.pyc"))
    assert any("pytest_ascend_accuracy" in str(f) for f in first)
    subprocess.run(code, env=applied, check=True)
    assert sorted((tmp_path / "pycache").rglob("*.pyc")) == first


def test_the_file_system_of_the_work_dir_is_named(tmp_path):
    bench = _bench("bench_check")
    text = bench.file_system(tmp_path)
    if sys.platform.startswith("linux") and os.path.exists("/proc/self/mountinfo"):
        assert text != "?" and text.endswith(")")
    assert bench.file_system(tmp_path / "missing") == "?"


@pytest.mark.parametrize("extra", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_each_check_s_call_time_is_read_from_pytest_s_durations(pytester, extra):
    """The suite benchmark compares each check's call phase serially and under -n 2: read from
    a real pytest's ``--durations=0`` lines, as the benchmark runs it (setup and teardown lines
    are not calls). The lines are pytest's terminal output whichever process prints them: the
    session runs in this process (under -n 2 its workers are processes of their own)."""
    if extra:
        pytest.importorskip("xdist")
    pytester.makepyfile(test_two=(
        "import time, pytest\n"
        "@pytest.fixture\ndef slow():\n    time.sleep(0.3)\n    yield\n"
        "@pytest.mark.parametrize('mode', ['a', 'b'])\n"
        "def test_check(mode, slow):\n    time.sleep(0.01 if mode == 'a' else 0.06)\n"))
    bench = _bench()
    done = pytester.runpytest("-q", "-p", "no:cacheprovider", "--durations=0",
                              "--durations-min=0", *extra)
    stdout = done.stdout.str() + "\n"
    assert done.ret == 0, stdout + done.stderr.str()
    calls = bench.check_calls(stdout)
    assert sorted(calls) == ["test_two.py::test_check[a]", "test_two.py::test_check[b]"]
    # the call line's figure, not the setup line's (the fixture's 0.3 s): read from the output
    # itself, not bounded by wall-clock time (a 10 ms call is not under 0.3 s on every machine)
    setup_a, call_a = (re.search(rf"^([\d.]+)s {phase}\s+test_two.py::test_check\[a\]$",
                                 stdout, re.M) for phase in ("setup", "call"))
    assert setup_a and call_a and float(setup_a.group(1)) >= 0.3, stdout
    assert calls["test_two.py::test_check[a]"] == float(call_a.group(1)) >= 0.01
    assert calls["test_two.py::test_check[b]"] >= 0.06
    run = {"calls": calls, "wall_s": 1.0}
    slower = {"calls": {k: 2 * v for k, v in calls.items()}, "wall_s": 0.5}
    line = bench.calls_side_by_side(run, slower)
    assert line.startswith("test_check 2 checks ") and "(2.00 x)" in line


def test_sessions_without_checks_leave_pytests_own_temp_root_alone(tmp_path):
    """Without ``--basetemp`` xdist's controller takes a numbered directory under pytest's temp
    root in every session, and pytest deletes the oldest there: -n 2's "no check" wall included
    deleting an earlier test-suite run's directory (5.09 s against serial's 0.33 s)."""
    pytest.importorskip("xdist")
    bench = _bench()
    project = tmp_path / "project"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "test_none.py").write_text("def test_other():\n    pass\n")
    temproot = tmp_path / "temproot"
    temproot.mkdir()
    user, env = bench.user_environment()
    walls = bench.no_check_walls(project, user, dict(env, PYTEST_DEBUG_TEMPROOT=str(temproot)),
                                 runs=1)
    assert set(walls) == {"serial", "-n 2"}
    assert list(temproot.iterdir()) == []


def test_an_unknown_which_is_refused_with_the_known_names_not_a_traceback(capsys):
    """Audit 36 B F6: ``--which model-file`` ended in ``KeyError: 'model-file'``."""
    bench = _bench("bench_check")
    with pytest.raises(SystemExit) as exc:
        bench.main(["--which", "model-file", "--model-file", "m.onnx", "--input-shape", "x:1"])
    assert exc.value.code == 2
    assert ("--which model-file: not a shipped model; known: det, cls; measure a file of your "
            "own with --which \"\" --model-file PATH") in capsys.readouterr().err
