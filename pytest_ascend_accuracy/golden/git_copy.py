"""Which git command puts back a stored golden's tensor files, if any does.

A golden whose files changed or went missing since it was written (``stored_record``'s
``changed_files``, ``missing_files``, ``dtype_changes``) is refused with a way to restore them.
``git -C <golden> checkout HEAD -- <files>`` works only where the golden's last commit holds the
bytes its ``golden.json`` records: a golden staged but never committed has no ``HEAD``
(``fatal: invalid reference: HEAD``), one rewritten by ``--accuracy-regen`` and not yet
committed has other bytes there, and a folder outside any git work tree has none. So each file's
copy in ``HEAD``, then in git's index (what ``git add`` staged), is hashed with the record's own
algorithm as checkout would write it (``git cat-file --filters``: git LFS and other filter
drivers, ``core.autocrlf``), streamed (a 1 GB tensor), and the command is offered only for the
copy that holds every recorded digest. It names the files themselves: ``-- .`` also put back
other files of the folder, whose copy nobody had checked (a review: an uncommitted repair of
another file was undone, and the next run refused again). A file git's skip-worktree bit
covers is left as it is by checkout: no command then either.
"""
import shlex
import subprocess
import time
from pathlib import Path
from typing import List, Mapping, Optional, Sequence, Tuple

#: the seconds all git calls of one refusal may take (a filter such as git LFS may fetch each
#: copy, or hang): past it git is stopped and the message says it took too long
GIT_BUDGET_S = 60
#: (the object spec prefix of a copy, the command's words before "--")
SOURCES = (("HEAD:", "checkout HEAD"), (":", "checkout"))
_CHUNK = 1 << 20


class _TooSlow(Exception):
    """git ran past the refusal's deadline (killed)."""


def _env() -> dict:
    import os

    return {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # never a credential prompt (LFS)


def _stop(proc: subprocess.Popen) -> None:
    import os
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def _start(folder: Path, args, stderr) -> subprocess.Popen:
    """git in a session of its own: its filters (git-lfs, a smudge command) are stopped with it
    (``_stop``: killing git alone left them running, orphaned), and there is no terminal to
    prompt on; no stdin."""
    return subprocess.Popen(["git", "-C", str(folder), *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=stderr, env=_env(),
                            start_new_session=True)


def _git(folder: Path, *args: str, deadline: float) -> Optional[subprocess.CompletedProcess]:
    try:
        proc = _start(folder, args, subprocess.PIPE)
    except OSError:
        return None
    try:
        out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        _stop(proc)
        proc.communicate()
        raise _TooSlow() from None
    except BaseException:  # a Ctrl-C reaches this process only: git is in a session of its own
        _stop(proc)
        proc.wait()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _copy_digest(folder: Path, spec: str, algorithm: str, deadline: float) -> Optional[str]:
    """The digest of what checkout writes for ``spec`` (``HEAD:./name``, ``:./name``), read as
    git streams it; None where git holds no such file or cannot be run. Raises ``_TooSlow``
    where git is still at it at ``deadline`` (killed then: a read that waits on a slow filter
    is not cut short by checking the clock between reads)."""
    import threading

    from ..core.cache import new_hasher

    try:
        h = new_hasher(algorithm)
        proc = _start(folder, ("cat-file", "--filters", spec), subprocess.DEVNULL)
    except (OSError, ValueError):
        return None
    timer = None
    try:
        # a daemon: a Ctrl-C that lands before the loop below left this process waiting at its
        # exit for the timer, GIT_BUDGET_S, and git running till then (seen once in the suite)
        timer = threading.Timer(max(0.0, deadline - time.monotonic()), _stop, (proc,))
        timer.daemon = True
        timer.start()
        with proc:
            try:
                while True:
                    chunk = proc.stdout.read(_CHUNK)
                    if not chunk:
                        break
                    h.update(chunk)
                code = proc.wait()
            except BaseException:  # a Ctrl-C (or a timeout's exception) reaches this process
                _stop(proc)  # only, and Popen's exit would wait for git: stopped first
                raise
    except BaseException:  # (one before ``with``: git is stopped all the same)
        _stop(proc)
        raise
    finally:
        if timer is not None:
            timer.cancel()
    if time.monotonic() >= deadline:
        raise _TooSlow()
    return h.hexdigest() if code == 0 else None


def _skip_worktree(folder: Path, names: Sequence[str], deadline: float) -> List[str]:
    listed = _git(folder, "ls-files", "-v", "--", *names, deadline=deadline)
    if listed is None or listed.returncode != 0:
        return []
    return [line[2:] for line in listed.stdout.decode("utf-8", "replace").splitlines()
            if line[:1] in ("S", "s")]  # (lower case: assume-unchanged as well)


def restore_command(folder, shown_quoted: str, names: Sequence[str],
                    digests: Mapping[str, object]) -> Tuple[Optional[str], str]:
    """(the git command, pasted where pytest runs, that restores the files ``names`` of the
    golden ``folder`` to the bytes ``digests`` record; or None, why git has no such copy).
    ``shown_quoted``: the folder as the user types it, quoted for the shell."""
    folder = Path(folder)
    deadline = time.monotonic() + GIT_BUDGET_S
    try:
        return _restore_command(folder, shown_quoted, names, digests, deadline)
    except _TooSlow:
        return None, (f"git took longer than {GIT_BUDGET_S} s to hand over its copies (a filter "
                      f"such as git LFS fetching them?)")


def _restore_command(folder: Path, shown_quoted: str, names: Sequence[str],
                     digests: Mapping[str, object], deadline: float):
    inside = _git(folder, "rev-parse", "--is-inside-work-tree", deadline=deadline)
    if inside is None:
        return None, "git could not be run"
    if inside.returncode != 0 or inside.stdout.strip() != b"true":
        said = inside.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, "the golden is not in a git work tree" + (f" (git: {said[0]})" if said else "")
    if not names or any(not isinstance(digests.get(n), str) for n in names):
        return None, ("its golden.json records no digest of them to check git's copy against "
                      "(a golden written before digests: --accuracy-regen-all adds them)")
    skipped = _skip_worktree(folder, names, deadline)
    if skipped:
        return None, (f"git's skip-worktree bit is set on {', '.join(skipped[:3])}, so checkout "
                      f"leaves them as they are")
    recorded = {n: str(digests[n]).partition(":") for n in names}  # (algorithm, ":", hex)
    for prefix, words in SOURCES:
        if all(_copy_digest(folder, f"{prefix}./{n}", recorded[n][0], deadline) == recorded[n][2]
               for n in names):
            return f"git -C {shown_quoted} {words} -- {' '.join(map(shlex.quote, names))}", ""
    return None, ("neither git's last commit nor its index holds the bytes golden.json records "
                  "for them")
