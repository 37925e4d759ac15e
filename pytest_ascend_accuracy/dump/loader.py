"""``load_dump(path)``: one entry point for every kind of dump this package reads.

* a directory holding ``.npy`` files in golden or converted naming -> ``npy_dir``; a golden cache
  entry's packed ``npy`` directory, or the entry above it -> ``npy_index``;
* an Ascend dump tree (any level from ``dump_path`` down to the step directory) -> the leaf chosen
  by ``discovery.choose_leaf``, every binary file's header parsed (tensors stay on disk);
* one Ascend binary dump file -> a DumpSet with that op.

Op names are the header's ``op_name`` (the real name) when present, else the file name's op part
with FFTS+ partition prefixes stripped. An op dumped several times (same name, several
timestamps) keeps its last dump, as msaccucmp does; ``meta['repeated']`` counts them. The
slices of an FFTS+ manual-split op (``conv1_lxslice0``, ``conv1_lxslice1``) are joined into one op
``conv1`` (``ffts_slices``; ``meta['ffts_slices_joined']`` lists their files).
With an om json, ops are ordered as the om json runs them and get their fused
``original_names`` and output origins from it (``om_pairing`` decides which origins to believe);
the dumps of its sub-graph models (``{ts}/{device}/{sub-graph name}/...``) are merged in, so no
op is dropped. Without an om json, the dump's ``OriginalOp`` fields and timestamp order are used.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple

from ..errors import DumpFormatError
from .ascend_bin import WrittenDump, op_record, parse_dump_file, read_dump_file, tensor_ref
from .device_formats import nc1hwc0_ambiguous
from .discovery import (NOT_A_DUMP_JSON, choose_leaf, describe_leaf, is_json_file,
                        scan_dump_files, sub_model_leaves)
from .ffts_slices import join_sliced_ops
from .layout import parse_file_name, read_mapping
from .model import DumpSet, OpRecord, TensorRef
from .npy_dir import CONVERTED_OP_NAME, has_npy_dump, read_npy_dir
from .npy_index import ENTRY_NPY_DIR, packed_dir_index, read_indexed_dir
from .om_json import OmGraph, OmOp, read_om_json
from .om_pairing import OutputPairing, inserted_ops, pair_outputs


def load_dump(path, *, om_json=None, model_name: Optional[str] = None,
              written: Optional[Mapping[str, WrittenDump]] = None) -> DumpSet:
    """Load the dump at ``path`` (see module doc). Raises ``DumpFormatError`` naming the file and
    the problem for anything it cannot read. ``written``: what the writer of an Ascend dump
    directory wrote there (``AscendDumpWriter.parsed``: ``WrittenDump`` headers by file name),
    used instead of reading a file's header while that file is the one written, unchanged
    (path, inode, size, mtime); every other file is read as always."""
    p = Path(path)
    if not p.exists():
        from ..core.closest_paths import closest_in_folder

        raise DumpFormatError(p, "no such file or directory"
                              + closest_in_folder(p, None, os.fspath(path), None))
    graph = None
    if om_json is not None:
        graph = om_json if isinstance(om_json, OmGraph) else read_om_json(om_json)
    if p.is_file():
        dump = _read_single_file(p)
    elif has_npy_dump(p):
        dump = read_npy_dir(p)
    elif (index := packed_dir_index(p)) is not None:  # a cached golden's npy directory
        dump = read_indexed_dir(p, index)  # (the reports show it as the golden)
    elif (index := packed_dir_index(p / ENTRY_NPY_DIR)) is not None:  # its entry, one up (a
        dump = read_indexed_dir(p / ENTRY_NPY_DIR, index)  # trial passed the entry to compare)
    else:
        subs = graph.sub_graphs if graph is not None else ()
        leaf = choose_leaf(p, model_name, sub_models=subs)
        dump = read_ascend_dir(leaf.path, model_name=model_name or leaf.model_name,
                               written=written)
        if leaf.path != p:
            dump.meta["searched_from"] = str(p)
        if leaf.older:
            dump.meta["older_runs_ignored"] = list(leaf.older)
        if subs:
            dump = _merge_sub_models(dump, leaf, p, subs)
    if graph is not None:
        dump = apply_om_json(dump, graph, source=None if isinstance(om_json, OmGraph)
                             else str(om_json))
    return dump


def _merge_sub_models(dump: DumpSet, leaf, root: Path, names) -> DumpSet:
    """Add the ops ATC's sub-graph models (If/Case branches, loop bodies) dumped under their
    own model directories, as msit does by listing every sub-graph in acl.json's dump_list."""
    found = sub_model_leaves(leaf, root, names)
    ops = list(dump.ops)
    for name, sub_leaf in found.items():
        sub = read_ascend_dir(sub_leaf.path, model_name=name)
        ops.extend(sub.ops)
    meta = dict(dump.meta)
    if found:
        meta["sub_models"] = {name: str(sub_leaf.path) for name, sub_leaf in found.items()}
    missing = [n for n in names if n not in found]
    if missing:
        meta["sub_models_not_dumped"] = missing
    return DumpSet(ops, kind=dump.kind, root=dump.root, model_name=dump.model_name, meta=meta)


