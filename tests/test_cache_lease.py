"""Leases on cache entries are locks the holder's kernel holds (``core.cache_lease``), not
process ids: a session in another PID namespace (a second CI container on one cache volume)
keeps its entry through a prune, a killed one's lease goes with it, a session that comes while
a pruner evicts waits and rebuilds, and a session past its file-descriptor budget pins the
cache with one more file instead of one per entry."""
import errno
import fcntl
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.core import cache_lease
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.core.cache_size import entries, prune

# holds the lease of argv[2] (a lookup), says so with its pid as it sees it, and waits
LOOKER = """
import os, sys, time
from pytest_ascend_accuracy.core.cache import Cache
cache = Cache(sys.argv[1])
found = cache.lookup("om", sys.argv[2]) is not None
print(found, os.getpid(), flush=True)
sys.stdin.readline()
print(all(p.read_bytes() == b"x" * 100 for p in cache.entry_path("om", sys.argv[2]).glob("*.bin")),
      flush=True)
cache.release()
"""


def _fill(root, n=1):
    cache = Cache(root)
    for i in range(n):
        cache.get_or_build("om", f"k{i}", lambda tmp: (tmp / "data.bin").write_bytes(b"x" * 100))
    cache.release()
    return cache


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    done = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"],
                          capture_output=True, timeout=30)
    return done.returncode == 0


def _holder(root, key, *, new_pid_namespace=False):
    cmd = [sys.executable, "-c", LOOKER, str(root), key]
    if new_pid_namespace:
        # (--kill-child: the session dies with unshare, as a container's processes with it)
        cmd = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"] + cmd
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    found, pid = proc.stdout.readline().split()
    assert found == "True"
    return proc, int(pid)


@pytest.mark.skipif(not _unshare_works(),
                    reason="needs `unshare --pid --fork --mount-proc` (root, or user namespaces "
                           "allowed): a session in another PID namespace")
def test_a_session_in_another_pid_namespace_keeps_its_entry(tmp_path, capsys):
    """The CI trial: a session in a second container (own PID namespace) looked dead by pid,
    ``cache --clear`` removed its entry mid-test and it failed 'unreadable emulator plan'."""
    _fill(tmp_path, 2)
    proc, pid_inside = _holder(tmp_path, "k0", new_pid_namespace=True)
    try:
        assert pid_inside != proc.pid  # its pid means nothing here (1 or 2 inside)
        assert cli.main(["cache", "--cache-dir", str(tmp_path), "--clear"]) == 0
        out = capsys.readouterr().out
        assert "removed 1 entry" in out, out
        assert (f"  kept om/k0 ({100 + len(_manifest(tmp_path, 'k0'))} B): in use by another "
                f"session (its lease is held; the lease file names pid {pid_inside} on "
                f"{socket.gethostname()})") in out, out
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "True"  # its files were there throughout
    finally:
        proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert [e.key for e in prune(Cache(tmp_path), 0).removed] == ["k0"]  # released


@pytest.mark.skipif(not _unshare_works(), reason="needs `unshare --pid --fork --mount-proc`")
def test_a_killed_session_of_another_pid_namespace_pins_nothing(tmp_path):
    """The reverse: its pid (1 or 2 inside) exists out here, and a pid lease was 'in use by
    process 1' forever; the kernel dropped the lock with the process."""
    _fill(tmp_path)
    proc, _ = _holder(tmp_path, "k0", new_pid_namespace=True)
    assert entries(Cache(tmp_path))[0].held_by.startswith("another session")
    proc.kill()  # unshare's child (the namespace's init) is SIGKILLed with it
    proc.wait()
    deadline = time.monotonic() + 30  # (the child dies just after unshare)
    while entries(Cache(tmp_path))[0].held_by and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [e.key for e in prune(Cache(tmp_path), 0).removed] == ["k0"]


def test_a_live_lease_blocks_eviction_and_a_killed_holders_does_not(tmp_path):
    """Same namespace, portable: held by a running process, kept; SIGKILLed without release
    (no atexit, no cleanup), evicted by the next prune."""
    _fill(tmp_path)
    proc, _ = _holder(tmp_path, "k0")
    try:
        done = prune(Cache(tmp_path), 0)
        assert done.removed == [] and [e.key for e in done.kept_held] == ["k0"]
    finally:
        proc.kill()
        proc.wait()
    done = prune(Cache(tmp_path), 0)
    assert [e.key for e in done.removed] == ["k0"] and done.kept_held == []


def test_a_session_that_comes_while_an_entry_is_evicted_waits_then_rebuilds(tmp_path):
    """The pruner holds the lease file exclusively from its check to the entry's removal: a
    lookup in that window waits, then finds no entry (never a half-removed one)."""
    cache = _fill(tmp_path)
    lease = cache.lease_path("om", "k0")
    fd = cache_lease.try_exclusive(lease)
    assert fd is not None
    seen, other = [], Cache(tmp_path)
    looker = threading.Thread(target=lambda: seen.append(other.lookup("om", "k0")))
    looker.start()
    time.sleep(0.3)
    assert looker.is_alive() and seen == []  # waiting for the pruner
    shutil.rmtree(cache.entry_path("om", "k0"))
    cache_lease.remove_locked(lease, fd)
    looker.join(30)
    assert seen == [None]
    assert lease.exists() and cache_lease.held(lease)  # the looker's lease on a new file
    other.release()
    assert not cache_lease.held(lease)


