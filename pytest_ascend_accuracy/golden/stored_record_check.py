"""Whether a stored golden's ``golden.json`` (``stored_record``) is one this package wrote, and
whether the golden's files are the ones it lists: a record that is not is refused naming the
file and every problem, never read as "no record".

Every record this package has written holds all of ``KEYS`` of its ``record_version``, each of
its type: ``build_record`` writes them all, and only for a golden computed from a model (a golden
without a model has no record). Version 1 (golden format 6, commit 0787663, to this record's
change) has all but ``digests``; version 2 adds ``digests``, one per file of ``tensors``.
So a missing key, a key of another type or an unknown key is a hand edit or a damaged file, and
an empty or partial record is one: read as it was, ``{}`` turned off the model and inputs check
(``"model_sha256" not in record``) and the file checks (no ``tensors``), and the test passed
against whatever the folder held. A record of a newer ``record_version`` is refused too: its
fields may not mean what this version reads (``RECORD_VERSION`` is bumped when they change).

The folder's ``.npy`` files must be the ones ``tensors`` lists: one gone is named by
``stored_record.missing_files``; one it does not list (``unlisted_files``: copied in, or left
from another golden) was compared unchecked, and one with a later timestamp of an op replaces
that op's tensor (the loader takes the latest dump of an op, docs/formats.md §1).
"""
from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional

from ..errors import DumpFormatError
from .stored_record import LOW_PRECISION, RECORD_FILE, RECORD_VERSION

#: the record's keys: what each must hold, as messages say it (``build_record`` writes them all)
KEYS: Dict[str, str] = {
    "record_version": "an integer (1 or 2)",
    "golden_format": "a positive integer (the GOLDEN_FORMAT that wrote it)",
    "written_by": "a string (the package version that wrote it)",
    "model": "a non-empty string (the model's path relative to the golden, or its label)",
    "model_sha256": "a sha256 (64 hex digits)",
    "inputs_digest": "an inputs digest ('<algorithm>:<hex digits>')",
    "input_shape": "a mapping {input name: [dim, ...]} ({} when none was given)",
    "inputs_stored": "true or false",
    "tensors": "a non-empty mapping {file name (.npy): numpy dtype}",
    "digests": "a mapping {file name: 'xxh3_128:<32 hex digits>' or 'sha256:<64 hex digits>'} "
               "of the files tensors lists",
}
#: the keys a record of each ``record_version`` holds (1: written before ``digests``)
VERSION_KEYS = {1: tuple(k for k in KEYS if k != "digests"), 2: tuple(KEYS)}
#: the algorithms a ``digests`` entry names (``core.cache.file_digest`` reads both): hex digits
DIGEST_ALGORITHMS = {"xxh3_128": 32, "sha256": 64}


class DamagedRecord(DumpFormatError):
    """A ``golden.json`` that is not a record this package wrote (or one of a newer version):
    names the file and every problem. ``fix``: what to do when rewriting the golden or deleting
    its record is no way out (a newer record: that would replace a newer version's golden)."""

    def __init__(self, path, problem: str, fix: str = ""):
        super().__init__(path, problem)
        self.fix = fix


_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
_DIGEST = re.compile(r"[A-Za-z0-9_]+:[0-9a-f]+\Z")


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _shape(v) -> bool:
    return isinstance(v, dict) and all(
        isinstance(k, str) and isinstance(d, list) and all(_int(x) for x in d)
        for k, d in v.items())


def _file_name(name) -> bool:
    return (isinstance(name, str) and name.endswith(".npy") and name == os.path.basename(name)
            and "\\" not in name and not name.startswith("."))


def _dtype(v) -> bool:
    """A dtype name numpy knows, ml_dtypes' included: ``np.dtype("bfloat16")`` is a TypeError
    until ml_dtypes is imported (onnx imports it), so the verdict on a record listing one
    depended on what the process had imported."""
    if not isinstance(v, str) or not v:
        return False
    if v in LOW_PRECISION:
        return True
    import numpy as np

    try:
        import ml_dtypes  # noqa: F401  (registers bfloat16, float8_*, int4, ... with numpy)
    except ImportError:  # a dependency; without it, numpy's own names only
        pass
    try:
        np.dtype(v)
    except TypeError:
        return False
    return True


def _tensors(v) -> bool:
    """Non-empty: a golden of no tensor is not written (the loader refuses an empty folder),
    and ``{}`` beside the files would disown every one of them."""
    return isinstance(v, dict) and bool(v) and all(
        _file_name(k) and _dtype(d) for k, d in v.items())