def _read_single_file(p: Path) -> DumpSet:
    if p.suffix == ".npy":
        raise DumpFormatError(p, "a single .npy file is not a dump; pass its directory")
    if is_json_file(p):  # read as a dump, its text gave "header length ... runs past the end"
        raise DumpFormatError(p, NOT_A_DUMP_JSON)
    real = p.name
    if real.isdigit():
        real = read_mapping(p.parent).get(real, real)
    fields = parse_file_name(real)
    op = read_dump_file(p, name=fields.base_op_name if fields else None,
                        op_type=fields.op_type if fields else "",
                        timestamp=fields.timestamp if fields else 0)
    return DumpSet([op], kind="ascend", root=str(p))


def read_ascend_dir(directory, *, model_name: Optional[str] = None,
                    written: Optional[Mapping[str, WrittenDump]] = None) -> DumpSet:
    """Every dump file of one leaf directory, in timestamp order, repeated dumps collapsed.
    ``written``: headers known from their writer, by file name (see ``load_dump``)."""
    directory = Path(directory)
    entries, skipped = scan_dump_files(directory)
    if not entries:
        why = f" (skipped: {skipped[:5]})" if skipped else ""
        raise DumpFormatError(directory, f"empty dump directory: no dump files in it{why}")
    files = []
    for e in entries:
        known = written.get(e.path.name) if written else None
        parsed = known.parsed if known is not None and known.describes(e.path) \
            else parse_dump_file(e.path)
        files.append((e.fields, parsed))
    dump = assemble_leaf(files, directory, skipped)
    info = describe_leaf(directory)
    if info.standard:
        dump.meta.update(timestamp_dir=info.timestamp, device_id=int(info.device_id),
                         model_id=info.model_id, step=info.step)
    dump.model_name = model_name or info.model_name
    return dump


def assemble_leaf(files, directory, skipped=()) -> DumpSet:
    """The DumpSet of one leaf's dump files, given as (``DumpFileName`` fields, ``ParsedDump``)
    with distinct ``ParsedDump.path``s: in (timestamp, task id) order, FFTS slices joined,
    repeated dumps of one op collapsed to the last (``read_ascend_dir``; also a dump a run
    compared instead of writing, ``unwritten``)."""
    records: List[OpRecord] = []
    parsed_of = {}
    task_of = {}
    for f, parsed in files:
        parsed_of[parsed.path] = parsed
        task_of[str(parsed.path)] = (f.timestamp, f.task_id)
        records.append(op_record(parsed, name=f.base_op_name, op_type=f.op_type,
                                 timestamp=f.timestamp))
    records, joined = join_sliced_ops(records, parsed_of, task_of, directory)
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
    if joined:
        meta["ffts_slices_joined"] = joined
    return DumpSet(ops, kind="ascend", root=str(directory) if directory is not None else None,
                   meta=meta)


