"""What made a stored golden: the ``golden.json`` record written beside its ``.npy`` files.

A stored golden (``golden_dump(path=...)``, ``golden:`` of a YAML suite) is only the reference
of the model and the inputs it was written from. The record (``RECORD_FILE``, JSON, docs/formats.md
§7) says which: the model's sha256 and its path relative to the golden directory, the inputs'
digest (``graph.content_digests.inputs_digest``, as in ``golden_key``), the ``input_shape``, the
package's ``GOLDEN_FORMAT``, whether op inputs were stored, each file's dtype and, since
``record_version`` 2, each file's digest (``digests``). Readers list
``*.npy`` files only (``dump.npy_dir``, msaccucmp, msit), so the record is never read as a tensor.

When a golden with a record is used, this test's model and inputs are checked against it
before anything is compared (``mismatch``), and each tensor's dtype against the one written
(``dtype_changes``), and each tensor file's bytes against the digest written
(``changed_files``: a file re-saved with other values of the same dtype and shape was compared
as the reference, and blamed the device's operator for it); a record that is not one this
package wrote (``{}``, partial, hand-edited)
is refused naming it (``stored_record_check``), never read as none. A golden without a record
(an older version of this package, another tool) is used as before; its float16 tensors are
only warned about (``low_precision_files``). Its
``golden_format`` (none without a record) is what ``stored_format`` judges an older one by.

The test's identity (``identity_of`` its model, inputs and input shape) is given by the caller
(``GoldenPolicy.obtain(..., identity=...)``): a stored golden is checked, and used, without
running onnxruntime.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ..graph.content_digests import model_sha256

RECORD_FILE = "golden.json"
#: bump when the record's fields change (2: ``digests``)
RECORD_VERSION = 2
#: float dtypes below the float32 of a golden (a golden is onnxruntime's fp32 reference)
LOW_PRECISION = ("float16", "bfloat16", "float8_e4m3fn", "float8_e5m2")
#: ``DumpSet.meta`` key under which ``golden_dump`` leaves what the golden was computed from
SOURCE_META = "golden_source"


@dataclass(frozen=True)
class GoldenIdentity:
    """The model and inputs a golden is (or would be) computed from."""

    model_sha256: Optional[str]  # None: not hashed yet (``identity_of(sha256=False)``)
    model_file: Optional[str]  # absolute path of a model file, None for an in-memory model
    model_label: str
    inputs_digest: str
    input_shape: Dict[str, List[int]]
    #: (model, inputs, input_shape) as given: what ``stored_format`` looks at in a golden of an
    #: older format (never recorded, never compared)
    source: Optional[Tuple[object, Mapping[str, object], object]] = field(
        default=None, compare=False, repr=False)

    def as_meta(self) -> Dict[str, object]:
        return {"model_sha256": self.model_sha256, "model_file": self.model_file,
                "model_label": self.model_label, "inputs_digest": self.inputs_digest,
                "input_shape": self.input_shape}

    @staticmethod
    def from_meta(meta: Mapping[str, object]) -> Optional["GoldenIdentity"]:
        src = meta.get(SOURCE_META) if isinstance(meta, Mapping) else None
        if not isinstance(src, Mapping):
            return None
        try:
            fields = ("model_sha256", "model_file", "model_label", "inputs_digest", "input_shape")
            return GoldenIdentity(**{k: src[k] for k in fields})
        except KeyError:
            return None


def identity_of(model, inputs: Mapping[str, object], input_shape=None, *,
                sha256: bool = True, digest: Optional[str] = None) -> GoldenIdentity:
    """The identity of ``model`` on ``inputs``; ``sha256=False`` leaves a model file's sha256
    (``None``) to ``build_record``, which hashes it only when a golden is written; ``digest``:
    the inputs' ``inputs_digest`` when the caller has it."""
    from ..graph.content_digests import inputs_digest
    from ..graph.inputs_mapping import require_inputs_mapping
    from ..graph.onnx_graph import model_label, parse_input_shape

    require_inputs_mapping(model, inputs, f"inputs of {model_label(model)!r}")
    shapes = parse_input_shape(input_shape)
    is_file = isinstance(model, (str, os.PathLike))
    return GoldenIdentity(model_sha256(model) if sha256 or not is_file else None,
                          os.path.abspath(os.fspath(model)) if is_file else None,
                          model_label(model), digest or inputs_digest(inputs),
                          {k: [int(d) for d in v] for k, v in (shapes or {}).items()},
                          (model, inputs, input_shape))