def test_the_sessions_own_lease_keeps_its_entry_in_its_own_prune(tmp_path):
    cache = _fill(tmp_path, 2)
    assert cache.lookup("om", "k0") is not None
    done = prune(cache, 0)
    assert [e.key for e in done.removed] == ["k1"]
    assert [(e.key, e.held_by) for e in done.kept_held] == [("k0", "this session")]
    cache.release()
    assert [e.key for e in prune(cache, 0).removed] == ["k0"]


def _open_fds():
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
def test_open_files_stay_bounded_past_the_budget(tmp_path, capsys):
    """One open lease file per entry up to ``max_lease_fds``, then one more for all of them:
    while that session runs a prune evicts nothing (its entries are not told apart), and its
    end prunes to the bound."""
    _fill(tmp_path, 6)
    before = _open_fds()
    session = Cache(tmp_path, max_lease_fds=2, max_bytes=0)
    for i in range(6):
        assert session.lookup("om", f"k{i}") is not None
    assert _open_fds() - before == 3
    assert cli.main(["cache", "--cache-dir", str(tmp_path), "--clear"]) == 0
    out = capsys.readouterr().out
    assert "removed 0 entries" in out and out.count("kept om/k") == 6, out
    assert f"in use by a session using more entries at once than it keeps lease files open " \
           f"for (it holds .locks/{cache_lease.ALL}; its end prunes to the bound)" in out
    session.release()
    assert _open_fds() == before and entries(Cache(tmp_path)) == []


def test_max_fds_is_a_quarter_of_the_soft_limit():
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    expected = 1024 if soft == resource.RLIM_INFINITY else max(16, min(1024, soft // 4))
    assert cache_lease.max_fds() == expected


def _manifest(root, key):
    return (Cache(root).entry_path("om", key) / ".manifest.json").read_bytes()


class _RefusingFcntl:
    """``fcntl`` of a file system that refuses ``flock`` (some NFS mounts): ``ENOLCK``."""
    LOCK_EX, LOCK_SH, LOCK_NB, LOCK_UN = fcntl.LOCK_EX, fcntl.LOCK_SH, fcntl.LOCK_NB, fcntl.LOCK_UN

    @staticmethod
    def flock(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")


def test_where_flock_is_refused_a_prune_keeps_every_entry_and_says_why(tmp_path, monkeypatch,
                                                                       capsys):
    """No lease can be seen there: evicting would remove entries running sessions use, so
    they stay, each said so (``cache --clear`` printed 'removed 0 entries', nothing else)."""
    _fill(tmp_path, 2)
    monkeypatch.setattr(cache_lease, "fcntl", _RefusingFcntl)
    assert cli.main(["cache", "--cache-dir", str(tmp_path), "--clear"]) == 0
    out = capsys.readouterr().out
    assert "removed 0 entries" in out, out
    for key in ("k0", "k1"):
        assert (f"  kept om/{key} ({100 + len(_manifest(tmp_path, key))} B): cannot tell "
                f"whether a session uses it: this file system refuses file locks (flock): No "
                f"locks available") in out, out
    session = Cache(tmp_path, max_bytes=0)  # a bounded session's prune: the same, said
    session.get_or_build("om", "k2", lambda tmp: (tmp / "data.bin").write_bytes(b"x" * 100))
    done = prune(session, 0)
    assert done.removed == [] and [e.key for e in done.kept_held] == ["k0", "k1", "k2"]
    assert all(e.why.startswith(cache_lease.REFUSED) for e in done.kept_held)
    session.release()
    assert len(entries(Cache(tmp_path))) == 3


def test_a_lease_taken_on_a_file_a_prune_removed_meanwhile_is_retaken(tmp_path, monkeypatch):
    """A session opens the lease file, a prune evicts the entry and unlinks that file, then
    the session locks what it opened: held on the unlinked file, no prune would see it, and
    the entry it rebuilt was evicted under it (``_same_file`` makes it lease the new file)."""
    _fill(tmp_path)
    opened, pruned = threading.Event(), threading.Event()
    real_open = cache_lease._open

    def slow_open(path, create):
        fd = real_open(path, create)
        if threading.current_thread().name == "session" and not opened.is_set():
            opened.set()
            pruned.wait(30)
        return fd

    monkeypatch.setattr(cache_lease, "_open", slow_open)
    got = {}

    def session():
        got["cache"] = Cache(tmp_path)
        got["path"] = got["cache"].get_or_build(
            "om", "k0", lambda tmp: (tmp / "data.bin").write_bytes(b"x" * 100))

    thread = threading.Thread(target=session, name="session")
    thread.start()
    assert opened.wait(30)
    assert [e.key for e in prune(Cache(tmp_path), 0).removed] == ["k0"]
    pruned.set()
    thread.join(30)
    done = prune(Cache(tmp_path), 0)
    assert done.removed == [] and [e.key for e in done.kept_held] == ["k0"]
    assert (got["path"] / "data.bin").read_bytes() == b"x" * 100
    got["cache"].release()
