"""FFTS+ manual-split ops: their slices joined into the op's whole tensors (docs/formats.md §1.1).

With FFTS+ manual slicing (Atlas A2) one op runs as N slices, each dumped to its own file named
``{op}_lxslice{k}``. msaccucmp (``dump_parse/ffts_parser.py``, ``dump_data_object.py``) joins
them: the files of one op, in slice order, are concatenated output by output along the cut axis
read from the dump's ``_sgt_json_info`` attribute (``DumpData.attr``, a JSON object):
``outputCutList[i]`` holds one number per dim of output ``i``'s stored shape, the cut dims being
those not 1, and the join runs along the first of them; an output no dim of which is cut is
slice 0's. The joined op is named without ``_lxsliceN``.

Where msaccucmp goes on regardless (a missing slice: a warning; no cut axis: it compares the
last slice alone as the whole op; several cut dims: it joins along the first), this module
refuses with a ``DumpFormatError`` naming the op, its files and the problem: a part is never
compared as the whole. Inputs, which msaccucmp takes from slice 0, are joined by
``inputCutList`` the same way; an input it does not cut is slice 0's where every slice holds
the same, and otherwise fails when loaded, saying why.

Device layouts: msaccucmp joins the stored (device-layout) arrays. A cut NC1HWC0 or FRACTAL_NZ
dim is joined here along the logical dim it holds, each slice converted back first; that is
the same tensor where no slice but the last pads that dim (checked: otherwise refused). A cut
FRACTAL_Z tensor, or a cut C0/Ni block dim, is refused.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..errors import DumpFormatError
from . import device_formats as df
from .ascend_bin import ParsedDump, TensorSlice, tensor_ref
from .layout import LXSLICE
from .model import OpRecord, TensorRef

#: the ``DumpData.attr`` entry that carries a slice's thread-slicing JSON (GE ``kAttrSgtJsonInfo``)
SGT_ATTR = "_sgt_json_info"


def slice_of(name: str) -> Optional[Tuple[str, int]]:
    """(op name, slice number) of a manual-split slice's name (``conv1_lxslice2``), else None."""
    m = LXSLICE.search(name)
    return (name[:m.start()], int(m.group(1))) if m else None


def sgt_info(parsed: ParsedDump) -> Optional[dict]:
    """The ``_sgt_json_info`` attribute of a dump's header, decoded; None when absent.
    ``ValueError`` when it is not a JSON object."""
    for a in getattr(parsed.header, "attr", ()):
        if a.name == SGT_ATTR:
            info = json.loads(a.value)
            if not isinstance(info, dict):
                raise ValueError(f"{SGT_ATTR} is not a JSON object")
            return info
    return None


def join_sliced_ops(records: Sequence[OpRecord], parsed: Mapping[str, ParsedDump],
                    order: Mapping[str, tuple], where) -> Tuple[List[OpRecord], Dict[str, list]]:
    """``records`` with the slices of each manual-split op replaced by one joined record, and
    {op name: [slice file names]} of the ops joined. ``parsed``: each record's parsed file by
    ``source``; ``order``: (timestamp, task id) by source (the latest dump of a slice serves).
    A lone ``x_lxsliceN`` is an op's own unless its header says it is one of several slices."""
    groups: Dict[str, Dict[int, OpRecord]] = {}
    repeated: Dict[str, List[OpRecord]] = {}
    for r in records:
        found = slice_of(r.name)
        if found is None:
            repeated.setdefault(r.name, []).append(r)
            continue
        parts = groups.setdefault(found[0], {})
        old = parts.get(found[1])
        if old is None or order[r.source] >= order[old.source]:
            parts[found[1]] = r
    for op, dumps in repeated.items():
        try:
            info = sgt_info(parsed[dumps[0].source]) if len(dumps) > 1 else None
        except ValueError:
            info = None
        n = info.get("slice_instance_num") if info else None
        if info and info.get("threadMode") and isinstance(n, int) and n > 1:
            raise _error(op, dumps, where, "FFTS+ auto mode (threadMode set): each file holds "
                                           "one thread's slice, which msaccucmp joins by "
                                           "output_tensor_slice and this package does not", "")
    joined: Dict[str, OpRecord] = {}
    files: Dict[str, list] = {}
    for op, parts in groups.items():
        if len(parts) == 1:
            (k, only), = parts.items()
            info = _info(op, [only], parsed, where)
            n = info.get("slice_instance_num") if info else None
            if not isinstance(n, int) or n <= 1:
                continue  # an op's own name ending in _lxsliceN
        ordered = [parts[k] for k in sorted(parts)]
        joined[op] = _join(op, sorted(parts), ordered, parsed, where)
        files[op] = [_base(r.source) for r in ordered]
    if not joined:
        return list(records), files
    out, done = [], set()
    for r in records:
        found = slice_of(r.name)
        if found is None or found[0] not in joined:
            out.append(r)
        elif found[0] not in done:
            done.add(found[0])
            out.append(joined[found[0]])
    return out, files