# --------------------------------------------------------------------------- the record
def build_record(golden_dir: Path, identity: Optional[GoldenIdentity], files: Mapping[str, str],
                 inputs_stored: bool, golden_format: int,
                 digests: Mapping[str, str]) -> Dict[str, object]:
    """The record of a golden written at ``golden_dir`` (its final place) with ``files``
    ({file name: dtype}) of ``digests`` (``file_digests``); ``golden_format``:
    ``onnxruntime_golden.GOLDEN_FORMAT``."""
    from .. import __version__

    record: Dict[str, object] = {"record_version": RECORD_VERSION, "golden_format": golden_format,
                                 "written_by": f"pytest-ascend-accuracy {__version__}"}
    if identity is not None:
        model = identity.model_label
        if identity.model_file is not None:
            try:  # relative to the golden directory: the same in every checkout
                model = Path(os.path.relpath(identity.model_file, Path(golden_dir).absolute())).as_posix()
            except ValueError:
                model = identity.model_file
        sha = identity.model_sha256
        if sha is None and identity.model_file is not None:
            sha = model_sha256(identity.model_file)
        record.update({"model": model, "model_sha256": sha,
                       "inputs_digest": identity.inputs_digest, "input_shape": identity.input_shape})
    record.update({"inputs_stored": bool(inputs_stored), "tensors": dict(sorted(files.items())),
                   "digests": dict(sorted(digests.items()))})
    return record


def file_digests(directory: Path, names) -> Dict[str, str]:
    """``{file name: "<algorithm>:<hex digest>"}`` of the files ``names`` in ``directory``: the
    record's ``digests`` (the cache manifests' algorithm, ``core.cache.HASH``)."""
    from ..core.cache import HASH, file_digest

    return {n: f"{HASH}:{file_digest(Path(directory) / n)}" for n in sorted(names)}


#: a file written this recently is hashed at every use: a rewrite of the same size within one
#: timestamp tick (1 s on ext2 or FAT) leaves its stat as it was (git's "racily clean" files)
RACY_NS = 2_000_000_000
#: {(absolute path, recorded digest): the file's stat when its bytes last matched it}
_VERIFIED: Dict[Tuple[str, str], Tuple[int, int, int, int]] = {}


def changed_files(record: Mapping[str, object], golden_dir: Path) -> List[str]:
    """The tensor files of ``golden_dir`` whose bytes are not the ones the golden was written
    with (their digest is not the record's; a missing one is ``missing_files``'). A record of
    ``record_version`` 1 holds no digests: nothing to check. A file whose stat has not changed
    since its bytes matched in this process is not read again (a session's tests of one
    golden hash it once)."""
    digests = record.get("digests")
    if not isinstance(digests, Mapping):
        return []
    from ..core.cache import file_digest

    out = []
    for name, want in sorted(digests.items()):
        path = Path(golden_dir) / name
        try:
            st = path.stat()
        except OSError:
            continue
        stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        key = (os.path.abspath(path), want)
        if _VERIFIED.get(key) == stamp:
            continue
        algorithm, _, digest = want.partition(":")
        if file_digest(path, algorithm) != digest:
            out.append(name)
        elif time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > RACY_NS:
            _VERIFIED[key] = stamp
    return out


