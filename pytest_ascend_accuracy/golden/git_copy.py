"""Which git command puts back a stored golden's changed tensor files, if any does.

A golden whose files changed since it was written (``stored_record.changed_files``) is refused
with a way to restore them. ``git -C <golden> checkout HEAD -- .`` works only where the golden's
last commit holds the bytes its ``golden.json`` records: a golden staged but never committed has
no ``HEAD`` (``fatal: invalid reference: HEAD``), one rewritten by ``--accuracy-regen`` and not
yet committed has other bytes there, and a folder outside any git work tree has none. So each
changed file's copy in ``HEAD``, then in git's index (what ``git add`` staged), is hashed with the
record's own algorithm, and the command is offered only for the copy that holds every recorded
digest; ``checkout -- .`` restores the folder's tracked files, so the copy's ``golden.json`` must
be the one in the folder as well (or not tracked, which the command leaves alone).
"""
import subprocess
from pathlib import Path
from typing import Mapping, Optional, Sequence, Tuple

from .stored_record import RECORD_FILE

#: the seconds one git call may take before it counts as "no copy"
GIT_TIMEOUT_S = 10
#: (the object spec prefix of a copy, the command's words before "-- .")
SOURCES = (("HEAD:", "checkout HEAD"), (":", "checkout"))


def _blob(folder: Path, spec: str) -> Optional[bytes]:
    """The bytes git holds for ``spec`` (``HEAD:./name``, ``:./name``), None where it holds none
    or git cannot be run."""
    try:
        done = subprocess.run(["git", "-C", str(folder), "cat-file", "blob", spec],
                              capture_output=True, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _digest(data: bytes, algorithm: str) -> Optional[str]:
    from ..core.cache import new_hasher

    try:
        h = new_hasher(algorithm)
    except ValueError:
        return None
    h.update(data)
    return h.hexdigest()


def _holds(folder: Path, prefix: str, names: Sequence[str], digests: Mapping[str, object]) -> bool:
    for name in names:
        algorithm, _, want = str(digests.get(name, "")).partition(":")
        data = _blob(folder, f"{prefix}./{name}")
        if data is None or _digest(data, algorithm) != want:
            return False
    record = _blob(folder, f"{prefix}./{RECORD_FILE}")
    if record is None:
        return True  # not tracked there: checkout leaves the folder's own record as it is
    try:
        return record == (folder / RECORD_FILE).read_bytes()
    except OSError:
        return False


def restore_command(folder, shown_quoted: str, names: Sequence[str],
                    digests: Mapping[str, object]) -> Tuple[Optional[str], str]:
    """(the git command, pasted where pytest runs, that restores the files ``names`` of the
    golden ``folder`` to the bytes ``digests`` record; or None, why git has no such copy).
    ``shown_quoted``: the folder as the user types it, quoted for the shell."""
    folder = Path(folder)
    try:
        inside = subprocess.run(["git", "-C", str(folder), "rev-parse", "--is-inside-work-tree"],
                                capture_output=True, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None, "git could not be run"
    if inside.returncode != 0 or inside.stdout.strip() != b"true":
        return None, "the golden is not in a git work tree"
    for prefix, words in SOURCES:
        if _holds(folder, prefix, names, digests):
            return f"git -C {shown_quoted} {words} -- .", ""
    return None, ("neither git's last commit nor its index holds the bytes golden.json records "
                  "for them")
