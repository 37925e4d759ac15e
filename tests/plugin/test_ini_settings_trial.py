"""Ini settings as a CI trial met them: a key without the ``ascend_`` prefix
(``accuracy_threshold``, mirroring ``--accuracy-threshold``) got pytest's generic warning while
the threshold stayed 0.95; value errors did not name the ini file; and ``ascend-accuracy cache``
must find the cache directory pytest uses from ``addopts``/``PYTEST_ADDOPTS`` (the two agree)."""
import pytest

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.plugin.session import get_state


def _cache_dir(pytester, *args):
    config = pytester.parseconfigure(*args)
    try:  # (no full gc passes at this config's teardown: see tests/plugin/test_options.py)
        from _pytest.unraisableexception import gc_collect_iterations_key
        config.stash[gc_collect_iterations_key] = 0
    except ImportError:
        pass
    return get_state(config).settings.cache_dir


@pytest.mark.parametrize("ini, env", [
    ("addopts = --strict-markers --accuracy-cache-dir=from-addopts", None),
    ("addopts = --accuracy-cache-dir=from-addopts\nascend_accuracy_cache_dir = key", "-q"),
    ("ascend_accuracy_cache_dir = from-key", "--accuracy-cache-dir other -o x=y"),
    ("ascend_accuracy_cache_dir = from-key", None),
    ("addopts = --accuracy-cache-dir=a", "--accuracy-cache-dir=from-env"),
    ("ascend_accuracy_cache_dir = from-key", "-o ascend_accuracy_cache_dir=from-o"),
])
def test_the_command_names_the_cache_dir_pytest_uses(pytester, monkeypatch, capsys, ini, env):
    """Run from the project's tests/ folder, where a relative option and a relative ini key
    part: the plugin's cache directory and the command's are one."""
    pytester.makeini(f"[pytest]\n{ini}\n")
    (pytester.path / "tests").mkdir()
    monkeypatch.chdir(pytester.path / "tests")
    if env is None:
        monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    else:
        monkeypatch.setenv("PYTEST_ADDOPTS", env)
    used = _cache_dir(pytester)
    capsys.readouterr()
    assert cli.main(["cache"]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    shown = line[len("cache "):].split(": ", 1)[0]
    assert (pytester.path / "tests" / shown).resolve() == used.resolve(), (line, used)


def test_a_key_without_the_prefix_is_refused_naming_the_file_and_the_key(pytester):
    pytester.makeini("[pytest]\naccuracy_threshold = 0.99999\n")
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "ERROR: pytest-ascend-accuracy: *tox.ini: unknown ini key 'accuracy_threshold' (this "
        "plugin's ini keys start with ascend_); closest: 'ascend_accuracy_threshold'"])


def test_another_plugins_key_without_our_prefix_is_left_alone(pytester):
    pytester.makeconftest("def pytest_addoption(parser):\n"
                          "    parser.addini('soc_version', 'another plugin')\n")
    pytester.makeini("[pytest]\nsoc_version = x\ncache_dir = .pc\n")
    pytester.makepyfile("def test_ok(): pass")
    pytester.runpytest().assert_outcomes(passed=1)


@pytest.mark.parametrize("line, problem", [
    ("ascend_accuracy_cache_size = 2 GiBs", "expected a size such as 2GB, 500MB or 1048576 "
                                            "(bytes), got '2 GiBs'; closest: '2GiB'"),
    ("ascend_accuracy_max_drop = abc", "must be a number within [[]0, 1[]], got 'abc'"),
    ("ascend_accuracy_worksteal = maybe", "must be true or false (or yes/no, on/off, 1/0), got "
                                          "'maybe'*"),
    ("ascend_accuracy_dump_mode = outputs", "unknown dump mode 'outputs': expected one of "
                                            "output, input, all; closest: 'output'*"),
])
def test_a_bad_value_names_the_ini_file_and_the_command_refuses_it_too(
        pytester, monkeypatch, capsys, line, problem):
    pytester.makeini(f"[pytest]\n{line}\n")
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    key = line.split(" = ")[0]
    result.stderr.fnmatch_lines([f"ERROR: pytest-ascend-accuracy: {key} in {pytester.path}"
                                 f"/tox.ini: {problem}"])
    monkeypatch.chdir(pytester.path)
    assert cli.main(["cache"]) == 2  # one shared check (backends.ini_values)
    assert f"error: {key} in tox.ini: " in capsys.readouterr().err
