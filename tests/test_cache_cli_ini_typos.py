"""``ascend-accuracy cache`` reads the ini file a ``pytest`` run reads and refuses what that run
refuses, naming the ini file, before listing or removing anything. A CI trial's pytest.ini said
``ascend_accuracy_cache_dirr = ccache``: the command listed and, with ``--max-size 1KB``,
pruned the default ``.ascend-accuracy`` (4 entries removed) while ``pytest`` refused the key.
The rule is one (``core.ini_keys``), checked here against the keys the plugin registers."""
import pytest

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.core.cache_size import entries
from pytest_ascend_accuracy.core.ini_keys import PLUGIN_INI_KEYS, PREFIX, misspelled_ini_key


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project with one entry in its default cache; cwd is the project."""
    cache = Cache(tmp_path / ".ascend-accuracy")
    try:
        cache.get_or_build("om", "k0", lambda tmp: (tmp / "data.bin").write_bytes(b"x" * 100))
    finally:
        cache.release()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _cached(project):
    cache = Cache(project / ".ascend-accuracy")
    try:
        return len(entries(cache))
    finally:
        cache.release()


@pytest.mark.parametrize("ini, line", [
    ("pytest.ini", "[pytest]\nascend_accuracy_cache_dirr = ccache\n"),
    ("tox.ini", "[pytest]\nascend_soc_versoin = Ascend310P3\n"),
    ("pyproject.toml", "[tool.pytest.ini_options]\nascend_accuracy_cache_sise = '10KB'\n"),
])
def test_a_misspelled_key_is_refused_naming_the_ini_file_and_nothing_is_pruned(
        project, capsys, monkeypatch, ini, line):
    (project / ini).write_text(line)
    typo = line.splitlines()[1].split("=")[0].strip()
    assert cli.main(["cache", "--max-size", "1KB"]) == 2
    assert cli.main(["cache", "--clear"]) == 2
    err = capsys.readouterr().err
    assert f"error: {ini}: unknown ini key {typo!r}; closest: '" in err, err
    assert _cached(project) == 1
    (project / "tests").mkdir()  # from below the rootdir: the ini file as found
    monkeypatch.chdir(project / "tests")
    assert cli.main(["cache"]) == 2
    assert f"{project / ini}: unknown ini key {typo!r}" in capsys.readouterr().err


def test_a_key_of_another_tool_and_the_right_keys_are_taken(project, capsys):
    """A key far from ours is another tool's (pytest only warns of it): not refused."""
    (project / "pytest.ini").write_text("[pytest]\nascend_toolkit_home = /opt\n"
                                        "ascend_accuracy_cache_size = 10KB\n")
    assert cli.main(["cache"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cache .ascend-accuracy: 1 entry, ") and ", bound 10.0 KB" in out


def test_a_bad_size_names_the_ini_file_as_found(project, capsys):
    (project / "pytest.ini").write_text("[pytest]\nascend_accuracy_cache_size = 10 KiloBites\n")
    assert cli.main(["cache", "--clear"]) == 2
    assert "error: ascend_accuracy_cache_size in pytest.ini: expected a size such as 2GB" in \
        capsys.readouterr().err
    assert _cached(project) == 1


def test_the_known_keys_are_those_the_plugin_registers(pytestconfig):
    """``PLUGIN_INI_KEYS`` (pytest-free, for the command) and ``pytest_addoption`` agree."""
    registered = {k for k in pytestconfig._parser._inidict if k.startswith(PREFIX)}
    assert registered == set(PLUGIN_INI_KEYS)
    key, near = misspelled_ini_key(["ascend_toolkit_home", "ascend_accuracy_max_dorp"])
    assert key == "ascend_accuracy_max_dorp" and near[0] == "ascend_accuracy_max_drop"


def test_a_command_line_option_written_as_a_key_is_refused_saying_so(project, capsys):
    """As a pytest run refuses it (tests/plugin/test_ini_command_line_options.py): before, the
    command named 'ascend_device_lock' as its closest key."""
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\nascend_device = '0'\n")
    assert cli.main(["cache"]) == 2
    err = capsys.readouterr().err
    assert ("error: pyproject.toml: unknown ini key 'ascend_device': --ascend-device is a "
            "command-line option, which has no ini key; give it on the command line "
            "(--ascend-device=0) or add it to the ini file's addopts "
            "(addopts = \"--ascend-device=0\", or after the options addopts has)") in err, err
