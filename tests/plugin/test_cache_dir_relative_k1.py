"""Where a relative cache directory lies (CI trial finding 5): ``--accuracy-cache-dir``
relative to where pytest ran, as ``--accuracy-report`` and ``ascend-accuracy cache --cache-dir``
take it; ini ``ascend_accuracy_cache_dir`` relative to the rootdir, as pytest's own
``cache_dir`` and ``ascend-accuracy cache``; the header prints it relative to where pytest ran."""
import pytest

from pytest_ascend_accuracy.plugin.session import get_state

HEADER = "ascend-accuracy: emulator backend *; cache {}"


def _settings(pytester, *args):
    config = pytester.parseconfigure(*args)
    try:  # (no full gc passes at this config's teardown: see tests/plugin/test_options.py)
        from _pytest.unraisableexception import gc_collect_iterations_key
        config.stash[gc_collect_iterations_key] = 0
    except ImportError:
        pass
    return get_state(config).settings


@pytest.fixture
def in_subfolder(pytester, monkeypatch):
    """A project with its ini at the top, pytest run from its tests/ folder."""
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(**{"tests/test_ok": "def test_ok(): pass"})
    monkeypatch.chdir(pytester.path / "tests")
    return pytester.path / "tests"


def test_a_relative_option_is_relative_to_where_pytest_ran(pytester, in_subfolder):
    s = _settings(pytester, "--accuracy-cache-dir=mycache")
    assert s.cache_dir == in_subfolder / "mycache"  # was the rootdir's mycache
    result = pytester.runpytest("--accuracy-cache-dir=mycache", "test_ok.py")
    result.stdout.fnmatch_lines([HEADER.format("mycache")])


def test_a_relative_ini_value_is_relative_to_the_rootdir(pytester, in_subfolder):
    pytester.makeini("[pytest]\nascend_accuracy_cache_dir = ccache\n")
    assert _settings(pytester).cache_dir == pytester.path / "ccache"
    result = pytester.runpytest("test_ok.py")
    result.stdout.fnmatch_lines([HEADER.format("../ccache")])  # pastes from tests/


def test_an_empty_option_is_a_usage_error(pytester, in_subfolder):
    result = pytester.runpytest("--accuracy-cache-dir=", "test_ok.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--accuracy-cache-dir: given with an empty value*"])
