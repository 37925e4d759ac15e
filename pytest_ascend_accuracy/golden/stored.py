"""Golden dumps stored in the user's repository (``golden_dump(..., path=...)``) and when they
may be rewritten.

A stored golden is a directory of ``.npy`` files in the ONNX golden naming (the same layout
``msaccucmp`` reads), written through ``dump.npy_writer.NpyDumpWriter`` and read back with
``dump.loader.load_dump``. It holds each op's OUTPUTS only, which is what is compared (every
op's inputs, weights included, would multiply its size); ``store_inputs=True``
(``--accuracy-store-inputs``) keeps the inputs too, and a rewrite keeps them when the golden it
replaces had them. ``golden.json`` beside the tensors records the model and inputs it was
written from (``stored_record``): a golden with a record is checked against this test's model
and inputs before use, and refused (or, under ``--accuracy-regen``, rewritten) when they
differ; one of an older golden format that lacks what this model's golden now holds is refused
the same way (``stored_format``, docs/formats.md §7.1). The policy (``GoldenPolicy``, built from
a ``core.regen.Regen``) is the only code that writes one:

* missing                                -> written; the caller fails the test naming the file
                                            (with ``--accuracy-regen-all`` the test goes on);
* present                                -> used as is;
* ``Regen.FAILING`` (``--accuracy-regen``)   -> rewritten only after the test failed (it still fails);
* ``Regen.ALL`` (``--accuracy-regen-all``)   -> rewritten before use (tests pass against the new files).

**One writer at a time.** Every look at a golden path (recover, decide, write, list) happens
under one ``filelock`` per path (``golden_lock``), the way ``core.cache`` locks a key, so xdist
workers of ``-n 8 --accuracy-regen-all`` that share a golden take turns. A rewrite that
produces the same bytes leaves the directory untouched, so a worker reading it is never
disturbed by the seven that regenerate it after it.

**Replace protocol.** The new golden is written to ``.<name>.tmp-<pid>-<ns>-<id>``; when every file
is written and fsynced the directory is renamed to ``.<name>.new-...``: that rename is the
completeness marker, the last thing written. Then the old golden moves to ``.<name>.del-...`` (a
name recovery never restores), the new one into place, and the old one is removed: a kill while it
is being deleted leaves a part of it only under that name. The writer holds its lock
(``core.writer_lock``) on all of these from before the ``.tmp-*`` until the end. **Recovery**
(``recover_interrupted``, run under the lock before every use) is deterministic and touches only
entries whose writer's lock it takes (a live writer's, in another container too, is left alone): a
complete ``.new-*`` left by a killed writer wins (the newest, by the time in its name), else the
golden in place stays, else an ``.old-*`` comes back only when it is known complete: one of the
layout before write times were in these names (``.<name>.old-<pid>-<id>``, whose writer renamed it
there whole before installing the new golden), and, when it has a ``golden.json``, holding every
file that lists. An ``.old-*`` with a write time was left by the previous protocol while it deleted
it (often half deleted) after a newer golden was in place: it is never restored. Every other
leftover is removed, and what was done is returned so the caller can report it. An incomplete
``.tmp-*`` is never read.

**Errors.** A failed write (full disk, read-only folder) raises ``GoldenWriteError`` naming the
golden as shown, the one in place kept; an unreadable record or tensor, a record this package
did not write, or ``.npy`` files it does not list (``stored_record_check``) are refused naming
the file, and rewritten under ``--accuracy-regen`` (``REWRITTEN_UNREADABLE``, ``_RECORD``).
"""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Optional, Tuple

from ..core import writer_lock
from ..core.atomic_files import GoldenWriteError
from ..core.path_lock import LOCK_TIMEOUT_S, PathLocked, path_lock
from ..core.regen import Regen
from ..errors import AscendAccuracyError, ConfigError, DumpFormatError
from . import stored_record as record
from .stored_record_check import (DamagedRecord, changed_problem, check_record, dtype_problem,
                                  files_problem, unlisted_files)
from .stored_recovery import (_DEL, _NEW, _TMP, Recovery, _fsync_dir, _recover,  # noqa: F401
                              _remove, _token)

