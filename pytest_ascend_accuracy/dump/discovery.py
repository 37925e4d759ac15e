"""Finding the leaf (step) directory of an Ascend dump from whatever path the user gives.

A user may point at the ``dump_path`` root, a timestamp directory, a device, model, model-id or
step directory. Leaves are directories that directly hold dump files. With one leaf there is
nothing to choose; with several, a ``model_name`` filters them, and among runs of the same
(device, model) the newest wins (latest timestamp directory, then model id, then step). Leaves
of different devices or models without a ``model_name`` are ambiguous: the error lists them.
Directories holding ``aclnn*`` kernel-level files only are ignored, as msit does.
"""
from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from ..errors import DumpFormatError
from .layout import MAPPING_FILE, DumpFileName, parse_file_name, read_mapping, sanitize

_TIMESTAMP_DIR = re.compile(r"^[0-9]{14}$")


@dataclass(frozen=True)
class DumpFileEntry:
    """One dump file in a leaf directory: its path, the name it stands for, and that name's fields."""

    path: Path
    real_name: str
    fields: DumpFileName


@dataclass(frozen=True)
class LeafInfo:
    """A leaf directory and its place in the standard layout (None parts when not standard)."""

    path: Path
    timestamp: Optional[str] = None
    device_id: Optional[str] = None
    model_name: Optional[str] = None
    model_id: Optional[int] = None
    step: Optional[int] = None
    #: other leaves of the same (device, model) passed over because this one is newer
    older: Tuple[str, ...] = ()

    @property
    def standard(self) -> bool:
        return self.timestamp is not None


def scan_dump_files(directory) -> Tuple[List[DumpFileEntry], List[Tuple[str, str]]]:
    """Dump files directly in ``directory`` (all-digit names resolved through ``mapping.csv``),
    and the files skipped with the reason. Hidden files (writer temp files) are ignored."""
    directory = Path(directory)
    entries: List[DumpFileEntry] = []
    skipped: List[Tuple[str, str]] = []
    mapping: Optional[Dict[str, str]] = None
    try:
        names = sorted(e.name for e in os.scandir(directory) if e.is_file())
    except OSError as exc:
        raise DumpFormatError(directory, f"cannot list directory: {exc.strerror or exc}") from exc
    for name in names:
        if name.startswith(".") or name == MAPPING_FILE:
            continue
        real = name
        if name.isdigit():
            if mapping is None:
                mapping = read_mapping(directory)
            if name not in mapping:
                skipped.append((name, f"all-digit name not listed in {MAPPING_FILE}"))
                continue
            real = mapping[name]
        fields = parse_file_name(real)
        if fields is None:
            if not name.endswith((".npy", ".csv", ".json", ".txt", ".log")):
                skipped.append((name, "not a dump file name"))
            continue
        entries.append(DumpFileEntry(directory / name, real, fields))
    return entries, skipped


def _has_dump_files(files: List[str]) -> bool:
    useful = [f for f in files if not f.startswith(".") and f != MAPPING_FILE]
    if useful and all(f.startswith("aclnn") for f in useful):
        return False
    return any(parse_file_name(f) is not None or f.isdigit() for f in useful)


def find_leaf_dirs(root) -> List[Path]:
    """Every directory under ``root`` (itself included) that directly holds dump files."""
    leaves = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        if _has_dump_files(filenames):
            leaves.append(Path(dirpath))
    return leaves


def describe_leaf(path: Path) -> LeafInfo:
    """Place of a leaf in ``{timestamp}/{device}/{model}/{model_id}/{step}`` when it fits."""
    parts = Path(os.path.abspath(path)).parts
    if len(parts) >= 6:
        ts, dev, model, model_id, step = parts[-5:]
        if (_TIMESTAMP_DIR.match(ts) and dev.isdigit() and model_id.isdigit()
                and step.isdigit()):
            return LeafInfo(path, ts, dev, model, int(model_id), int(step))
    return LeafInfo(path)


def _pack_without_index(root: Path) -> Optional[str]:
    """Why ``root`` reads as empty where it is a packed npy folder (a golden cache entry's
    ``npy/``: every tensor in one file, read through the index one folder up) copied or linked
    away from that index (H99: "empty dump directory" for ``cp -r <entry>/npy``), else None."""
    from .npy_index import ENTRY_NPY_DIR, INDEX_NAME

    try:
        for f in sorted(root.iterdir()):
            if f.is_file() and not f.name.startswith(".") and f.suffix != ".npy":
                with open(f, "rb") as stream:
                    if stream.read(6) == b"\x93NUMPY":  # (a pack is .npy records end to end)
                        return (f"holds {f.name}, the tensors of a golden cache entry's "
                                f"{ENTRY_NPY_DIR}/ folder packed into one file, which only the "
                                f"entry's {INDEX_NAME} (in the folder above {ENTRY_NPY_DIR}/) "
                                f"describes, and there is none above this folder: pass the entry "
                                f"folder (the one holding {INDEX_NAME}), or copy the whole entry, "
                                f"not its {ENTRY_NPY_DIR}/ folder alone")
    except OSError:
        return None
    return None


