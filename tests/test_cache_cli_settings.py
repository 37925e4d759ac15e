"""``ascend-accuracy cache`` finds the cache a ``pytest`` run from here uses, as pytest finds it
(a CI trial: ``addopts = --accuracy-cache-dir=...`` in pytest.ini, pytest wrote its entries
there while the command listed and pruned ``.ascend-accuracy``): the command line's last
``--accuracy-cache-dir`` among the ini file's ``addopts`` then ``PYTEST_ADDOPTS`` (relative to
where pytest runs), else ``-o``/the ini key (relative to the rootdir), else the default; and it
refuses the ini files pytest refuses (a key without its ``ascend_`` prefix, a bad value)."""
import pytest

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.core.cache_size import entries


def _fill(root, n=1):
    cache = Cache(root)
    try:
        for k in range(n):
            cache.get_or_build("om", f"k{k}", lambda tmp: (tmp / "d.bin").write_bytes(b"x" * 100))
    finally:
        cache.release()


def _count(root):
    cache = Cache(root)
    try:
        return len(entries(cache))
    finally:
        cache.release()


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project whose default cache holds 2 entries; cwd is the project."""
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    _fill(tmp_path / ".ascend-accuracy", 2)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_option_in_addopts_is_the_cache_listed_and_pruned(project, capsys):
    (project / "pytest.ini").write_text(f"[pytest]\naddopts = --strict-markers "
                                        f"--accuracy-cache-dir={project}/addopts-cache\n")
    _fill(project / "addopts-cache")
    assert cli.main(["cache"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cache addopts-cache: 1 entry, ") and \
        "(--accuracy-cache-dir in pytest.ini addopts)" in out.splitlines()[0], out
    assert cli.main(["cache", "--clear"]) == 0
    assert _count(project / "addopts-cache") == 0 and _count(project / ".ascend-accuracy") == 2


def test_pytest_addopts_wins_over_addopts_and_the_ini_key(project, capsys, monkeypatch):
    (project / "pytest.ini").write_text("[pytest]\naddopts = --accuracy-cache-dir ini-opt\n"
                                        "ascend_accuracy_cache_dir = ini-key\n")
    assert cli.main(["cache"]) == 0
    assert "cache ini-opt: empty (the directory does not exist) (--accuracy-cache-dir in " \
           "pytest.ini addopts)" in capsys.readouterr().out
    monkeypatch.setenv("PYTEST_ADDOPTS", "-q '--accuracy-cache-dir=env cache'")
    assert cli.main(["cache"]) == 0
    assert "cache env cache: empty (the directory does not exist) (--accuracy-cache-dir in " \
           "PYTEST_ADDOPTS)" in capsys.readouterr().out


def test_an_override_of_the_ini_key_wins_over_the_ini_file(project, capsys, monkeypatch):
    (project / "pytest.ini").write_text("[pytest]\nascend_accuracy_cache_dir = ini-key\n")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-o ascend_accuracy_cache_dir=over")
    assert cli.main(["cache"]) == 0
    assert "cache over: empty (the directory does not exist) (ascend_accuracy_cache_dir in -o " \
           "(PYTEST_ADDOPTS))" in capsys.readouterr().out


def test_the_option_is_relative_to_here_the_key_to_the_rootdir(project, capsys, monkeypatch):
    """As the plugin takes them (``plugin.settings_values.read_cache_dir``)."""
    (project / "pytest.ini").write_text("[pytest]\nascend_accuracy_cache_dir = ccache\n")
    (project / "tests").mkdir()
    monkeypatch.chdir(project / "tests")
    assert cli.main(["cache"]) == 0
    assert capsys.readouterr().out.startswith(f"cache {project / 'ccache'}: ")
    monkeypatch.setenv("PYTEST_ADDOPTS", "--accuracy-cache-dir=here")
    assert cli.main(["cache"]) == 0
    assert capsys.readouterr().out.startswith("cache here: empty")


@pytest.mark.parametrize("line, problem", [
    ("accuracy_threshold = 0.99999", "pytest.ini: unknown ini key 'accuracy_threshold' (this "
                                     "plugin's ini keys start with ascend_); closest: "
                                     "'ascend_accuracy_threshold'"),
    ("accuracy_cache_dirr = x", "pytest.ini: unknown ini key 'accuracy_cache_dirr'"),
    ("ascend_accuracy_max_drop = abc", "ascend_accuracy_max_drop in pytest.ini: must be a number "
                                       "within [0, 1], got 'abc'"),
    ("ascend_accuracy_worksteal = maybe", "ascend_accuracy_worksteal in pytest.ini: must be true "
                                          "or false"),
    ("ascend_accuracy_dump_mode = outputs", "ascend_accuracy_dump_mode in pytest.ini: unknown "
                                            "dump mode 'outputs': expected one of output, input, "
                                            "all; closest: 'output'"),
    ("ascend_accuracy_cache_size = 2 GiBs", "ascend_accuracy_cache_size in pytest.ini: expected a "
                                            "size such as 2GB, 500MB or 1048576 (bytes), got "
                                            "'2 GiBs'; closest: '2GiB'"),
])
def test_what_pytest_refuses_is_refused_and_nothing_is_pruned(project, capsys, line, problem):
    (project / "pytest.ini").write_text(f"[pytest]\n{line}\n")
    assert cli.main(["cache", "--clear"]) == 2
    assert f"error: {problem}" in capsys.readouterr().err
    assert _count(project / ".ascend-accuracy") == 2


def test_other_keys_without_the_prefix_are_left_to_pytest(project, capsys):
    (project / "pytest.ini").write_text("[pytest]\ncache_dir = .pc\ntimeout = 5\n"
                                        "threshold_mode = x\naddopts = -q\n")
    assert cli.main(["cache"]) == 0
    assert capsys.readouterr().out.startswith("cache .ascend-accuracy: 2 entries")


def test_a_misspelled_cache_dir_names_the_folder_beside_it(tmp_path, capsys, monkeypatch):
    """``--cache-dir .ascend-accuracx`` said only that it does not exist, beside the cache."""
    monkeypatch.chdir(tmp_path)
    _fill(tmp_path / ".ascend-accuracy")
    assert cli.main(["cache", "--cache-dir", ".ascend-accuracx"]) == 0
    assert capsys.readouterr().out == ("cache .ascend-accuracx: empty (the directory does not "
                                       "exist) (closest: .ascend-accuracy)\n")
    assert cli.main(["cache", "--cache-dir", "nothing-near"]) == 0
    assert capsys.readouterr().out == "cache nothing-near: empty (the directory does not exist)\n"
    # the closest pasted lists the cache
    assert cli.main(["cache", "--cache-dir", ".ascend-accuracy"]) == 0
    assert "1 entr" in capsys.readouterr().out