#: outcomes of ``GoldenPolicy.obtain``
USED, WRITTEN_MISSING, REWRITTEN_ALL = "used", "written (missing)", "rewritten (--accuracy-regen-all)"
REWRITTEN_FAILED = "rewritten (--accuracy-regen, test failed)"
#: ``--accuracy-regen-all`` / ``--accuracy-regen`` made the bytes already there: the directory
#: was left untouched, and the summary says so instead of "rewritten" (a CI trial)
UNCHANGED_ALL = "unchanged (--accuracy-regen-all: regenerated the same bytes, left as it was)"
UNCHANGED_FAILED = ("unchanged (--accuracy-regen, test failed: regenerated the same bytes, left "
                    "as it was)")
REWRITTEN_MISMATCH = "rewritten (--accuracy-regen: written from another model or other inputs)"
REWRITTEN_INCOMPLETE = "rewritten (--accuracy-regen: tensor files it lists were missing)"
REWRITTEN_UNLISTED = ("rewritten (--accuracy-regen: it held tensor files its golden.json does "
                      "not list)")
REWRITTEN_UNREADABLE = "rewritten (--accuracy-regen: a file of it could not be read)"
REWRITTEN_RECORD = ("rewritten (--accuracy-regen: its golden.json was not as this package writes "
                    "it)")
REWRITTEN_FORMAT = "rewritten (--accuracy-regen: written in an older golden format)"
REWRITTEN_CHANGED = "rewritten (--accuracy-regen: tensor files changed since it was written)"
REWRITTEN_DTYPE = "rewritten (--accuracy-regen: tensor files re-saved in another dtype)"
#: appended to a rewrite's status when the golden kept its op inputs
KEPT_INPUTS = ", op inputs kept"
#: fixed 16-digit timestamps: the same golden always gets the same file names (clean diffs)
GOLDEN_TS0 = 1_000_000_000_000_000


def resolve_golden_path(path, base_dir) -> Path:
    """Absolute path of a stored golden: relative paths are relative to ``base_dir`` (the
    directory of the test file or YAML suite that names it; see ``core.locations`` for the
    old rootdir-relative location)."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ConfigError("golden_dump(path=...)", f"expected a file system path, got {path!r}")
    p = Path(path).expanduser()
    return p if p.is_absolute() else Path(base_dir) / p


# --------------------------------------------------------------------------- locking
def golden_lock(path, lock_dir=None):
    """The ``filelock.FileLock`` of one golden path (``core.path_lock``)."""
    return path_lock(path, "golden", lock_dir)


def _Locked(path, lock_dir=None, timeout: float = LOCK_TIMEOUT_S) -> PathLocked:
    """``with _Locked(path, lock_dir):`` holds the golden's lock, or fails naming both files."""
    return PathLocked(path, "golden", lock_dir, timeout)


# --------------------------------------------------------------------------- recovery
def recover_interrupted(path, *, lock_dir=None) -> Recovery:
    """Repair what killed writers left next to the golden at ``path`` (see the module doc);
    takes the golden's lock."""
    with _Locked(path, lock_dir):
        return _recover(Path(path))


# --------------------------------------------------------------------------- writing
def store_golden(path, dump, *, lock_dir=None, store_inputs: bool = False) -> Path:
    """Write ``dump`` (a DumpSet, or the path of a dump: ``compare.engine.as_dump``) as an npy
    golden directory at ``path``, atomically and under the golden's lock (recovering first what
    a killed writer left); op outputs only unless ``store_inputs``. ``golden.json`` records what
    it was written from (``stored_record``). A failed write raises ``GoldenWriteError`` naming
    ``path``."""
    from ..compare.engine import as_dump

    dump = as_dump(dump)
    path = Path(path)
    with _Locked(path, lock_dir), _write_errors(path, os.fspath(path)):
        _recover(path)
        _store(path, dump, store_inputs)
    return path


@contextlib.contextmanager
def _write_errors(path: Path, shown: str) -> Iterator[None]:
    """An ``OSError`` of a golden's write (ENOSPC, EROFS: raised naming a hidden temp path, or
    nothing) becomes a ``GoldenWriteError`` naming the golden ``path`` as ``shown``."""
    try:
        yield
    except OSError as exc:
        if isinstance(exc, AscendAccuracyError):
            raise
        kept = "; the golden in place is unchanged" if os.path.isdir(path) else ""
        raise GoldenWriteError(shown, f"cannot write stored golden: {exc.strerror or exc}{kept}",
                               exc.errno) from exc