def choose_leaf(root, model_name: Optional[str] = None, *,
                sub_models: Sequence[str] = ()) -> LeafInfo:
    """The leaf directory to load for ``root``; raises ``DumpFormatError`` naming the choices
    when it is ambiguous and when nothing (or nothing for ``model_name``) is there. Leaves of
    the ``sub_models`` (an om json's sub-graphs, dumped as models of their own) are not
    candidates: ``sub_model_leaves`` finds them next to the chosen one."""
    root = Path(root)
    leaves = [describe_leaf(p) for p in find_leaf_dirs(root)]
    if sub_models:
        subs = set(sub_models) | {sanitize(s) for s in sub_models}
        main = [leaf for leaf in leaves if not (_model_of(leaf, root) & subs)]
        leaves = main or leaves
    if not leaves:
        if _has_stats_csv(root):
            raise DumpFormatError(root, "holds only statistics CSV files (acl.json dump_data: "
                                        "stats); tensor dumps (dump_data: tensor) are needed")
        packed = _pack_without_index(root)
        if packed:
            raise DumpFormatError(root, packed)
        jsons = _json_files(root)
        if jsons:
            shown = ", ".join(jsons[:3]) + (", ..." if len(jsons) > 3 else "")
            raise DumpFormatError(root, f"no dump files in it or below, but JSON ({shown}): "
                                        + NOT_A_DUMP_JSON)
        raise DumpFormatError(root, "empty dump directory: no dump files found in it or below "
                                    "(expected {timestamp}/{device}/{model}/{model_id}/{step}/"
                                    "{op_type}.{op_name}.{task}.{stream}.{timestamp} files)")
    if model_name is not None:
        wanted = {model_name, sanitize(model_name)}
        matching = [leaf for leaf in leaves if _model_of(leaf, root) & wanted]
        if not matching:
            raise DumpFormatError(root, f"no dump of model {model_name!r}; found: "
                                        + _listing(leaves, root))
        leaves = matching
    if len(leaves) == 1:
        return leaves[0]
    keys = {(leaf.device_id, leaf.model_name) if leaf.standard else ("?", str(leaf.path))
            for leaf in leaves}
    if len(keys) > 1:
        hint = "" if model_name else " (pass model_name=... or point at one of them)"
        raise DumpFormatError(root, f"{len(leaves)} dump directories for different devices or "
                                    f"models, cannot choose{hint}: " + _listing(leaves, root))
    newest = max(leaves, key=lambda leaf: (leaf.timestamp, leaf.model_id, leaf.step))
    older = tuple(str(leaf.path) for leaf in leaves if leaf is not newest)
    return dataclasses.replace(newest, older=older)


def sub_model_leaves(main: LeafInfo, root, names: Sequence[str]) -> Dict[str, LeafInfo]:
    """{sub-model name: its leaf} for the ``names`` that have a dump: searched under the main
    leaf's device directory when it has the standard layout (``{ts}/{device}/{model}/...``),
    else under ``root``; a run in the main leaf's timestamp directory is preferred, then the
    newest. Names without a dump are left out (an If branch that did not run has none)."""
    base = Path(os.path.abspath(main.path)).parents[2] if main.standard else Path(root)
    found: Dict[str, LeafInfo] = {}
    leaves = [describe_leaf(p) for p in find_leaf_dirs(base)]
    for name in names:
        wanted = {name, sanitize(name)}
        mine = [leaf for leaf in leaves
                if not _same(leaf.path, main.path) and _model_of(leaf, base) & wanted]
        if not mine:
            continue
        same_run = [leaf for leaf in mine if leaf.standard and leaf.timestamp == main.timestamp]
        pick = same_run or mine
        found[name] = max(pick, key=lambda leaf: (leaf.timestamp or "", leaf.model_id or 0,
                                                   leaf.step or 0, str(leaf.path)))
    return found


def _same(a: Path, b: Path) -> bool:
    return os.path.abspath(a) == os.path.abspath(b)


#: what a JSON file given as a dump is told (polygraphy's --save-outputs gave "header length ...
#: runs past the end of the file", a user trial)
NOT_A_DUMP_JSON = ("a JSON file (e.g. polygraphy --save-outputs) is not a dump; goldens are "
                   "directories of .npy files (this package's golden, msit's, msaccucmp "
                   "convert's), actual dumps Ascend dump directories or files; an om json is "
                   "passed as --om-json")


def is_json_file(path) -> bool:
    """Whether the file at ``path`` is JSON text (``.json``, or a first non-blank byte ``{`` or
    ``[``, which no dump file's 8-byte header length starts with in practice)."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(64).lstrip()
    except OSError:
        return False
    return head[:1] in (b"{", b"[") and all(32 <= b < 127 or b in (9, 10, 13) for b in head)


def _json_files(root: Path) -> List[str]:
    try:
        return sorted(e.name for e in os.scandir(root) if e.is_file()
                      and not e.name.startswith(".") and e.name.lower().endswith(".json"))
    except OSError:
        return []


def _has_stats_csv(root: Path) -> bool:
    for _, _, filenames in os.walk(root):
        if any(f.endswith(".csv") and parse_file_name(f[:-4]) is not None for f in filenames):
            return True
    return False


def _model_of(leaf: LeafInfo, root: Path) -> set:
    if leaf.standard:
        return {leaf.model_name}
    try:
        return set(leaf.path.relative_to(root).parts) | {root.name}
    except ValueError:
        return set(leaf.path.parts)


def _listing(leaves: List[LeafInfo], root: Path) -> str:
    shown = []
    for leaf in leaves[:20]:
        try:
            shown.append(str(leaf.path.relative_to(root)) or ".")
        except ValueError:
            shown.append(str(leaf.path))
    more = f" and {len(leaves) - 20} more" if len(leaves) > 20 else ""
    return ", ".join(shown) + more