def apply_om_json(dump: DumpSet, graph: OmGraph, *, source: Optional[str] = None) -> DumpSet:
    """Order ops as the om json runs them and attach fused original names and output origins.

    Origins follow ``om_pairing``: an origin the om json gives but the graph contradicts (an
    NPU-inserted TransData naming its consumer) is replaced by the producer's, so the header's
    copy of it is dropped too. Ops the om json does not list keep their relative order after
    the listed ones. ``meta`` records ``npu_only_ops``, ``paired_via_producer`` {op: producer},
    ``om_inner_ops`` (intermediate ops of one framework op split in several) and
    ``om_inserted_ops`` (unmarked ops ATC inserted next to another), which ``compare.matching``
    reads, and ``paired_by_type``: the ops of a converted dump whose file names spell several
    ops alike (``Relu.a_b.1.0``), each named by the one om op of its spelling and type."""
    position = {op.name: k for k, op in enumerate(graph.ops)}
    by_name = graph.by_name
    by_file_name = _by_file_name(graph, {op.name for op in dump.ops})
    typed = _by_typed_file_name(graph, dump)
    pairing = pair_outputs(graph)
    listed, unlisted = [], []
    via: Dict[str, str] = {}
    inner: List[str] = []
    for op in dump.ops:
        om = by_name.get(op.name)
        if om is None and op.name in by_file_name:
            # a nano dump's op is named by its file name only, where "/" and "." are "_"
            # (msaccucmp finds the file from the om name the same way): the om json's name
            om = by_file_name[op.name]
            op = dataclasses.replace(op, name=om.name)
        if om is None and op.name in typed:  # Relu.a_b.1.0 of a converted dump: its om op
            om = typed[op.name]
            op = dataclasses.replace(op, name=om.name)
        if om is None:
            unlisted.append(op)
            continue
        outputs = tuple(_with_origin(_in_om_format(t, om), om, pairing[om.name])
                        for t in op.outputs)
        for t in op.outputs:
            pair = pairing[om.name][t.index] if t.index < len(pairing[om.name]) else None
            if pair is not None and pair.how == "producer":
                via[op.name] = pair.via[-1]
            if pair is not None and pair.how == "inner" and op.name not in inner:
                inner.append(op.name)
        names = () if om.npu_only else (om.original_names or op.original_names)
        inputs = tuple(_input_origin(t, om, pairing) for t in op.inputs)
        listed.append((position[om.name], dataclasses.replace(
            op, original_names=tuple(names), inputs=inputs, outputs=outputs,
            op_type=op.op_type or om.type)))
    # another model's om json: pairing by it would blame ops. ATC's own conversion ops
    # (trans_Cast_0, trans_TransData_4) carry generic names any model's json may share
    if unlisted and not any(not op.name.startswith("trans_") for _, op in listed):
        shown = ", ".join(op.name for op in unlisted[:3]) + (", ..." if len(unlisted) > 3 else "")
        head = (f"none of the dump's {len(unlisted)} ops ({shown}) is" if not listed else
                f"{len(unlisted)} of the dump's {len(dump.ops)} ops ({shown}) are not")
        others = ("" if not listed else ", and the others are ATC's conversion ops (trans_*), "
                                        "whose names any model's json may hold")
        theirs = f" than the dump's {dump.model_name!r}" if dump.model_name else ""
        raise DumpFormatError(source or graph.name or "om json", (
            f"{head} in this om json (model {graph.name!r}, {len(graph.ops)} ops){others}: it "
            f"is another model's{theirs}; pass the om json of the model that made the dump "
            "(atc --mode=1 --om MODEL.om --json MODEL.json)"))
    listed.sort(key=lambda pair: pair[0])
    ops = [op for _, op in listed] + unlisted
    ops = [dataclasses.replace(op, order=i) for i, op in enumerate(ops)]
    meta = dict(dump.meta)
    meta["om_json"] = source or graph.name
    if typed:
        left = {k: v for k, v in meta.get("unpaired_ops", {}).items() if k not in typed}
        meta.pop("unpaired_ops", None)
        if left:
            meta["unpaired_ops"] = left
        meta["paired_by_type"] = {k: om.name for k, om in typed.items()}
    npu_only = [o.name for o in graph.ops if o.npu_only]
    if npu_only:
        meta["npu_only_ops"] = npu_only
    if via:
        meta["paired_via_producer"] = via
    if inner:
        meta["om_inner_ops"] = inner
    dumped = {op.name for _, op in listed}
    inserted = [name for name in inserted_ops(graph) if name in dumped]
    if inserted:
        meta["om_inserted_ops"] = inserted
    if unlisted:
        meta["ops_not_in_om_json"] = [op.name for op in unlisted]
    for key in ("soc_version", "atc_cmdline"):
        if key in graph.attrs:
            meta.setdefault(key, graph.attrs[key])
    return DumpSet(ops, kind=dump.kind, root=dump.root,
                   model_name=dump.model_name or graph.name or None, meta=meta)


def _by_file_name(graph: OmGraph, dumped) -> Dict[str, OmOp]:
    """Om ops by the name a dump file gives them (``layout.sanitize``), where that differs from
    their own, only one om op has it, and no dumped op already has the om op's real name."""
    from .layout import sanitize

    found: Dict[str, List[OmOp]] = {}
    for om in graph.ops:
        spelled = sanitize(om.name)
        if spelled != om.name:
            found.setdefault(spelled, []).append(om)
    real = graph.by_name
    return {k: v[0] for k, v in found.items()
            if len(v) == 1 and k not in real and v[0].name not in dumped}


