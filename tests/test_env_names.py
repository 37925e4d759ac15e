"""A misspelled ``ASCEND_ACCURACY_*`` variable (``ASCEND_ACCURACY_ORT_THREAD=2``) changed nothing
with nothing said (a sweep of names a user gives); the plugin and the CLI refuse it naming the
closest variable, and the name they advise is read."""
import re
from pathlib import Path

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.core.env_names import KNOWN, PREFIX

ROOT = Path(__file__).resolve().parents[1]


def test_the_known_names_are_the_ones_read_and_documented():
    source = " ".join(p.read_text() for p in (ROOT / "pytest_ascend_accuracy").rglob("*.py")
                      if p.name != "env_names.py")  # (which names a misspelling)
    read = set(re.findall(PREFIX + r"[A-Z0-9_]+", source))
    documented = set(re.findall(PREFIX + r"[A-Z0-9_]+", (ROOT / "README.md").read_text()))
    assert read == documented == set(KNOWN)


def test_the_cli_refuses_a_misspelled_variable(monkeypatch, capsys, dumps):
    actual, golden = dumps
    monkeypatch.setenv("ASCEND_ACCURACY_ORT_THREAD", "2")
    assert cli.main(["compare", str(actual), str(golden)]) == 2
    assert ("environment: unknown variable ASCEND_ACCURACY_ORT_THREAD; closest: "
            "'ASCEND_ACCURACY_ORT_THREADS'") in capsys.readouterr().err
    monkeypatch.delenv("ASCEND_ACCURACY_ORT_THREAD")
    monkeypatch.setenv("ASCEND_ACCURACY_ORT_THREADS", "2")  # the advised name
    assert cli.main(["compare", str(actual), str(golden)]) == 1  # a verdict: Add/1 negated


def _refused_then_run(pytester, monkeypatch, given: dict, said: str, advised: dict):
    """A session under the variables ``given`` exits 4 saying ``said``; under ``advised``
    instead (the name or value the error names) it runs."""
    pytester.makepyfile("def test_it():\n    pass\n")
    for name, value in given.items():
        monkeypatch.setenv(name, value)
    refused = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert refused.ret == 4
    refused.stderr.fnmatch_lines([f"*{said}*"])
    for name in given:
        monkeypatch.delenv(name)
    for name, value in advised.items():
        monkeypatch.setenv(name, value)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_pytest_session_refuses_a_misspelled_variable(pytester, monkeypatch):
    _refused_then_run(pytester, monkeypatch, {"ASCEND_ACCURACY_NUMPY_KERNELS": "1"},
                      "unknown variable ASCEND_ACCURACY_NUMPY_KERNELS; closest: "
                      "'ASCEND_ACCURACY_NUMPY_KERNEL'", {"ASCEND_ACCURACY_NUMPY_KERNEL": "1"})


def test_a_misspelled_runtime_is_refused_on_the_emulator_too(pytester, monkeypatch):
    """ASCEND_ACCURACY_RUNTIME=acll, set for an NPU run, was read only by the ascend backend: on
    a laptop it passed unsaid, and the NPU run failed later."""
    _refused_then_run(pytester, monkeypatch, {"ASCEND_ACCURACY_RUNTIME": "acll"},
                      "expected one of auto, acl, ais_bench, got 'acll' (from "
                      "$ASCEND_ACCURACY_RUNTIME); closest: 'acl'",
                      {"ASCEND_ACCURACY_RUNTIME": "acl"})


def test_the_cli_refuses_a_misspelled_runtime_too(monkeypatch, capsys, dumps):
    """The CLI checked the names only: ``ASCEND_ACCURACY_RUNTIME=acll ascend-accuracy compare``
    ran (on dumps, no runtime needed) and the typo waited for the NPU machine."""
    actual, golden = dumps
    monkeypatch.setenv("ASCEND_ACCURACY_RUNTIME", "acll")
    assert cli.main(["compare", str(actual), str(golden)]) == 2
    assert ("runtime: expected one of auto, acl, ais_bench, got 'acll' (from "
            "$ASCEND_ACCURACY_RUNTIME); closest: 'acl'") in capsys.readouterr().err
    monkeypatch.setenv("ASCEND_ACCURACY_RUNTIME", "acl")  # the advised value
    assert cli.main(["compare", str(actual), str(golden)]) == 1  # a verdict: Add/1 negated
