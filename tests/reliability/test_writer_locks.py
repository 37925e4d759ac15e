"""Cleaning up after killed writers judges them by the lock they hold (``core.writer_lock``),
not by their process id: a live writer in another PID namespace (a second CI container writing
into the same repository) keeps its temp folder mid-write, and a killed writer's leftovers go,
whatever pid they name (a container's pid 1 looked alive here forever).

Before the locks, a stored golden's recovery in this namespace removed the other container's
``.mlp.tmp-40000-...`` mid-write (its writer failed "cannot write stored golden: No such file
or directory"), or installed its complete ``.mlp.new-*`` under it, so that its own next rename
moved the new golden aside to ``.mlp.del-*`` and the golden was gone."""
import errno
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from pytest_ascend_accuracy.core import writer_lock
from pytest_ascend_accuracy.core.atomic_files import atomic_write_text
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.golden import stored as golden_files

from .procs import WAIT_S, finish, start, stop, wait_for

pytestmark = pytest.mark.reliability

# writes argv[1] (a stored golden, or with argv[5] == "file" a file) and pauses mid-write at
# argv[4] until argv[3] exists: "tmp" (files half written), "new" (complete, not yet in place)
WRITER = """
import os, sys, time
from pathlib import Path
import numpy as np
from pytest_ascend_accuracy.core import atomic_files
from pytest_ascend_accuracy.golden import stored as golden_files
from pytest_ascend_accuracy.dump import npy_writer
from pytest_ascend_accuracy.dump.model import DumpSet
path, flag, go, at, what = sys.argv[1:6]
def pause():
    # the pid in place whole: the test reads it as soon as the flag exists
    Path(flag + ".part").write_text(str(os.getpid()))
    os.replace(flag + ".part", flag)
    while not Path(go).exists():
        time.sleep(0.02)
if what == "file":
    real_fsync = atomic_files.os.fsync
    atomic_files.os.fsync = lambda fd: (pause(), real_fsync(fd))
    atomic_files.atomic_write_text(path, "theirs\\n")
    print("writer: OK", flush=True)
    sys.exit()
if at == "new":
    real_rename = golden_files.os.rename
    def rename(src, dst):
        real_rename(src, dst)
        if ".new-" in str(dst):
            pause()
    golden_files.os.rename = rename
else:
    real_save = npy_writer.NpyDumpWriter._save
    def save(self, name, array, ts):
        if name.startswith("b."):
            pause()
        return real_save(self, name, array, ts)
    npy_writer.NpyDumpWriter._save = save
# its golden lock in its own /tmp, as in a container of its own
dump = DumpSet.from_arrays({"a": [np.full(3, 9.0)], "b": [np.full(2, 9.0)]})
golden_files.store_golden(path, dump, lock_dir=Path(path).parent / "their-tmp")
print("writer: OK", flush=True)
"""


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    try:
        done = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"],
                              capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _free_pid() -> int:
    """A pid no process has here (so that judging by pid calls its owner dead)."""
    return next(p for p in range(40000, 4_000_000) if not os.path.exists(f"/proc/{p}"))


def _writer(tmp_path, path, at, what="golden", *, namespace):
    flag, go = tmp_path / "flag", tmp_path / "go"
    args = [str(path), str(flag), str(go), at, what]
    if namespace:
        # another container: its own PID namespace, the writer at a pid unused here (set where
        # the kernel lets us; pid 2 inside otherwise), dying with unshare
        cmd = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", "sh", "-c",
               f'echo {_free_pid() - 1} > /proc/sys/kernel/ns_last_pid 2>/dev/null; "$@"',
               "sh", sys.executable, "-c", WRITER, *args]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
    else:
        proc = start(WRITER, *args)
    wait_for(flag, proc)
    return proc, int(flag.read_text()), go


def _dump(value):
    return DumpSet.from_arrays({"a": [np.full(3, value)], "b": [np.full(2, value)]})


def _values(path):
    return {op.name: op.outputs[0].load().tolist() for op in golden_files.read_golden(path)}


