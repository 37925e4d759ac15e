"""The cache's size bound: LRU eviction under the key locks, leases of live processes, and the
``ascend-accuracy cache`` command."""
import os
import socket

import pytest

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.core.cache_size import entries, format_size, parse_size, prune
from pytest_ascend_accuracy.errors import ConfigError


def _build(size):
    def build(tmp):
        (tmp / "data.bin").write_bytes(b"x" * size)
    return build


def _fill(root, sizes, *, release=True):
    """Entries k0, k1, ... built in that order, used at times 1000, 2000, ... (k0 oldest)."""
    cache = Cache(root)
    paths = []
    for i, size in enumerate(sizes):
        p = cache.get_or_build("om", f"k{i}", _build(size))
        os.utime(p, (1000.0 * (i + 1), 1000.0 * (i + 1)))
        paths.append(p)
    if release:
        cache.release()
    return cache, paths


@pytest.mark.parametrize("text, expected", [("2GB", 2 << 30), ("500 MB", 500 << 20),
                                            ("1.5G", 3 << 29), ("1048576", 1 << 20),
                                            ("", None), ("none", None), ("0", 0)])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


def test_parse_size_names_the_setting():
    with pytest.raises(ConfigError, match="ascend_accuracy_cache_size.*2 parsecs"):
        parse_size("2 parsecs")
    assert format_size(1536) == "1.5 KB" and format_size(10) == "10 B"


def test_least_recently_used_entries_go_first(tmp_path):
    cache, paths = _fill(tmp_path, [4000, 4000, 4000])
    assert cache.lookup("om", "k0") == paths[0]  # k0 used now: k1 is the oldest
    cache.release()
    done = prune(cache, 9000)
    assert [e.key for e in done.removed] == ["k1"]
    assert paths[0].is_dir() and not paths[1].exists() and paths[2].is_dir()
    assert done.total_after <= 9000 < done.total_before


def test_bounded_cache_evicts_after_a_build_but_keeps_what_this_process_uses(tmp_path):
    _fill(tmp_path, [4000, 4000])
    bounded = Cache(tmp_path, max_bytes=9000)
    new = bounded.get_or_build("om", "k2", _build(4000))
    assert new.is_dir()  # just built and leased by this process: never the one evicted
    assert [e.key for e in entries(bounded)] == ["k1", "k2"]


LOOKER = """
import sys, time
from pytest_ascend_accuracy.core.cache import Cache
cache = Cache(sys.argv[1])
print(cache.lookup("om", sys.argv[2]) is not None, flush=True)
if sys.argv[3:] == ["release"]:
    sys.stdin.readline()
    cache.release()
    print("released", flush=True)
time.sleep(120)
"""