def _base(path) -> str:
    return str(path).replace("\\", "/").rsplit("/", 1)[-1]


class _Refused(Exception):
    pass


def _info(op: str, parts: Sequence[OpRecord], parsed, where) -> Optional[dict]:
    try:
        return sgt_info(parsed[parts[0].source])
    except ValueError as exc:
        raise _error(op, parts, where, f"slice 0's {SGT_ATTR} attribute cannot be read "
                                       f"({exc})") from None


def _error(op: str, parts: Sequence[OpRecord], where, problem: str,
           kind: str = "manual-split ") -> DumpFormatError:
    names = ", ".join(_base(r.source) for r in parts[:4]) + (", ..." if len(parts) > 4 else "")
    return DumpFormatError(where, f"FFTS+ {kind}op {op!r} (slice files {names}): {problem}; "
                                  "its slices are not joined, so this dump cannot be compared")


def _join(op: str, numbers: List[int], parts: List[OpRecord], parsed, where) -> OpRecord:
    info = _info(op, parts, parsed, where)
    if info is None:
        raise _error(op, parts, where, f"slice 0 carries no {SGT_ATTR} attribute, so the cut "
                                       "axis is not recorded")
    if info.get("threadMode"):
        raise _error(op, parts, where, "threadMode is set (FFTS+ auto mode), whose slices are "
                                       "named by thread, not _lxsliceN")
    n = info.get("slice_instance_num")
    expected = list(range(n)) if isinstance(n, int) and n > 0 else list(range(max(numbers) + 1))
    if numbers != expected:
        missing = sorted(set(expected) - set(numbers))
        extra = sorted(set(numbers) - set(expected))
        said = f"slice_instance_num is {n}" if isinstance(n, int) else "slices count from 0"
        problem = (f"slice(s) {', '.join(f'_lxslice{k}' for k in missing)} missing"
                   if missing else f"slice(s) {extra} beyond the count")
        raise _error(op, parts, where, f"{problem} ({said}; found {numbers})")
    files = [parsed[r.source] for r in parts]
    try:
        outputs = _join_tensors("output", info.get("outputCutList"), files, required=True)
        inputs = _join_tensors("input", info.get("inputCutList"), files, required=False)
    except _Refused as exc:
        raise _error(op, parts, where, str(exc)) from None
    first = parts[0]
    return dataclasses.replace(first, name=op, inputs=inputs, outputs=outputs)


def _cut_axes(cuts, count: int, kind: str, required: bool) -> List[Optional[int]]:
    """The cut dim of each of ``count`` tensors (None: not cut) from a cut list."""
    key = f"{kind}CutList"
    if not cuts:
        if required:
            raise _Refused(f"{key} is empty, so no cut axis is recorded")
        return [None] * count
    if not isinstance(cuts, list) or not all(
            isinstance(c, list) and all(isinstance(v, int) for v in c) for c in cuts):
        raise _Refused(f"{key} is not a list of lists of integers: {str(cuts)[:80]}")
    if len(cuts) != count:
        raise _Refused(f"{key} has {len(cuts)} entries for {count} {kind}s")
    axes: List[Optional[int]] = []
    for i, c in enumerate(cuts):
        dims = [k for k, v in enumerate(c) if v != 1]
        if len(dims) > 1:
            raise _Refused(f"{key}[{i}] = {c} cuts dims {dims}; msaccucmp joins along the "
                           "first only, which does not rebuild the tensor")
        axes.append(dims[0] if dims else None)
    if required and all(a is None for a in axes):
        raise _Refused(f"{key} = {cuts} cuts no dim (every entry is 1)")
    return axes


def _join_tensors(kind: str, cuts, files: List[ParsedDump], *, required: bool
                  ) -> Tuple[TensorRef, ...]:
    per_file = [f.outputs if kind == "output" else f.inputs for f in files]
    counts = {len(s) for s in per_file}
    if len(counts) > 1:
        raise _Refused(f"the slices hold {sorted(counts)} {kind}s")
    count = counts.pop()
    axes = _cut_axes(cuts, count, kind, required)
    joined = []
    for i, axis in enumerate(axes):
        slices = [s[i] for s in per_file]
        refs = [tensor_ref(f.path, s) for f, s in zip(files, slices)]
        joined.append(_joined_ref(kind, i, axis, slices, refs))
    return tuple(joined)