def _hidden(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


needs_unshare = pytest.mark.skipif(
    not _unshare_works(), reason="needs `unshare --pid --fork --mount-proc` (root, or user "
                                 "namespaces allowed): a writer in another PID namespace")


@needs_unshare
@pytest.mark.parametrize("at", ["tmp", "new"])
def test_a_golden_writer_in_another_pid_namespace_keeps_its_temp_folder(tmp_path, at):
    path = tmp_path / "goldens" / "mlp"
    golden_files.store_golden(path, _dump(1.0))
    proc, pid_inside, go = _writer(tmp_path, path, at, namespace=True)
    try:
        assert pid_inside != proc.pid
        during = _hidden(path.parent)
        assert any(f".mlp.{at}-{pid_inside}-" in n for n in during), during
        notes = []
        policy = golden_files.GoldenPolicy(on_recovery=lambda p, note: notes.append(note))
        dump, status = policy.obtain(path, lambda: pytest.fail("the golden is there"))
        assert status == golden_files.USED and notes == []
        assert _hidden(path.parent) == during  # its work untouched
        assert {op.name: op.outputs[0].load().tolist() for op in dump} == {"a": [1.0] * 3,
                                                                           "b": [1.0] * 2}
        go.write_text("")
        assert finish(proc).strip() == "writer: OK"
    finally:
        stop(proc)
    assert _values(path) == {"a": [9.0] * 3, "b": [9.0] * 2}
    assert _hidden(path.parent) == [] and golden_files.recover_interrupted(path).note() == ""


@needs_unshare
def test_a_file_writer_in_another_pid_namespace_keeps_its_temp_file(tmp_path):
    """A baseline or report written at once from two containers: the other's temp file was
    removed by this one's write, and its rename failed (FileWriteError)."""
    path = tmp_path / "default.yaml"
    proc, pid_inside, go = _writer(tmp_path, path, "tmp", "file", namespace=True)
    try:
        temps = [n for n in _hidden(tmp_path) if n.endswith(".tmp")]
        assert temps and temps[0].startswith(f".default.yaml.{pid_inside}-")
        atomic_write_text(path, "ours\n")
        assert temps[0] in _hidden(tmp_path)
        go.write_text("")
        assert finish(proc).strip() == "writer: OK"
    finally:
        stop(proc)
    assert path.read_text() == "theirs\n" and _hidden(tmp_path) == []


def test_a_live_writer_in_this_namespace_keeps_its_temp_file(tmp_path):
    path = tmp_path / "default.yaml"
    proc, pid, go = _writer(tmp_path, path, "tmp", "file", namespace=False)
    try:
        atomic_write_text(path, "ours\n")
        assert [n for n in _hidden(tmp_path) if n.endswith(".tmp")] != []
        go.write_text("")
        assert finish(proc).strip() == "writer: OK"
    finally:
        stop(proc)
    assert path.read_text() == "theirs\n" and _hidden(tmp_path) == []


@pytest.mark.parametrize("at", ["tmp", "new"])
def test_a_killed_golden_writers_leftovers_go_whatever_pid_they_name(tmp_path, at):
    """A SIGKILLed writer's lock went with it: its temp folder is removed (or, complete, it is
    installed), with its lock file; a leftover named pid 1 (a container's first process,
    alive here always) goes as well."""
    path = tmp_path / "goldens" / "mlp"
    golden_files.store_golden(path, _dump(1.0))
    proc, _, _ = _writer(tmp_path, path, at, namespace=False)
    os.kill(proc.pid, signal.SIGKILL)
    finish(proc)
    assert any(n.endswith(".lock") for n in _hidden(path.parent))  # its lock file stays
    pid1 = path.parent / ".mlp.tmp-1-1796490864710573668-f3723955"
    pid1.mkdir()
    (pid1 / "a.0.npy").write_bytes(b"\x93NUMPY")
    note = golden_files.recover_interrupted(path).note()
    assert pid1.name in note
    assert ("recovered the complete new golden" in note) == (at == "new")
    assert _hidden(path.parent) == []
    assert _values(path)["a"] == [9.0 if at == "new" else 1.0] * 3


def test_a_killed_file_writers_leftover_goes_whatever_pid_it_names(tmp_path):
    path = tmp_path / "default.yaml"
    proc, _, _ = _writer(tmp_path, path, "tmp", "file", namespace=False)
    os.kill(proc.pid, signal.SIGKILL)
    finish(proc)
    (tmp_path / ".default.yaml.1-deadbeef.tmp").write_text("half")  # pid 1, no lock held
    assert len(_hidden(tmp_path)) == 3  # pid 1's, the killed one's temp file and lock file
    atomic_write_text(path, "ours\n")
    assert path.read_text() == "ours\n" and _hidden(tmp_path) == []


def test_a_cleaner_waits_for_no_one_and_a_writer_waits_for_a_cleaner(tmp_path):
    """The lock is taken without waiting by a cleaner (a live writer's entries are skipped at
    once); a writer whose fresh lock file a cleaner took and removed takes a new one."""
    entry = tmp_path / ".g.tmp-5-abc"
    with writer_lock.holding(tmp_path, ".g.", "5-abc"):
        entry.mkdir()
        started = time.monotonic()
        with writer_lock.Leftovers(tmp_path, ".g.") as gone:
            assert gone.find(".g.tmp-") == []
        assert time.monotonic() - started < WAIT_S / 10
        assert (tmp_path / writer_lock.lock_name(".g.", "5-abc")).exists()
    assert not (tmp_path / writer_lock.lock_name(".g.", "5-abc")).exists()
    with writer_lock.Leftovers(tmp_path, ".g.") as gone:
        assert gone.find(".g.tmp-") == [entry]
        assert (tmp_path / writer_lock.lock_name(".g.", "5-abc")).exists()  # held meanwhile
    assert _hidden(tmp_path) == [entry.name]
    # a lock file of a writer killed before its first entry goes at the next cleanup
    Path(tmp_path / writer_lock.lock_name(".g.", "6-def")).write_text("")
    with writer_lock.Leftovers(tmp_path, ".g.") as gone:
        gone.find(".g.tmp-")
    assert _hidden(tmp_path) == [entry.name]


class _RefusingFcntl:
    """``fcntl`` of a file system that refuses ``flock`` (some NFS mounts): ``ENOLCK``."""
    LOCK_EX, LOCK_SH, LOCK_NB, LOCK_UN = fcntl.LOCK_EX, fcntl.LOCK_SH, fcntl.LOCK_NB, fcntl.LOCK_UN

    @staticmethod
    def flock(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")


def test_where_flock_is_refused_writes_leave_no_lock_files(tmp_path, monkeypatch):
    """Each write created its lock file, could not lock it and left it (20 writes of a
    baseline: 20 ``.baseline.json.writer-*.lock``); a cleanup removed none of them. Now the
    write removes what it created, and a cleanup removes a gone writer's, judged by its pid."""
    monkeypatch.setattr(writer_lock, "fcntl", _RefusingFcntl)
    path = tmp_path / "baseline.json"
    for i in range(5):
        atomic_write_text(path, f"{i}\n")
    assert _hidden(tmp_path) == [] and path.read_text() == "4\n"
    dead = tmp_path / writer_lock.lock_name(".baseline.json.", f"{_free_pid()}-abc")
    live = tmp_path / writer_lock.lock_name(".baseline.json.", f"{os.getpid()}-def")
    dead.write_text("")
    live.write_text("")  # (a writer running here: its pid alive, its file kept)
    atomic_write_text(path, "5\n")
    assert _hidden(tmp_path) == [live.name]
    with writer_lock.Leftovers(tmp_path, ".g.") as gone:  # a claim creates none either
        assert gone.gone("1-abc") is False and gone.gone(f"{_free_pid()}-x") is True
    assert _hidden(tmp_path) == [live.name]


def test_a_writer_whose_removed_lock_file_a_cleaner_took_locks_the_new_one(
        tmp_path, monkeypatch):
    """The writer opens its lock file, a cleaner takes and removes it, then the writer locks
    what it opened: held on an unlinked file, the next write's cleanup took it for gone and
    removed its temp file mid-write ('cannot write file: No such file or directory');
    ``_same_file`` makes it lock the file at the path instead."""
    target = tmp_path / "default.yaml"
    opened, cleaned, written, checked = (threading.Event() for _ in range(4))
    real_open, real_fsync = os.open, os.fsync

    def slow_open(path, flags, mode=0o777, **kw):
        fd = real_open(path, flags, mode, **kw)
        if (threading.current_thread().name == "writer" and "writer-" in str(path)
                and not opened.is_set()):
            opened.set()
            cleaned.wait(30)
        return fd

    def slow_fsync(fd):
        if threading.current_thread().name == "writer":
            written.set()
            checked.wait(30)
        real_fsync(fd)

    monkeypatch.setattr(os, "open", slow_open)
    monkeypatch.setattr(os, "fsync", slow_fsync)
    said = []

    def write():
        try:
            atomic_write_text(target, "theirs\n")
            said.append("writer: OK")
        except Exception as exc:
            said.append(f"writer: FAILED {exc}")

    thread = threading.Thread(target=write, name="writer")
    thread.start()
    assert opened.wait(30)
    with writer_lock.Leftovers(tmp_path, ".default.yaml."):
        pass  # its close() takes the writer's fresh lock file for a gone writer's: removed
    cleaned.set()
    assert written.wait(30)
    atomic_write_text(target, "ours\n")  # another write's cleanup, while the writer writes
    checked.set()
    thread.join(30)
    assert said == ["writer: OK"] and target.read_text() == "theirs\n"
    assert _hidden(tmp_path) == []