def _looker(root, key, *extra):
    """Another process that looked ``key`` up (holds its lease) and waits."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", LOOKER, str(root), key, *extra],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "True"
    return proc


def test_an_entry_another_process_holds_is_not_evicted(tmp_path):
    cache, paths = _fill(tmp_path, [4000, 4000])
    holder = _looker(tmp_path, "k0", "release")
    try:
        done = prune(cache, 0)
        assert [e.key for e in done.removed] == ["k1"]
        assert [e.key for e in done.kept_held] == ["k0"]
        assert paths[0].is_dir() and (paths[0] / "data.bin").stat().st_size == 4000
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "released"
        assert [e.key for e in prune(cache, 0).removed] == ["k0"]
    finally:
        holder.kill()
        holder.wait()


def test_an_entry_being_built_is_not_evicted(tmp_path):
    from filelock import FileLock

    cache, paths = _fill(tmp_path, [4000])
    with FileLock(str(cache.lock_path("om", "k0"))):  # another builder holds the key
        done = prune(cache, 0)
    assert done.removed == [] and paths[0].is_dir()


def test_leases_of_killed_processes_do_not_pin_entries(tmp_path):
    """A session killed (SIGKILL) without ``release``: the kernel dropped its lease with the
    process, so the next prune evicts the entry and removes the lease file."""
    cache, paths = _fill(tmp_path, [100])
    holder = _looker(tmp_path, "k0")
    assert entries(cache)[0].held_by.startswith("another session (its lease is held; the lease "
                                                f"file names pid {holder.pid} on ")
    holder.kill()
    holder.wait()
    assert entries(cache)[0].held_by == ""
    assert [e.key for e in prune(cache, 0).removed] == ["k0"]
    assert not cache.lease_path("om", "k0").exists()


def test_pid_leases_of_earlier_releases_pin_nothing(tmp_path):
    """``.use-<pid>`` files judged "in use" by pid: pid 1 of a container exists on the host
    forever. They pin nothing now, whatever pid they name, and a prune removes them."""
    cache, paths = _fill(tmp_path, [100])
    old = [tmp_path / ".locks" / f"om-k0.use-{pid}" for pid in (1, os.getpid(), 999999999)]
    for lease in old:
        lease.touch()
    assert [e.key for e in prune(cache, 0).removed] == ["k0"]
    assert not any(lease.exists() for lease in old)


def test_evicted_entry_is_rebuilt_on_next_use(tmp_path):
    cache, paths = _fill(tmp_path, [100])
    prune(cache, 0)
    calls = []
    again = Cache(tmp_path).get_or_build("om", "k0",
                                         lambda tmp: (calls.append(1), _build(100)(tmp)))
    assert calls == [1] and (again / "data.bin").stat().st_size == 100


def test_cache_command_lists_and_prunes(tmp_path, capsys):
    _fill(tmp_path, [3000, 3000, 3000])
    assert cli.main(["cache", "--cache-dir", str(tmp_path), "--entries"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"cache {tmp_path}: 3 entries, ")
    assert "om" in out and "om/k0" in out and "last used" in out
    assert cli.main(["cache", "--cache-dir", str(tmp_path), "--max-size", "7000B"]) == 0
    out = capsys.readouterr().out
    assert "removed 1 entry" in out and len(entries(Cache(tmp_path))) == 2
    assert cli.main(["cache", "--cache-dir", str(tmp_path), "--clear"]) == 0
    assert "removed 2 entries" in capsys.readouterr().out and entries(Cache(tmp_path)) == []


def test_cache_command_bad_size_is_a_clear_error(tmp_path, capsys):
    _fill(tmp_path, [10])
    assert cli.main(["cache", "--cache-dir", str(tmp_path), "--max-size", "lots"]) == 2
    assert "--max-size: expected a size such as 2GB" in capsys.readouterr().err


def test_folders_that_are_not_entries_are_neither_listed_nor_pruned(tmp_path):
    cache, paths = _fill(tmp_path, [100])
    diagnosis = tmp_path / "diagnoses" / "test_x.py--test_a" / "diagnosis"
    diagnosis.mkdir(parents=True)
    (diagnosis / "diagnosis.txt").write_text("verdict")
    assert [e.key for e in entries(cache)] == ["k0"]
    prune(cache, 0)
    assert (diagnosis / "diagnosis.txt").is_file() and not paths[0].exists()


def test_the_listing_names_folders_that_are_not_entries(tmp_path, capsys):
    """--clear printed '0 B left' beside --accuracy-diagnose's files, which it keeps (review
    helper): the listing says they are there and why they stay; an emptied namespace is not
    named."""
    _fill(tmp_path, [100])
    diagnosis = tmp_path / "diagnoses" / "test_x.py--test_a" / "diagnosis"
    diagnosis.mkdir(parents=True)
    (diagnosis / "diagnosis.txt").write_text("verdict")
    assert cli.main(["cache", "--cache-dir", str(tmp_path), "--clear"]) == 0
    capsys.readouterr()
    assert cli.main(["cache", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "  and diagnoses/ (7 B): not cache entries, never pruned or cleared" in out, out
    assert "om/" not in out


HOLDER = """
import sys
from pytest_ascend_accuracy.core.cache import Cache
cache = Cache(sys.argv[1])
entry = cache.get_or_build("om", "held", lambda tmp: (tmp / "data.bin").write_bytes(b"y" * 500))
print("ready", flush=True)
sys.stdin.readline()  # the other process prunes meanwhile
print((entry / "data.bin").read_bytes() == b"y" * 500, flush=True)
cache.release()
"""


def test_another_process_using_an_entry_keeps_it_through_a_prune(tmp_path):
    import subprocess
    import sys

    _fill(tmp_path, [100])
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        done = prune(Cache(tmp_path), 0)
        assert [e.key for e in done.removed] == ["k0"]
        assert [(e.key, e.holders) for e in done.kept_held] == [
            ("held", (f"pid {proc.pid} on {socket.gethostname()}",))]
        assert done.kept_held[0].held_by.startswith("another session (its lease is held")
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "True"
    finally:
        proc.communicate(timeout=60)
    assert [e.key for e in prune(Cache(tmp_path), 0).removed] == ["held"]  # released: evictable


def test_a_held_entry_is_never_moved_aside(tmp_path, monkeypatch):
    """An entry a live process leases stays in place through a prune: moving it aside and back
    took its files from the holder for a moment (a reviewer's second session on one cache
    failed its lazy reads while a bounded session pruned; 31,754 failed reads in 3 s of a
    prune loop, 0 now)."""
    from pytest_ascend_accuracy.core import cache_size

    cache, paths = _fill(tmp_path, [100, 100])
    holder = _looker(tmp_path, "k0")
    try:
        moved = []
        real = os.rename
        monkeypatch.setattr(cache_size.os, "rename",
                            lambda a, b: (moved.append(str(a)), real(a, b)))
        done = prune(Cache(tmp_path), 0)
        assert [e.key for e in done.removed] == ["k1"]
        assert [(e.key, e.holders) for e in done.kept_held] == [
            ("k0", (f"pid {holder.pid} on {socket.gethostname()}",))]
        assert moved == [str(paths[1])]  # the held entry was never renamed
    finally:
        holder.kill()
        holder.wait()


def test_a_directory_that_is_no_cache_is_neither_listed_nor_pruned(tmp_path, capsys):
    """``cache --clear`` on a folder laid out like shards (docs/zh/zh_CN) removed the user's
    file: only folders holding an entry's manifest are entries, and the command refuses a
    directory that is no cache, writing nothing into it."""
    docs = tmp_path / "docs" / "zh" / "zh_CN"
    docs.mkdir(parents=True)
    (docs / "index.md").write_text("t")
    assert entries(Cache(tmp_path)) == [] and prune(Cache(tmp_path), 0).removed == []
    for args in (["--clear"], ["--max-size", "0"], []):
        assert cli.main(["cache", "--cache-dir", str(tmp_path), *args]) == 2
        assert "is not an ascend-accuracy cache" in capsys.readouterr().err
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "docs", "docs/zh", "docs/zh/zh_CN", "docs/zh/zh_CN/index.md"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main(["cache", "--cache-dir", str(empty), "--clear"]) == 0
    assert "empty" in capsys.readouterr().out


@pytest.mark.parametrize("text, closest", [("2 gigabytes", "2GB"), ("2,5GB", "2.5GB"),
                                           ("2PB", "2048TB"), ("1e9", "1000000000"),
                                           ("1_000_000", "1000000B"), ("2 GBs", "2GB")])
def test_a_size_that_cannot_be_read_names_the_closest_that_can(text, closest):
    """``0.5`` was read as 0 (every build then cleared the cache); other refusals said only
    'expected a size such as 2GB'."""
    with pytest.raises(ConfigError, match=f"closest: '{closest}'"):
        parse_size(text)
    assert parse_size(closest) is not None
    assert parse_size("0.9KB") == 921 and parse_size("1.5G") == 3 << 29


@pytest.mark.parametrize("text", ["0.5", "1.5", "0.5B"])
def test_a_bare_fraction_is_offered_units_not_a_byte_count(text):
    """'0.5' suggested '1' (one byte): pasted as --max-size it clears the cache (review
    helper). A bare fraction lacks its unit; both readings it may have are offered."""
    number = text.rstrip("B")
    with pytest.raises(ConfigError, match=f"with a larger unit: {number}GB or {number}MB$"):
        parse_size(text)
    assert parse_size(f"{number}GB") and parse_size(f"{number}MB")


def test_a_killed_builds_leftovers_go_at_the_next_prune_and_a_running_build_stays(tmp_path,
                                                                                   capsys):
    """A build killed with SIGKILL left ``.tmp-<key>-*`` (30 MiB in a reviewer's run) that only
    a rebuild of that very key removed, uncounted and untouched by ``cache --clear``."""
    from filelock import FileLock

    cache, _ = _fill(tmp_path, [100])
    dead, live = "ab" + "1" * 62, "cd" + "2" * 62
    leftovers = {}
    for key in (dead, live):
        leftovers[key] = tmp_path / "golden" / key[:2] / f".tmp-{key}-4242-0a1b2c3d"
        leftovers[key].mkdir(parents=True)
        (leftovers[key] / "big.bin").write_bytes(b"x" * 1000)
    building = FileLock(str(cache.lock_path("golden", live)))
    with building:  # a build running now holds its key's lock
        # listed apart from the entries (the listing showed 1 entry of 121 KB beside 927 MB of
        # a killed build, review helper), and counted when removed (it said "removed 0 entries")
        assert cli.main(["cache", "--cache-dir", str(tmp_path)]) == 0
        out = capsys.readouterr().out
        assert "  and 1 unfinished build (1000 B, not counted above) running now" in out
        assert ("  and 1 unfinished build (1000 B, not counted above) of killed processes, "
                "removed by the next prune") in out
        done = prune(Cache(tmp_path), 1 << 30)
    assert (done.dead_builds, done.dead_bytes) == (1, 1000)
    assert not leftovers[dead].exists() and leftovers[live].is_dir()
    assert cli.main(["cache", "--cache-dir", str(tmp_path), "--clear"]) == 0
    assert "and 1 unfinished build of killed processes (1000 B)" in capsys.readouterr().out
    assert not leftovers[live].exists()


def test_a_bounded_cache_is_pruned_to_its_bound_when_the_session_ends(tmp_path):
    """The prunes after each build keep what the session uses; nothing pruned after it, so a
    session left its cache over the bound (4 entries, 200 KB under a 50 KB bound), and one of
    cache hits only never pruned at all (review helper)."""
    _fill(tmp_path, [4000, 4000, 4000])
    session = Cache(tmp_path, max_bytes=5000)
    for key in ("k0", "k1", "k2"):  # hits only: nothing built, nothing pruned
        assert session.lookup("om", key) is not None
    assert sum(e.size for e in entries(session)) > 5000
    session.release()
    assert sum(e.size for e in entries(session)) <= 5000
    assert [e.key for e in entries(session)] == ["k2"]  # the most recently used stays
    unbounded = Cache(tmp_path)
    assert unbounded.lookup("om", "k2") is not None
    unbounded.release()
    assert [e.key for e in entries(unbounded)] == ["k2"]


@pytest.mark.parametrize("ini_name, text", [
    ("pytest.ini", "[pytest]\nascend_accuracy_cache_dir = .cache-aa\nascend_accuracy_cache_size = 5KB\n"),
    ("tox.ini", "[pytest]\nascend_accuracy_cache_dir = .cache-aa\nascend_accuracy_cache_size = 5KB\n"),
    ("setup.cfg", "[tool:pytest]\nascend_accuracy_cache_dir = .cache-aa\nascend_accuracy_cache_size = 5KB\n"),
    ("pyproject.toml", '[tool.pytest.ini_options]\nascend_accuracy_cache_dir = ".cache-aa"\n'
                       'ascend_accuracy_cache_size = "5KB"\n')])
def test_cache_command_finds_the_cache_pytest_uses(tmp_path, capsys, monkeypatch, ini_name, text):
    """Without --cache-dir it looked at ./.ascend-accuracy only: from a sub-folder, or with an
    ini ascend_accuracy_cache_dir, it said "empty (the directory does not exist)" of a full
    cache, and --clear removed nothing with status 0 (review helper). It now finds the ini
    file and rootdir as pytest does, from PATH (default: here)."""
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / ini_name).write_text(text)
    _fill(project / ".cache-aa", [3000, 3000])
    monkeypatch.chdir(project / "tests")
    assert cli.main(["cache"]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith(f"cache {project / '.cache-aa'}: 2 entries, ") and first.endswith(
        f" KB, bound 5.0 KB (ascend_accuracy_cache_dir in {project / ini_name})"), out
    monkeypatch.chdir(tmp_path)
    assert cli.main(["cache", "project/tests", "--clear"]) == 0
    assert capsys.readouterr().out.startswith("cache project/.cache-aa: removed 2 entries")


def test_cache_command_default_is_under_the_rootdir(tmp_path, capsys, monkeypatch):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "sub").mkdir()
    _fill(tmp_path / ".ascend-accuracy", [100])
    monkeypatch.chdir(tmp_path / "sub")
    assert cli.main(["cache"]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith(f"cache {tmp_path / '.ascend-accuracy'}: 1 entry, ") and first.endswith(
        f" (the default under the rootdir {tmp_path}, ini file {tmp_path / 'pytest.ini'})"), out


def test_cache_command_reads_pytest_toml_and_without_ini_uses_the_common_ancestor(
        tmp_path, capsys, monkeypatch):
    """pytest 9 reads pytest.toml first; without any ini file the rootdir of `pytest tests`
    run from here is here, not tests/ (review helper)."""
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "pytest.toml").write_text('[pytest]\nascend_accuracy_cache_dir = "build/acc"\n')
    _fill(project / "build" / "acc", [100])
    monkeypatch.chdir(project)
    assert cli.main(["cache"]) == 0
    assert capsys.readouterr().out.startswith("cache build/acc: 1 entry, ")
    (project / "pytest.toml").unlink()
    bare = tmp_path / "bare"
    (bare / "tests").mkdir(parents=True)
    _fill(bare / ".ascend-accuracy", [100])
    monkeypatch.chdir(bare)
    assert cli.main(["cache", "tests"]) == 0
    assert capsys.readouterr().out.startswith("cache .ascend-accuracy: 1 entry, ")


def test_the_listing_keeps_its_columns_for_a_long_namespace(tmp_path, capsys):
    """A dataset reference's namespace (``dataset-reference-<32 hex>``) pushed its counts and
    sizes out of the columns the other namespaces' lines keep."""
    cache = Cache(tmp_path)
    cache.get_or_build("om", "k0", _build(10))
    cache.get_or_build("dataset-reference-01cb7000ea54d67a12cd84dc14a67225", "k1", _build(20))
    cache.release()
    assert cli.main(["cache", "--cache-dir", str(tmp_path)]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  ")][:2]
    assert len(lines) == 2 and len({line.index(" entry") for line in lines}) == 1, lines


@pytest.mark.parametrize("text", ["500", "2", "1000"])
def test_a_small_size_without_a_unit_is_refused_not_read_as_bytes(text):
    """'ascend-accuracy cache --max-size 500' removed every entry (1.1 GB) without a word: 500
    bytes (a trial). Below 1 MB a unit is asked for; '500B' still means bytes."""
    with pytest.raises(ConfigError) as info:
        parse_size(text, "--max-size")
    assert str(info.value).startswith(f"--max-size: {text!r} has no unit and would be {text} "
                                      f"bytes, which would evict nearly every entry")
    assert f"give the unit: {text}MB or {text}GB ({text}B if bytes are meant)" in str(info.value)
    assert parse_size(f"{text.split('.')[0]}MB") == int(text.split('.')[0]) << 20  # as printed
    assert parse_size("500B") == 500


@pytest.mark.parametrize("how", ["env", "ini"])
def test_a_refused_cache_directory_is_named_where_it_was_given(tmp_path, capsys, monkeypatch, how):
    """The directory came from PYTEST_ADDOPTS or the ini file, not from --cache-dir: the error
    said "--cache-dir: ... is not an ascend-accuracy cache" of an option never given."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("t")
    monkeypatch.chdir(tmp_path)
    if how == "env":
        monkeypatch.setenv("PYTEST_ADDOPTS", "--accuracy-cache-dir=docs")
        where = "--accuracy-cache-dir in PYTEST_ADDOPTS"
    else:
        monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
        (tmp_path / "pytest.ini").write_text("[pytest]\nascend_accuracy_cache_dir = docs\n")
        where = "ascend_accuracy_cache_dir in pytest.ini"
    assert cli.main(["cache", "--clear"]) == 2
    err = capsys.readouterr().err
    assert f"{where}: docs is not an ascend-accuracy cache" in err, err
    assert "--cache-dir" not in err
    assert (tmp_path / "docs" / "index.md").is_file()
