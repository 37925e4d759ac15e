"""golden.git_copy: the git command that restores a stored golden's files is offered only for a
copy (the last commit, else the index) that holds every recorded digest as checkout writes it,
and names the files themselves; none otherwise, with the reason."""
import os
import shutil
import subprocess

import pytest

from pytest_ascend_accuracy.golden.git_copy import restore_command
from pytest_ascend_accuracy.golden.stored_record import file_digests

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(where, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=where,
                   check=True, capture_output=True)


@pytest.fixture
def golden(tmp_path):
    folder = tmp_path / "golden" / "m"
    folder.mkdir(parents=True)
    (folder / "a.npy").write_bytes(b"written")
    (folder / "b.npy").write_bytes(b"other")
    (folder / "golden.json").write_text('{"record": 1}\n')
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "golden")
    return folder


def test_the_last_commit_holds_the_recorded_bytes(golden):
    digests = file_digests(golden, ["a.npy"])
    (golden / "a.npy").write_bytes(b"edited!")
    assert restore_command(golden, "golden/m", ["a.npy"], digests) == (
        "git -C golden/m checkout HEAD -- a.npy", "")


def test_the_command_restores_the_named_files_alone(golden):
    """b.npy repaired in the folder, not yet committed: ``-- .`` put back HEAD's b.npy too."""
    (golden / "b.npy").write_bytes(b"repaired")
    digests = file_digests(golden, ["a.npy", "b.npy"])
    (golden / "a.npy").write_bytes(b"edited!")
    command, _ = restore_command(golden, "golden/m", ["a.npy"], digests)
    subprocess.run(command, shell=True, cwd=golden.parent.parent, check=True)
    assert file_digests(golden, ["a.npy", "b.npy"]) == digests


def test_other_recorded_bytes_than_gits(golden):
    (golden / "a.npy").write_bytes(b"regenerated")
    digests = file_digests(golden, ["a.npy"])  # the record of a golden rewritten, uncommitted
    (golden / "a.npy").write_bytes(b"edited!")
    assert restore_command(golden, "golden/m", ["a.npy"], digests) == (None, (
        "neither git's last commit nor its index holds the bytes golden.json records for them"))
    git(golden, "add", "a.npy")  # (the edit staged: the index does not hold them either)
    assert restore_command(golden, "golden/m", ["a.npy"], digests)[0] is None


def test_a_filter_driver_copy_is_hashed_as_checkout_writes_it(golden, tmp_path):
    """git LFS and other filters store other bytes than checkout writes (cat-file --filters)."""
    if shutil.which("base64") is None:
        pytest.skip("no base64 command")
    git(tmp_path, "config", "filter.b64.clean", "base64 -w0")
    git(tmp_path, "config", "filter.b64.smudge", "base64 -d")
    (tmp_path / ".gitattributes").write_text("*.npy filter=b64\n")
    (golden / "a.npy").write_bytes(b"filtered bytes")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "filtered")
    digests = file_digests(golden, ["a.npy"])
    (golden / "a.npy").write_bytes(b"edited!")
    command, _ = restore_command(golden, "golden/m", ["a.npy"], digests)
    assert command == "git -C golden/m checkout HEAD -- a.npy"
    subprocess.run(command, shell=True, cwd=tmp_path, check=True)
    assert file_digests(golden, ["a.npy"]) == digests


def test_a_missing_file_is_restored_and_names_are_quoted(golden, tmp_path):
    (golden / "it's b.npy").write_bytes(b"quoted")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "more")
    digests = file_digests(golden, ["it's b.npy"])
    (golden / "it's b.npy").unlink()
    command, _ = restore_command(golden, "'my golden'", ["it's b.npy"], digests)
    assert command == "git -C 'my golden' checkout HEAD -- 'it'\"'\"'s b.npy'"


def test_skip_worktree_files_are_left_as_they_are_by_checkout(golden):
    digests = file_digests(golden, ["a.npy"])
    git(golden, "update-index", "--skip-worktree", "a.npy")
    (golden / "a.npy").write_bytes(b"edited!")
    command, why = restore_command(golden, "g", ["a.npy"], digests)
    assert command is None and why.startswith("git's skip-worktree bit is set on a.npy")


def test_without_digests_or_an_unknown_algorithm_no_copy_is_vouched_for(golden):
    (golden / "a.npy").write_bytes(b"edited!")
    assert restore_command(golden, "g", ["a.npy"], {}) == (
        None, "its golden.json records no digest of them to check git's copy against (a golden "
              "written before digests: --accuracy-regen-all adds them)")
    assert restore_command(golden, "g", ["a.npy"], {"a.npy": "md5:0"})[0] is None