def _no_file_in_the_way(path: Path) -> None:
    """A stored golden is a directory: a file at its place is said so (read as a golden, it
    was reported as a truncated dump file), and never overwritten."""
    if path.exists() and not path.is_dir():
        raise ConfigError(str(path), "a stored golden is a directory, but a file is in the way: "
                                     "move or remove it, and the golden is written there again")


def _store(path: Path, dump, store_inputs: bool = False) -> bool:
    """Replace the golden (caller holds the lock). False when the bytes were already there."""
    _no_file_in_the_way(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    token = _token()
    # every entry of this write (.tmp-, .new-, .del-) is ours until the end: no recovery, this
    # container's or another's, takes one for a killed writer's (core.writer_lock)
    with writer_lock.holding(path.parent, f".{path.name}.", token):
        return _replace(path, dump, store_inputs, path.parent / f".{path.name}.{_TMP}-{token}")


def _replace(path: Path, dump, store_inputs: bool, tmp: Path) -> bool:
    from ..dump.npy_writer import NpyDumpWriter

    try:
        files = {}
        with NpyDumpWriter(tmp, private=True) as writer:  # tmp is ours until renamed whole
            for i, op in enumerate(dump.ops):
                ins = record.by_slot(op.inputs) if store_inputs else []
                outs = record.by_slot(op.outputs)  # LSTM's ["", "Y_h"]: Y_h stays output 1
                paths = writer.write_op(op.name, ins, outs, timestamp_us=GOLDEN_TS0 + i)
                files.update(record.written_files(paths, outs + ins))  # outputs come first
        identity = record.GoldenIdentity.from_meta(getattr(dump, "meta", {}))
        if identity is not None:  # a golden computed from a model (not a DumpSet of arrays)
            from .onnxruntime_golden import GOLDEN_FORMAT

            digests = record.file_digests(tmp, files)
            record.write_record(tmp, record.build_record(path, identity, files, store_inputs,
                                                         GOLDEN_FORMAT, digests))
        if path.is_dir() and _same_files(tmp, path):
            _remove(tmp)
            return False
        _fsync_tree(tmp)
        new = path.parent / f".{path.name}.{_NEW}-{tmp.name.rsplit(f'.{_TMP}-', 1)[1]}"
        os.rename(tmp, new)  # the completeness marker: from here on this golden wins recovery
    except BaseException:
        _remove(tmp)
        raise
    _fsync_dir(path.parent)
    old = None
    if os.path.lexists(path):  # aside under a name recovery never restores: removed next
        old = path.parent / f".{path.name}.{_DEL}-{new.name.rsplit(f'.{_NEW}-', 1)[1]}"
        os.rename(path, old)
    os.rename(new, path)
    _fsync_dir(path.parent)
    if old is not None:
        _remove(old)
    return True


def _same_files(a: Path, b: Path) -> bool:
    """Whether directories ``a`` and ``b`` hold the same file names with the same bytes."""
    names_a = sorted(p.name for p in a.iterdir())
    if names_a != sorted(p.name for p in b.iterdir()):
        return False
    for name in names_a:
        fa, fb = a / name, b / name
        if not fa.is_file() or not fb.is_file() or fa.stat().st_size != fb.stat().st_size:
            return False
        with open(fa, "rb") as x, open(fb, "rb") as y:
            while True:
                block = x.read(1 << 20)
                if block != y.read(1 << 20):
                    return False
                if not block:
                    break
    return True


def _fsync_tree(directory: Path) -> None:
    for p in directory.iterdir():
        if p.is_file():
            with open(p, "rb") as f:
                os.fsync(f.fileno())
    _fsync_dir(directory)


def read_golden(path):
    """The stored golden held to its files as they are now (``pinned``), TopKs fed their input."""
    from ..dump.loader import load_dump
    from ..dump.pinned import pinned
    from .stored_topk_inputs import with_topk_inputs

    return with_topk_inputs(pinned(load_dump(Path(path))), record.recorded_model(path))


# --------------------------------------------------------------------------- policy
class StoredGoldenMismatch(ConfigError):
    """A stored golden that is not the reference of this test's model and inputs (its record
    names others, or its tensors were re-saved in another dtype): refused before comparing."""


class StoredGoldenOutdated(StoredGoldenMismatch):
    """A stored golden written in an older golden format that lacks what this model's golden
    holds now (``stored_format``): refused before comparing, naming its format and the fix."""


class StoredGoldenUnreadable(DumpFormatError):
    """A stored golden whose ``golden.json`` or a tensor file cannot be read: refused before
    comparing (rewritten first under ``--accuracy-regen``); names the golden, then the file."""


def after_failure_note(shown: str, status: str) -> str:
    """The failed test's note for ``GoldenPolicy.after_failure``'s ``status`` of ``shown``."""
    if status == UNCHANGED_FAILED:
        return (f"regenerated golden file {shown} (--accuracy-regen): the same bytes, left as it "
                f"was; the test fails against an up-to-date golden")
    kept = " with every op's inputs, as it held them" if status.endswith(KEPT_INPUTS) else ""
    return (f"rewrote golden file {shown}{kept} (--accuracy-regen); the test still fails this "
            f"time, run it again to compare against the new file")


@dataclass(frozen=True)
class GoldenPolicy:
    """When stored goldens are written, under one ``Regen`` (``--accuracy-regen`` /
    ``--accuracy-regen-all``). ``on_recovery(path, note)`` hears about leftovers of killed
    writers that were repaired; ``lock_dir`` overrides where the per-path locks live;
    ``store_inputs`` (``--accuracy-store-inputs``) keeps op inputs in the files written (a
    rewrite keeps them anyway when the golden it replaces had them)."""

    regen: Regen = Regen.NONE
    lock_dir: Optional[Path] = None
    store_inputs: bool = False
    on_recovery: Optional[Callable[[Path, str], None]] = field(default=None, compare=False)
    #: told of a golden written missing, under its lock (H101: after it, a worker could race)
    on_missing_written: Callable[[Path], None] = field(default=lambda path: None, compare=False)
    #: a path as errors name it (``Settings.show``); default: relative to the working directory
    show: Optional[Callable[[Path], str]] = field(default=None, compare=False)

    def obtain(self, path, compute: Callable[[], object], identity=None) -> Tuple[object, str]:
        """The golden to compare against and what happened (``USED``, ``WRITTEN_MISSING``,
        ``REWRITTEN_ALL``). ``compute()`` makes a fresh golden DumpSet from the model.

        A golden read as is that records another model or other inputs than ``identity``
        (``stored_record.identity_of`` the model, inputs and input shape ``compute`` uses) is
        refused (``StoredGoldenMismatch``) before anything is compared; under
        ``--accuracy-regen`` it is rewritten first, and the test fails this once all the same.
        Its tensors' dtypes are checked against the ones written, and their bytes against the
        digests written (a record of ``record_version`` 2)."""
        path = Path(path)
        with _Locked(path, self.lock_dir):
            with _write_errors(path, self._shown(path)):
                self._recover(path)
            _no_file_in_the_way(path)
            if not path.exists():
                self._write(path, compute, self.store_inputs)
                self.on_missing_written(path)
                return read_golden(path), WRITTEN_MISSING
            if self.regen.before_use:
                changed = self._write(path, compute, self._keeps_inputs(path))
                return read_golden(path), REWRITTEN_ALL if changed else UNCHANGED_ALL
            try:
                rec = record.read_record(path)  # read once for the three checks
                check_record(path, rec)  # damaged or partial: refused, never "no record"
                self._check_identity(path, compute, identity, rec)
                golden = read_golden(path)
                self._check_files(path, golden, compute, rec)
            except StoredGoldenMismatch:
                raise
            except DumpFormatError as exc:  # its record or a tensor file cannot be read
                unreadable = exc
            else:
                self._check_format(path, golden, compute, identity, rec)
                return golden, USED
            self._unreadable(path, compute, unreadable)

    def after_failure(self, path, compute: Callable[[], object]) -> Optional[str]:
        """Called when a test that used ``path`` failed: rewrite it under ``Regen.FAILING``,
        keeping op inputs when the golden had them."""
        if not self.regen.after_failure:
            return None
        path = Path(path)
        with _Locked(path, self.lock_dir):
            with _write_errors(path, self._shown(path)):
                self._recover(path)
            inputs = self._keeps_inputs(path)
            if not self._write(path, compute, inputs):
                return UNCHANGED_FAILED
        return REWRITTEN_FAILED + (KEPT_INPUTS if inputs else "")

    def _write(self, path: Path, compute: Callable[[], object], store_inputs: bool) -> bool:
        """Store ``compute()`` at ``path`` (False: its bytes were there already, nothing was
        written): an ``OSError`` of the write is a ``GoldenWriteError`` naming the golden; one
        of ``compute`` (a model's file) keeps its own file name."""
        dump = compute()
        with _write_errors(path, self._shown(path)):
            return _store(path, dump, store_inputs)

    def _unreadable(self, path: Path, compute: Callable[[], object], exc: DumpFormatError) -> None:
        """Refuse a golden one of whose files cannot be read (``exc``), naming that file
        relative to where pytest ran: under ``--accuracy-regen`` rewritten first, as a test that
        failed against it would be (it fails before comparing, so nothing else rewrites it)."""
        bad = self._shown(exc.path) if exc.path else self._shown(path)
        if self.regen.after_failure:
            self._rewrite(path, compute, REWRITTEN_RECORD if isinstance(exc, DamagedRecord)
                          else REWRITTEN_UNREADABLE)
            raise StoredGoldenUnreadable(bad, (
                f"{exc.problem}\nrewrote the stored golden {self._shown(path)} from this test's "
                f"model and inputs (--accuracy-regen); the test fails this time, run it again "
                f"to compare against the new golden"))
        if isinstance(exc, DamagedRecord) and exc.fix:  # a newer version's: upgrade
            raise StoredGoldenUnreadable(bad, f"{exc.problem}\nFix: {exc.fix}")
        other = ""
        if exc.path and os.path.basename(exc.path) == record.RECORD_FILE:
            other = (f", or delete {bad} to use the golden's tensors without checking which "
                     f"model and inputs they come from")
        raise StoredGoldenUnreadable(bad, (
            f"{exc.problem}\nFix: run the test again with --accuracy-regen to rewrite the stored "
            f"golden {self._shown(path)} from this test's model and inputs (then check it "
            f"in){other}"))

    def _keeps_inputs(self, path: Path) -> bool:
        """A rewrite keeps the kind of golden it replaces: op inputs too when it held them."""
        return self.store_inputs or record.holds_inputs(path)

    def _shown(self, path) -> str:
        if self.show is not None:
            return self.show(path)
        from ..core.locations import shown

        return shown(path, Path.cwd())

    def _check_identity(self, path: Path, compute: Callable[[], object], identity, rec) -> None:
        if rec is None or identity is None:
            return  # written by an older version or another tool: used as before
        model = self._shown(identity.model_file) if identity.model_file else identity.model_label
        written = rec.get("model")
        if isinstance(written, str) and written.endswith(".onnx"):  # relative to the golden
            written = self._shown(os.path.normpath(path / written))
        differs = record.mismatch(rec, identity, model, written)
        if not differs:
            return
        head = record.other_source_text(differs)
        self._refuse(path, compute, REWRITTEN_MISMATCH, (
            f"{head}\nrewrote it from {model} and this test's inputs (--accuracy-regen); the test "
            f"fails this time, run it again to compare against the new golden"), (
            f"{head}\nFix: run the test again with --accuracy-regen to rewrite it from {model} and "
            f"these inputs (then check it in), or give the path of this model's and inputs' golden"))

    def _refuse(self, path: Path, compute: Callable[[], object], note: str, rewritten: str,
                refused: str, error=None) -> None:
        """Raise ``StoredGoldenMismatch`` for a golden that cannot be used as it is: under
        ``--accuracy-regen`` rewritten from ``compute()`` first (``note`` for the summary,
        ``rewritten`` the message), else ``refused``, which names the fix; ``error``: the
        ``StoredGoldenMismatch`` class raised; ``refused`` may be a function making it (its fix
        asks git, which a rewrite does not need)."""
        error = error or StoredGoldenMismatch
        if self.regen.after_failure:
            self._rewrite(path, compute, note)
            raise error(self._shown(path), rewritten)
        raise error(self._shown(path), refused() if callable(refused) else refused)

    def _rewrite(self, path: Path, compute: Callable[[], object], note: str) -> None:
        """Rewrite a refused golden from ``compute()`` as the kind it was (op inputs too where
        it held them) and report it with ``note`` (``KEPT_INPUTS`` added where so)."""
        inputs = self._keeps_inputs(path)
        self._write(path, compute, inputs)
        if self.on_recovery is not None:
            self.on_recovery(path, note + (KEPT_INPUTS if inputs else ""))

    def _check_files(self, path: Path, golden, compute: Callable[[], object], rec) -> None:
        """The tensor files against the record: none gone or unlisted, each of its dtype and
        its digest; without a record, float16 files warned about."""
        shown = self._shown(path)
        if rec is not None:
            gone, extra = record.missing_files(rec, path), unlisted_files(rec, path)
            if gone or extra:
                head, fix = files_problem(gone, extra, [self._shown(path / n) for n in extra],
                                          shown, path, rec.get("digests") or {})
                self._refuse(path, compute, REWRITTEN_INCOMPLETE if gone else REWRITTEN_UNLISTED, (
                    f"{head}; rewrote it (--accuracy-regen): the test fails this time, run it "
                    f"again to compare against the new golden"), lambda: (
                    f"{head}. {fix()}, or run the test again with --accuracy-regen to "
                    f"rewrite the golden"))
            for problem, find, note in (  # (in turn: a dtype change refuses before hashing)
                    (dtype_problem, lambda: record.dtype_changes(rec, golden), REWRITTEN_DTYPE),
                    (changed_problem, lambda: record.changed_files(rec, path), REWRITTEN_CHANGED)):
                if changed := find():
                    head, fix = problem(changed, shown, path, rec.get("digests") or {})
                    self._refuse(path, compute, note, (
                        f"{head}; rewrote it (--accuracy-regen): the test fails this time, run it "
                        f"again to compare against the new golden"), lambda: f"{head}. {fix()}")
            return
        low = record.low_precision_files(golden)
        if low:
            from ..core.caller_warning import warn_at_caller

            listed = ", ".join(f"{n} ({d})" for n, d in low[:5])
            more = f" and {len(low) - 5} more" if len(low) > 5 else ""
            warn_at_caller(UserWarning(
                f"stored golden {shown}: {listed}{more} hold lower-precision floats; a golden is "
                f"the fp32 reference, right only where the model's own tensors are of that type. "
                f"This golden has no {record.RECORD_FILE} record to tell (written by an older "
                f"version or another tool): --accuracy-regen-all rewrites it with one"))

    def _check_format(self, path: Path, golden, compute: Callable[[], object], identity,
                      rec) -> None:
        """A golden of an older golden format that lacks what this model's golden now holds
        (``stored_format``) is refused naming the fix, or rewritten under ``--accuracy-regen``
        (the test fails this once); one of a newer format is warned about. A difference that
        cannot matter for this model is used quietly."""
        from . import stored_format

        newer = stored_format.newer_format(rec)
        if newer:
            from ..core.caller_warning import warn_at_caller

            warn_at_caller(UserWarning(f"stored golden {self._shown(path)}: {newer}"))
            return
        source = getattr(identity, "source", None)
        if source is None:
            return
        problem = stored_format.stale_problem(rec, golden, *source)
        if problem is None:
            return
        from .onnxruntime_golden import GOLDEN_FORMAT

        model = (self._shown(identity.model_file) if identity.model_file
                 else identity.model_label)
        self._refuse(path, compute, REWRITTEN_FORMAT, (
            f"{problem}.\nRewrote it in golden format {GOLDEN_FORMAT} from {model} and "
            f"this test's inputs (--accuracy-regen); the test fails this time, run it again to "
            f"compare against the new golden"), (
            f"{problem}.\nFix: run the test again with --accuracy-regen to rewrite it in "
            f"golden format {GOLDEN_FORMAT} from {model} and these inputs (then check it in)"),
            StoredGoldenOutdated)

    def _recover(self, path: Path) -> None:
        done = _recover(path)
        if done and self.on_recovery is not None:
            self.on_recovery(path, done.note())


def missing_message(path, model) -> str:
    """The failure text when a stored golden did not exist yet."""
    return (f"golden file {path} did not exist: wrote it from {model} (onnxruntime fp32).\n"
            f"Check it in and run the test again to compare against it.")