def _by_typed_file_name(graph: OmGraph, dump: DumpSet) -> Dict[str, OmOp]:
    """Om ops by the name a converted dump gives ops whose file names spell alike
    (``Relu.a_b.1.0``, ``Tanh.a_b.3.0``: ``npy_dir.split_converted``), where the om json has
    exactly one op of that spelling and that type, and the dump one op of them: the type tells
    which real op each is."""
    from .layout import sanitize

    unpaired = dump.meta.get("unpaired_ops") or {}
    if dump.meta.get("naming") != "converted" or not unpaired:
        return {}
    spelled: Dict[Tuple[str, str], List[str]] = {}
    for op in dump.ops:
        m = CONVERTED_OP_NAME.fullmatch(op.name)
        if op.name in unpaired and m and m.group(1) == op.op_type:
            spelled.setdefault((m.group(1), m.group(2)), []).append(op.name)
    oms: Dict[Tuple[str, str], List[OmOp]] = {}
    for om in graph.ops:
        oms.setdefault((om.type, sanitize(om.name)), []).append(om)
    dumped = {op.name for op in dump.ops}
    return {names[0]: oms[key][0] for key, names in spelled.items()
            if len(names) == 1 and len(oms.get(key, ())) == 1 and oms[key][0].name not in dumped}


def _in_om_format(t: TensorRef, om: OmOp) -> TensorRef:
    """An NC1HWC0 output whose original shape fits NCHW and NHWC, read in the framework
    format the om json gives it (``origin_format``: msaccucmp takes the format from there);
    a TF model's NHWC 16x16x16 activation was read as NCHW, every value against the wrong
    golden one."""
    desc = om.output_descs[t.index] if t.index < len(om.output_descs) else None
    if desc is None or not desc.origin_format:
        return t
    return _tensor_ref_in_format(t, desc.origin_format)


def _tensor_ref_in_format(ref: TensorRef, original_format: str) -> TensorRef:
    """``ref`` (a tensor of a dump file) read as ``original_format`` says where its NC1HWC0
    shape fits both NCHW and NHWC (``device_formats.nc1hwc0_ambiguous``); ``ref`` itself
    otherwise. Its file's header is parsed again: the case is rare (H == W == C)."""
    if (ref.format not in ("NC1HWC0", "NC1HWC0_C04") or original_format not in ("NCHW", "NHWC")
            or not nc1hwc0_ambiguous(ref.device_shape or (), ref.shape)):
        return ref
    parsed = parse_dump_file(ref.source)
    slices = parsed.outputs if ref.kind == "output" else parsed.inputs
    if ref.index >= len(slices) or slices[ref.index].original_format == original_format:
        return ref
    fresh = tensor_ref(ref.source, dataclasses.replace(slices[ref.index],
                                                       original_format=original_format))
    return dataclasses.replace(fresh, origin=ref.origin)


def _input_origin(t: TensorRef, om: OmOp, pairing) -> TensorRef:
    """Input ``t`` of ``om`` with the framework tensor that feeds it: its producer's output
    origin (``pairing``, through ATC's inserted Cast/TransData), as msaccucmp finds an input's
    golden (``_find_pre_op``); unchanged where the om json names no producer with one."""
    feeds = om.data_inputs
    if t.index >= len(feeds):
        return t
    src, k = feeds[t.index]
    pairs = pairing.get(src, ())
    origin = pairs[k].origin if k < len(pairs) else None
    return t if origin is None or t.origin == origin else dataclasses.replace(t, origin=origin)


def _with_origin(t: TensorRef, om: OmOp, pairs: Tuple[OutputPairing, ...]) -> TensorRef:
    """``t`` with the origin the om json pairs it with: the trusted or producer's origin; none
    (the matching rules decide by name) where the om json describes the output but its origin
    is not to be believed; the dump header's where the om json says nothing about it."""
    described = t.index < max(len(om.output_origins), len(om.output_descs))
    if not (described or om.npu_only) or t.index >= len(pairs):
        return t
    pair = pairs[t.index]
    origin = pair.origin if pair.how in ("origin", "producer") else None
    return t if t.origin == origin else dataclasses.replace(t, origin=origin)