def write_record(directory: Path, record: Mapping[str, object]) -> None:
    (Path(directory) / RECORD_FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def read_record(golden_dir) -> Optional[Dict[str, object]]:
    """The golden's record, or None when it has none (older version, another tool). An
    unreadable record is an error naming it: it is never silently skipped."""
    from ..errors import DumpFormatError

    p = Path(golden_dir) / RECORD_FILE
    if not p.is_file():
        if os.path.lexists(p):  # a folder, a broken link: not "no record" (checks skipped)
            raise DumpFormatError(p, "a stored golden record is a JSON file, but this is "
                                     + ("a broken link" if p.is_symlink() and not p.exists()
                                        else "not a regular file"))
        return None
    try:
        record = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DumpFormatError(p, f"unreadable stored golden record ({exc})") from None
    if not isinstance(record, dict):
        raise DumpFormatError(p, "a stored golden record is a JSON object")
    return record


def recorded_model(golden_dir) -> Optional[Path]:
    """The model the stored golden ``golden_dir`` records, when it is still there unchanged;
    None when it records none, or the model is gone, changed or unreadable (another model than
    the golden's: its names and edges say nothing of it)."""
    folder = Path(golden_dir)
    try:
        record = read_record(folder) if folder.is_dir() else None
        name = record.get("model") if record else None
        if not isinstance(name, str) or not name:
            return None
        model = folder / name
        if not model.is_file() or model_sha256(model) != record.get("model_sha256"):
            return None
        return model
    except Exception:  # noqa: BLE001 -- a record or model that cannot be read names nothing
        return None


def mismatch(record: Mapping[str, object], identity: GoldenIdentity, shown_model: str,
             written_model=None) -> List[str]:
    """What differs between the record (``stored_record_check.check_record`` passed it) and
    this test's model and inputs (empty: they match); ``written_model``: the record's model as
    shown to the user. A record without a key differs in it: ``{}`` matches nothing."""
    out = []
    sha = identity.model_sha256
    if sha is None and identity.model_file is not None:
        sha = model_sha256(identity.model_file)
    if record.get("model_sha256") != sha:
        written = written_model or record.get("model")
        out.append(f"model: written from {written} (sha256 {str(record.get('model_sha256'))[:16]}"
                   f"...), this test's model is {shown_model} (sha256 {str(sha)[:16]}...)")
    if record.get("inputs_digest") != identity.inputs_digest:
        out.append(f"inputs: written from inputs with digest {record.get('inputs_digest')}, this "
                   f"test's inputs have {identity.inputs_digest} (another seed, inputs file or "
                   f"shape, or seeded inputs this version draws differently: an integer *mask* "
                   f"input, an index into a table of fewer than 10 rows)")
    if (record.get("input_shape") or {}) != (identity.input_shape or {}):
        out.append(f"input_shape: written with {record.get('input_shape') or None}, this test "
                   f"gives {identity.input_shape or None}")
    return out


def other_source_text(differs: Sequence[str], golden: str = "stored golden",
                      whose: str = "this test's") -> str:
    """Why a golden of another model or other inputs is refused (``differs``: ``mismatch``'s or
    ``input_shapes_mismatch``'s lines), as the plugin says it of a stored golden and
    ``ascend-accuracy compare`` of a dump of other inputs."""
    return (f"this {golden} was written from another model or other inputs than {whose} (its "
            f"golden.json says so), so comparing against it would blame operators for that "
            f"difference:\n  " + "\n  ".join(differs))


def recorded_input_shapes(record) -> Dict[str, Tuple[int, ...]]:
    """The input shapes a golden's ``golden.json`` (``record``) says it was made at: a stored
    golden's ``input_shape``, a golden cache entry's ``graph.input_shapes``; {} where none."""
    if not isinstance(record, Mapping):
        return {}
    shapes = record.get("input_shape")
    if not shapes and isinstance(record.get("graph"), Mapping):
        shapes = record["graph"].get("input_shapes")
    try:
        return {str(k): tuple(int(d) for d in v) for k, v in (shapes or {}).items()}
    except (TypeError, ValueError, AttributeError):
        return {}


def input_shapes_mismatch(recorded: Mapping[str, Sequence[int]],
                          found: Mapping[str, Sequence[int]], whose: str) -> List[str]:
    """``mismatch``'s line for input shapes that differ (``found``: those ``whose`` inputs have,
    compared where both name an input); [] where they agree."""
    from ..graph.shared_dims import shapes_text

    common = [k for k in found if k in recorded]
    if all(tuple(recorded[k]) == tuple(found[k]) for k in common):
        return []
    return [f"input shapes: written from inputs {shapes_text({k: recorded[k] for k in common})}"
            f", {whose} inputs are {shapes_text({k: found[k] for k in common})}"]


def by_slot(tensors) -> list:
    """The arrays of an op's ``tensors`` at their slots' indices, ``None`` where a slot has no
    tensor (an omitted optional output or input: LSTM's outputs ``["", "Y_h"]``), so a stored
    golden numbers them as the golden in memory, ATC's dumps and msit do (H111: ``Y_h`` was
    stored as output 0, and the check of a stored golden failed "golden op has no output 1").
    Indices that repeat or are negative (a DumpSet a user built) keep their order instead."""
    tensors = list(tensors)
    indices = [t.index for t in tensors]
    if len(set(indices)) != len(indices) or any(i < 0 for i in indices):
        return [t.load() for t in tensors]
    slots = [None] * (max(indices, default=-1) + 1)
    for t in tensors:
        slots[t.index] = t.load()
    return slots


def written_files(paths, arrays) -> Dict[str, str]:
    """{file name: dtype} of what a writer wrote (``paths`` and the arrays, in order; a
    ``None`` slot wrote no file)."""
    present = [a for a in arrays if a is not None]
    return {Path(p).name: str(a.dtype) for p, a in zip(paths, present)}


def dtype_changes(record: Mapping[str, object], dump) -> List[Tuple[str, str, str]]:
    """(file, dtype written, dtype found) of every tensor whose dtype is not the one the golden
    was written with (a user re-saved it)."""
    written = record.get("tensors")
    if not isinstance(written, Mapping):
        return []
    out = {}
    for name, t in _files(dump):
        want = written.get(name)
        if want is not None and want != t.dtype:
            out[name] = (name, str(want), t.dtype)
    return [out[k] for k in sorted(out)]


def missing_files(record: Mapping[str, object], golden_dir: Path) -> List[str]:
    """The tensor files the record lists that are gone from ``golden_dir`` (a user deleted or
    lost them): their ops would go "not compared", and the only advice then was to ignore
    them."""
    written = record.get("tensors")
    if not isinstance(written, Mapping):
        return []
    return sorted(name for name in written if not (Path(golden_dir) / name).is_file())


def low_precision_files(dump) -> List[Tuple[str, str]]:
    """(file, dtype) of the float tensors below float32 in a golden."""
    return sorted({(name, t.dtype) for name, t in _files(dump) if t.dtype in LOW_PRECISION})


def _files(dump):
    for op in dump.ops:
        for t in list(op.outputs) + list(op.inputs):
            if t.source:
                yield Path(t.source).name, t


def holds_inputs(golden_dir) -> bool:
    """Whether a stored golden keeps op inputs (``--accuracy-store-inputs`` wrote it)."""
    try:
        return any(e.name.startswith("input_") and e.name.endswith(".npy") or e.name == "input_refs.csv"
                   for e in os.scandir(golden_dir))
    except OSError:
        return False
