"""``load_dump(path)``: one entry point for every kind of dump this package reads.

* a directory holding ``.npy`` files in golden or converted naming -> ``npy_dir``;
* an Ascend dump tree (any level from ``dump_path`` down to the step directory) -> the leaf chosen
  by ``discovery.choose_leaf``, every binary file's header parsed (tensors stay on disk);
* one Ascend binary dump file -> a DumpSet with that op.

Op names are the header's ``op_name`` (the real name) when present, else the file name's op part
with FFTS+ partition prefixes stripped. An op dumped several times (same name, several
timestamps) keeps its last dump, as msaccucmp does; ``meta['repeated']`` counts them.
With an om json, ops are ordered by om ``id`` and get their fused ``original_names`` and output
origins from it; without, the dump's ``OriginalOp`` fields and timestamp order are used.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Dict, List, Optional

from ..errors import DumpFormatError
from .ascend_bin import read_dump_file
from .discovery import choose_leaf, describe_leaf, scan_dump_files
from .layout import parse_file_name, read_mapping
from .model import DumpSet, OpRecord
from .npy_dir import has_npy_dump, read_npy_dir
from .om_json import OmGraph, read_om_json


def load_dump(path, *, om_json=None, model_name: Optional[str] = None) -> DumpSet:
    """Load the dump at ``path`` (see module doc). Raises ``DumpFormatError`` naming the file and
    the problem for anything it cannot read."""
    p = Path(path)
    if not p.exists():
        raise DumpFormatError(p, "no such file or directory")
    if p.is_file():
        dump = _read_single_file(p)
    elif has_npy_dump(p):
        dump = read_npy_dir(p)
    else:
        leaf = choose_leaf(p, model_name)
        dump = read_ascend_dir(leaf.path, model_name=model_name or leaf.model_name)
        if leaf.path != p:
            dump.meta["searched_from"] = str(p)
        if leaf.older:
            dump.meta["older_runs_ignored"] = list(leaf.older)
    if om_json is not None:
        dump = apply_om_json(dump, om_json if isinstance(om_json, OmGraph) else read_om_json(om_json),
                             source=None if isinstance(om_json, OmGraph) else str(om_json))
    return dump


def _read_single_file(p: Path) -> DumpSet:
    if p.suffix == ".npy":
        raise DumpFormatError(p, "a single .npy file is not a dump; pass its directory")
    real = p.name
    if real.isdigit():
        real = read_mapping(p.parent).get(real, real)
    fields = parse_file_name(real)
    op = read_dump_file(p, name=fields.base_op_name if fields else None,
                        op_type=fields.op_type if fields else "",
                        timestamp=fields.timestamp if fields else 0)
    return DumpSet([op], kind="ascend", root=str(p))


def read_ascend_dir(directory, *, model_name: Optional[str] = None) -> DumpSet:
    """Every dump file of one leaf directory, in timestamp order, repeated dumps collapsed."""
    directory = Path(directory)
    entries, skipped = scan_dump_files(directory)
    if not entries:
        why = f" (skipped: {skipped[:5]})" if skipped else ""
        raise DumpFormatError(directory, f"empty dump directory: no dump files in it{why}")
    records: List[OpRecord] = []
    for e in entries:
        f = e.fields
        records.append(read_dump_file(e.path, name=f.base_op_name, op_type=f.op_type,
                                      timestamp=f.timestamp))
    task_of = {str(e.path): (e.fields.timestamp, e.fields.task_id) for e in entries}
    records.sort(key=lambda r: task_of[r.source])
    latest: Dict[str, OpRecord] = {}
    counts: Dict[str, int] = {}
    for r in records:
        latest[r.name] = r
        counts[r.name] = counts.get(r.name, 0) + 1
    ordered = sorted(latest.values(), key=lambda r: task_of[r.source])
    ops = [dataclasses.replace(r, order=i) for i, r in enumerate(ordered)]
    meta: Dict[str, object] = {}
    repeated = {n: c for n, c in counts.items() if c > 1}
    if repeated:
        meta["repeated"] = repeated
    if skipped:
        meta["skipped_files"] = skipped
    info = describe_leaf(directory)
    if info.standard:
        meta.update(timestamp_dir=info.timestamp, device_id=int(info.device_id),
                    model_id=info.model_id, step=info.step)
    return DumpSet(ops, kind="ascend", root=str(directory),
                   model_name=model_name or info.model_name, meta=meta)


def apply_om_json(dump: DumpSet, graph: OmGraph, *, source: Optional[str] = None) -> DumpSet:
    """Order ops by om ``id`` and attach fused original names and output origins from the om json.
    Ops the om json does not list keep their relative order after the listed ones."""
    by_name = graph.by_name
    listed, unlisted = [], []
    for op in dump.ops:
        om = by_name.get(op.name)
        if om is None:
            unlisted.append(op)
            continue
        outputs = tuple(
            dataclasses.replace(t, origin=om.output_origins[t.index])
            if t.origin is None and t.index < len(om.output_origins)
            and om.output_origins[t.index] is not None else t
            for t in op.outputs)
        names = om.original_names or op.original_names
        if om.npu_only:
            names = ()
        listed.append((om.id, dataclasses.replace(op, original_names=tuple(names),
                                                  outputs=outputs,
                                                  op_type=op.op_type or om.type)))
    listed.sort(key=lambda pair: pair[0])
    ops = [op for _, op in listed] + unlisted
    ops = [dataclasses.replace(op, order=i) for i, op in enumerate(ops)]
    meta = dict(dump.meta)
    meta["om_json"] = source or graph.name
    npu_only = [o.name for o in graph.ops if o.npu_only]
    if npu_only:
        meta["npu_only_ops"] = npu_only
    if unlisted:
        meta["ops_not_in_om_json"] = [op.name for op in unlisted]
    for key in ("soc_version", "atc_cmdline"):
        if key in graph.attrs:
            meta.setdefault(key, graph.attrs[key])
    return DumpSet(ops, kind=dump.kind, root=dump.root,
                   model_name=dump.model_name or graph.name or None, meta=meta)