_VALID: Dict[str, Callable[[object], bool]] = {
    "record_version": lambda v: _int(v) and v in VERSION_KEYS,
    "golden_format": lambda v: _int(v) and v > 0,
    "written_by": lambda v: isinstance(v, str),
    "model": lambda v: isinstance(v, str) and bool(v),
    # null: an in-memory model ``model_sha256`` cannot hash (build_record writes what it got)
    "model_sha256": lambda v: v is None or isinstance(v, str) and bool(_SHA256.match(v)),
    "inputs_digest": lambda v: isinstance(v, str) and bool(_DIGEST.match(v)),
    "input_shape": _shape,
    "inputs_stored": lambda v: isinstance(v, bool),
    "tensors": _tensors,
    "digests": lambda v: isinstance(v, dict) and all(
        isinstance(d, str) and bool(_DIGEST.match(d))
        and len(d.partition(":")[2]) == DIGEST_ALGORITHMS.get(d.partition(":")[0])
        for d in v.values()),
}


def _shown(value) -> str:
    import json

    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _bad_tensors(v) -> str:
    """Which entries of a ``tensors`` mapping are wrong (the first three)."""
    if not isinstance(v, dict) or not v:
        return f"got {_shown(v)}"
    bad = [f"{_shown(k)}: {_shown(d)}" for k, d in v.items() if not (_file_name(k) and _dtype(d))]
    more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
    return f"got {', '.join(bad[:3])}{more}"


def newer_record(record: Mapping[str, object]) -> str:
    """Why a record of a newer ``record_version`` than this version reads cannot be checked
    (empty: it is not newer)."""
    version = record.get("record_version")
    if not (_int(version) and version > RECORD_VERSION):
        return ""
    by = record.get("written_by")
    by = f" by {by}" if isinstance(by, str) and by else ""
    return (f"record_version {version}, written{by}: this version of pytest-ascend-accuracy "
            f"reads record_version {RECORD_VERSION}, whose fields may mean otherwise")


def upgrade_fix(record: Mapping[str, object]) -> str:
    """The way out of a newer record (``newer_record``): the version that wrote it, never a
    rewrite or deleting ``golden.json``, which would put this older version's golden in place
    of the one a newer version checked in."""
    by = record.get("written_by")
    name = "pytest-ascend-accuracy"
    version = by[len(name):].strip() if isinstance(by, str) and by.startswith(name + " ") else ""
    if version:
        return f"upgrade {name} to {version} (the version that wrote it) or newer"
    return (f"upgrade {name} to the version that wrote it (one that reads record_version "
            f"{record.get('record_version')})")


def record_problems(record: Mapping[str, object]) -> List[str]:
    """What is wrong with a record read from ``golden.json`` (empty: it is one this package
    wrote, of a ``record_version`` this version reads: ``VERSION_KEYS``)."""
    if newer_record(record):
        return [newer_record(record)]
    out = []
    keys = VERSION_KEYS.get(record.get("record_version"), tuple(KEYS))
    unknown = [k for k in record if k not in keys]
    missing = [k for k in keys if k not in record]
    for k in unknown:
        near = difflib.get_close_matches(str(k), missing or list(keys), n=1, cutoff=0.6)
        out.append(f"unknown key {_shown(k)}" + (f" (did you mean {near[0]!r}?)" if near else ""))
    if missing:
        out.append(f"missing {', '.join(missing)} (every golden.json this package writes has "
                   f"{'it' if len(missing) == 1 else 'them'})")
    for k, valid in _VALID.items():
        if k in record and not valid(record[k]):
            got = (_bad_tensors(record[k]) if k == "tensors" and isinstance(record[k], dict)
                   else f"got {_shown(record[k])}")
            out.append(f"{k}: expected {KEYS[k]}, {got}")
    digests, tensors = record.get("digests"), record.get("tensors")
    if isinstance(digests, dict) and isinstance(tensors, dict) and set(digests) != set(tensors):
        odd = sorted(set(digests) ^ set(tensors), key=str)
        out.append(f"digests: expected one digest for each file of tensors, got "
                   f"{', '.join(_shown(n) for n in odd[:3])}{' and more' if len(odd) > 3 else ''}"
                   f" in only one of them")
    return out


def check_record(golden_dir, record: Optional[Mapping[str, object]]) -> None:
    """Raise ``DamagedRecord`` naming the golden's ``golden.json`` and every problem when
    ``record`` (``stored_record.read_record``'s, None: no record) is not one this package
    wrote, of a record version this version reads."""
    if record is None:
        return
    problems = record_problems(record)
    if not problems:
        return
    newer = bool(newer_record(record))
    head = ("stored golden record of a newer version" if newer else
            "stored golden record not as this package writes it (edited by hand, or damaged?)")
    raise DamagedRecord(Path(golden_dir) / RECORD_FILE, (
        f"{head}, so which model and inputs the golden comes from cannot be checked: "
        + "; ".join(problems)), upgrade_fix(record) if newer else "")