def _joined_ref(kind: str, i: int, axis: Optional[int], slices: List[TensorSlice],
                refs: List[TensorRef]) -> TensorRef:
    where = f"{kind} {i}"
    first = slices[0]
    for s in slices[1:]:
        if s.dtype_enum != first.dtype_enum or s.format != first.format:
            raise _Refused(f"{where}: slices differ in dtype or format "
                           f"({refs[0].dtype}/{first.format} vs "
                           f"{refs[slices.index(s)].dtype}/{s.format})")
    shapes = [s.device_shape for s in slices]
    if axis is None:
        if len(set(shapes)) == 1:
            return refs[0]  # not cut: every slice holds it whole (msaccucmp takes slice 0's)
        problem = (f"{where} is not cut ({kind}CutList) but its slices differ in shape "
                   f"{[list(x) for x in shapes]}")
        if kind == "output":
            raise _Refused(problem)
        return dataclasses.replace(refs[0], loader=_refuse_loader(refs[0].source, problem))
    rank = len(first.device_shape)
    if axis >= rank:
        raise _Refused(f"{where}: cut dim {axis} is beyond its {rank}-D shape {list(shapes[0])}")
    for s in shapes[1:]:
        if len(s) != rank or any(a != b for k, (a, b) in enumerate(zip(s, shapes[0]))
                                 if k != axis):
            raise _Refused(f"{where}: slice shapes {[list(x) for x in shapes]} differ outside "
                           f"the cut dim {axis}")
    dev = list(shapes[0])
    dev[axis] = sum(s[axis] for s in shapes)
    logical_axis = _logical_axis(where, axis, slices, refs)
    if len({r.shape[:logical_axis] + r.shape[logical_axis + 1:] for r in refs}) > 1:
        raise _Refused(f"{where}: slices {[list(r.shape) for r in refs]} differ outside the "
                       f"cut dim {logical_axis}")
    shape = list(refs[0].shape)
    shape[logical_axis] = sum(r.shape[logical_axis] for r in refs)

    def load() -> np.ndarray:
        return np.concatenate([r.load() for r in refs], axis=logical_axis)

    return dataclasses.replace(refs[0], shape=tuple(shape), device_shape=tuple(dev),
                               loader=load)


def _logical_axis(where: str, axis: int, slices: List[TensorSlice], refs: List[TensorRef]) -> int:
    """The logical dim that stored dim ``axis`` holds, where every slice but the last fills
    it without padding (so joining the converted slices equals converting the joined ones)."""
    fmt = slices[0].format
    if fmt not in df.CONVERTIBLE:
        return axis  # stored as it is read
    if fmt in df.FIVE_HD:
        hows = set()
        for s in slices:
            hows.add(df._nc1hwc0_plan(s.device_shape, s.original_shape, s.original_format,
                                      fmt)[2])
        if len(hows) == 1 and hows <= {"NCHW", "NHWC"} and axis < 4:
            logical = {"NCHW": (0, 1, 2, 3), "NHWC": (0, 3, 1, 2)}[hows.pop()][axis]
            if axis != 1 or all(r.shape[logical] == s.device_shape[1] * s.device_shape[4]
                                for r, s in zip(refs[:-1], slices[:-1])):
                return logical
    elif fmt == "FRACTAL_NZ":
        rank, lrank = len(slices[0].device_shape), len(refs[0].shape)
        block = {rank - 4: (lrank - 1, 0, 3), rank - 3: (lrank - 2, 1, 2)}.get(axis)
        if block is not None and lrank >= 2:
            logical, a, b = block
            if all(r.shape[logical] == s.device_shape[-4 + a] * s.device_shape[-4 + b]
                   for r, s in zip(refs[:-1], slices[:-1])):
                return logical
        elif axis < rank - 4 and refs[0].shape[:rank - 4] == slices[0].device_shape[:rank - 4]:
            return axis
    raise _Refused(f"{where}: cut dim {axis} of its {fmt} shape {list(slices[0].device_shape)} "
                   "is not one whose slices join into the logical tensor (a block dim, FRACTAL_Z, "
                   "or a slice padded inside the join)")


def _refuse_loader(source, problem: str):
    def load():
        raise DumpFormatError(source, problem)
    return load


__all__ = ["SGT_ATTR", "slice_of", "sgt_info", "join_sliced_ops"]
