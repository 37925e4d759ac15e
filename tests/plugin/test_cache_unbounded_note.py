"""A session that added entries to an unbounded cache holding more than
``UNBOUNDED_NOTE_BYTES`` says so on its cache line, with the bound to set and the command that
prunes it (audits 32 and 33: a project cache grew to 2.4 GB and 4.2 GB within an hour, and
nothing said so). Pasted, the ini line is taken, spelled for the project's ini file (a review:
the bare 2GB stopped every run of a pyproject.toml project), and the note goes; the command
runs from anywhere (the cache's absolute path)."""
import re
import shlex

import pytest

from pytest_ascend_accuracy.core import cache_size

pytest.importorskip("onnxruntime")

TEST = """
def test_one(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/passing_mlp.onnx", seed=0)
    check_accuracy(ascend_model("models/passing_mlp.onnx").run(inputs),
                   golden_dump("models/passing_mlp.onnx", inputs))
"""


@pytest.fixture
def project(pytester, monkeypatch):
    from pytest_ascend_accuracy.testing.models import save_models

    save_models(pytester.path / "models", ["passing_mlp"])
    pytester.makepyfile(test_one=TEST)
    monkeypatch.setattr(cache_size, "UNBOUNDED_NOTE_BYTES", 1000)  # (a tiny cache is past it)
    return pytester


def _cache_line(result) -> str:
    return next(line for line in result.stdout.lines if line.startswith("cache: "))


def _second_test(project):
    project.makepyfile(test_two=TEST.replace("test_one", "test_two").replace(
        "seed=0", "seed=1"))  # a new golden: a miss


INI = {  # file: (its header, the line and section the note gives)
    "pytest.ini": ("[pytest]", "ascend_accuracy_cache_size = 2GB in [pytest] of pytest.ini"),
    "pyproject.toml": ("[tool.pytest.ini_options]", 'ascend_accuracy_cache_size = "2GB" in '
                       "[tool.pytest.ini_options] of pyproject.toml"),
    "setup.cfg": ("[tool:pytest]", "ascend_accuracy_cache_size = 2GB in [tool:pytest] of "
                  "setup.cfg"),
}


@pytest.mark.parametrize("ini", list(INI))
def test_the_note_names_the_bound_and_the_pasted_ini_line_takes_it_away(project, capsys, ini,
                                                                        tmp_path):
    header, spelled = INI[ini]
    (project.path / ini).write_text(header + "\n")
    line = _cache_line(project.runpytest("-p", "no:randomly"))
    assert re.fullmatch(r"cache: 0 hits, \d+ misses; it holds [\d.]+ [KM]B, unbounded: "
                        + re.escape(spelled) + r" keeps it within 2 GB \(least recently used "
                        r"entries go\), ascend-accuracy cache --cache-dir \S+ --max-size 2GB "
                        r"prunes it now", line), line
    command = line.split(", ascend-accuracy cache ")[1].rsplit(" prunes it now", 1)[0]
    from pytest_ascend_accuracy.cli import main

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    import os

    os.chdir(elsewhere)  # (pytester's chdir is undone after the test)
    assert main(["cache"] + shlex.split(command)) == 0
    assert re.fullmatch(r"cache \S+: removed 0 entries \(0 B\); [\d.]+ [KM]B left",
                        capsys.readouterr().out.splitlines()[-1])  # found, nothing to evict
    project.chdir()
    ini_line, section = spelled.split(" in ", 1)
    assert section.startswith(header)
    (project.path / ini).write_text(f"{header}\n{ini_line}\n")  # pasted as the note says
    _second_test(project)
    result = project.runpytest("-p", "no:randomly")
    assert result.ret == 0 and "unbounded" not in result.stdout.str()


def test_a_pyproject_with_pytest_9s_native_table_is_told_that_table(project):
    """A re-review: told [tool.pytest.ini_options] beside a native [tool.pytest], pytest
    stopped: both tables may not be used."""
    (project.path / "pyproject.toml").write_text("[tool.pytest]\n")
    line = _cache_line(project.runpytest("-p", "no:randomly"))
    assert 'ascend_accuracy_cache_size = "2GB" in [tool.pytest] of pyproject.toml' in line
    (project.path / "pyproject.toml").write_text('[tool.pytest]\nascend_accuracy_cache_size = '
                                                 '"2GB"\n')  # pasted into that table
    _second_test(project)
    result = project.runpytest("-p", "no:randomly")
    assert result.ret == 0 and "unbounded" not in result.stdout.str()


def test_a_session_that_added_nothing_says_nothing(project):
    project.runpytest("-p", "no:randomly")
    assert _cache_line(project.runpytest("-p", "no:randomly")).endswith(" 0 misses")