def test_without_git_or_a_work_tree(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))  # (a basetemp in a repo)
    command, why = restore_command(tmp_path, "g", ["a.npy"], {})
    assert command is None
    assert why.startswith("the golden is not in a git work tree (git: fatal: not a git repository")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert restore_command(tmp_path, "g", ["a.npy"], {}) == (None, "git could not be run")


def _left(tag: str):
    """The command lines of running processes holding ``tag`` (Linux's /proc)."""
    import glob

    found = []
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            with open(cmdline, "rb") as f:
                line = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if tag in line:
            found.append(line)
    return found


def _slow_filter(golden, tmp_path):
    """A golden whose .npy files pass through a smudge filter that sleeps: its tag (a sleep of
    its own length, unique to this run) names its processes."""
    import os

    tag = f"sleep 31.{os.getpid() % 1000:03d}{len(str(tmp_path)) % 10}"
    git(tmp_path, "config", "filter.slow.smudge", f"{tag}; cat")
    git(tmp_path, "config", "filter.slow.clean", "cat")
    (tmp_path / ".gitattributes").write_text("*.npy filter=slow\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "slow")
    digests = file_digests(golden, ["a.npy"])
    (golden / "a.npy").write_bytes(b"edited!")
    return tag, digests


def test_a_slow_filter_is_stopped_at_the_budget_and_said_so(golden, tmp_path, monkeypatch):
    """A filter that blocks (git LFS fetching, a prompt) held the run as long as it ran: the
    clock was read only between reads. It is killed at the budget, with its filter (killing
    git alone left the filter running, orphaned), and the reason says so."""
    import time

    from pytest_ascend_accuracy.golden import git_copy

    tag, digests = _slow_filter(golden, tmp_path)
    monkeypatch.setattr(git_copy, "GIT_BUDGET_S", 1)
    start = time.monotonic()
    assert restore_command(golden, "g", ["a.npy"], digests) == (None, (
        "git took longer than 1 s to hand over its copies (a filter such as git LFS fetching "
        "them?)"))
    assert time.monotonic() - start < 10
    time.sleep(0.2)
    assert _left(tag) == []


def test_a_ctrl_c_while_git_filters_stops_git_and_its_filter(golden, tmp_path):
    """git runs in a session of its own, so a Ctrl-C reaches Python alone: it left git and its
    filter running, orphaned."""
    import signal
    import sys
    import time

    tag, digests = _slow_filter(golden, tmp_path)
    code = ("import sys; from pytest_ascend_accuracy.golden.git_copy import restore_command; "
            f"restore_command({str(golden)!r}, 'g', ['a.npy'], {digests!r})")
    child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True,
                             stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not _left(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _left(tag), "the filter never started"
    os.killpg(child.pid, signal.SIGINT)  # the terminal's Ctrl-C: to the foreground group
    child.wait(timeout=20)
    time.sleep(0.3)
    assert _left(tag) == []


def test_another_exception_while_git_filters_stops_it_at_once(golden, tmp_path):
    """Only a Ctrl-C stopped git at once: any other exception (a test timeout's, SystemExit
    from a SIGTERM handler) left Popen's exit waiting for git and its filter (H98)."""
    import sys
    import time

    tag, digests = _slow_filter(golden, tmp_path)
    code = ("import signal, sys\n"
            "def _exit(*a):\n    raise SystemExit(3)\n"
            "signal.signal(signal.SIGALRM, _exit); signal.alarm(2)\n"
            "from pytest_ascend_accuracy.golden.git_copy import restore_command\n"
            f"restore_command({str(golden)!r}, 'g', ['a.npy'], {digests!r})\n")
    start = time.monotonic()
    child = subprocess.run([sys.executable, "-c", code], stderr=subprocess.DEVNULL, timeout=60)
    assert child.returncode == 3 and time.monotonic() - start < 15
    time.sleep(0.3)
    assert _left(tag) == []


def test_a_ctrl_c_as_the_deadline_timer_starts_stops_git_and_leaves_no_timer(
        golden, tmp_path, monkeypatch):
    """A Ctrl-C that landed after the budget's timer started and before the read loop's own
    handler: git and its filter ran on, and the timer, not a daemon, held the process at its
    exit for the whole budget (the subprocess Ctrl-C test above timed out once so, at 20 s)."""
    import threading
    import time

    tag, digests = _slow_filter(golden, tmp_path)
    started = []

    class InterruptedAtStart(threading.Timer):
        def start(self):
            super().start()
            started.append(self)
            raise KeyboardInterrupt

    monkeypatch.setattr(threading, "Timer", InterruptedAtStart)
    try:
        with pytest.raises(KeyboardInterrupt):
            restore_command(golden, "g", ["a.npy"], digests)
        assert started and all(t.daemon for t in started)
        time.sleep(0.3)
        assert _left(tag) == []
    finally:
        for timer in started:
            timer.cancel()