def unlisted_files(record: Mapping[str, object], golden_dir) -> List[str]:
    """The ``.npy`` files of ``golden_dir`` that the record's ``tensors`` does not list: not
    written with this golden, so neither its identity nor their dtypes vouch for them."""
    listed = record.get("tensors")
    if not isinstance(listed, Mapping):
        return []
    try:
        names = [e.name for e in os.scandir(golden_dir) if e.name.endswith(".npy")]
    except OSError:
        return []
    return sorted(n for n in names if n not in listed)


def restore_fix(names: List[str], golden_shown: str, golden_dir, digests: Mapping[str, object],
                verb: str = "Restore them") -> str:
    """``verb`` with the git command that restores the tensor files ``names`` (where git holds
    the bytes ``digests`` record: ``git_copy.restore_command``), or why there is none;
    ``golden_shown``: the golden's path as the user types it, ``golden_dir`` its path here."""
    import shlex

    from .git_copy import restore_command

    # -C: pytest may run from a folder above the checkout, which git refuses as no repository
    command, why_not = restore_command(golden_dir, shlex.quote(golden_shown), names, digests)
    return (f"{verb} ({command})" if command else
            f"{verb} from a copy of the golden as it was written (no git command is offered: "
            f"{why_not})")


def changed_problem(changed: List[str], golden_shown: str, golden_dir,
                    digests: Mapping[str, object]):
    """(what is wrong, a function making what to do) for a golden whose tensor files
    ``changed`` are not the bytes its record's ``digests`` vouch for
    (``stored_record.changed_files``): the fix asks git, which a rewrite need not wait for."""
    import shlex

    listed = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
    return (f"tensor files changed since the golden was written (their bytes are not the ones its "
            f"{RECORD_FILE} records), so they are not the reference of the model and inputs it "
            f"names: {listed}"), lambda: (
            f"{restore_fix(changed, golden_shown, golden_dir, digests)}, or run the test again "
            f"with --accuracy-regen to rewrite the golden, or delete "
            f"{shlex.quote(golden_shown + '/' + RECORD_FILE)} to compare against the files as "
            f"they are, unchecked")


def dtype_problem(changed, golden_shown: str, golden_dir, digests: Mapping[str, object]):
    """(what is wrong, a function making what to do) for a golden whose files ``changed``
    (``stored_record.dtype_changes``: name, dtype written, dtype now) were re-saved in another
    dtype: the fix asks git, which a rewrite need not wait for."""
    listed = ", ".join(f"{n} ({got}, written as {want})" for n, want, got in changed[:5])
    more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
    names = [n for n, _, _ in changed]
    return (f"tensor files re-saved in another dtype than the model's, which the golden was "
            f"written with: {listed}{more}"), lambda: (
            f"A golden is the model's fp32 reference: "
            f"{restore_fix(names, golden_shown, golden_dir, digests, 'restore the files')}, or "
            f"rewrite the golden: run the test again with --accuracy-regen")


def files_problem(gone: List[str], extra: List[str], extra_shown: List[str],
                  golden_shown: str = "", golden_dir=None,
                  digests: Optional[Mapping[str, object]] = None):
    """(what is wrong, a function making what to do) for a golden whose ``.npy`` files are not
    the ones its record lists: ``gone`` (``stored_record.missing_files``; restored as
    ``restore_fix`` says where ``golden_dir`` is given), ``extra`` (``unlisted_files``;
    ``extra_shown``: their paths as the user types them)."""
    import shlex

    def listed(names):
        return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")

    heads, fixes = [], []
    if gone:
        heads.append(f"tensor files its {RECORD_FILE} lists are missing: {listed(gone)}")
        fixes.append(lambda: "Restore them" if golden_dir is None else
                     restore_fix(gone, golden_shown, golden_dir, digests or {}))
    if extra:
        heads.append(f"it holds tensor files its {RECORD_FILE} does not list: {listed(extra)} "
                     f"(not written with this golden: copied in, or left from another one), "
                     f"whose values would be compared unchecked")
        rm = " ".join(shlex.quote(s) for s in extra_shown)
        removal = ("remove them" if gone else "Remove them") + f" ({'rm ' + rm})"
        fixes.append(lambda: removal)
    return "; ".join(heads), lambda: " and ".join(f() for f in fixes)
