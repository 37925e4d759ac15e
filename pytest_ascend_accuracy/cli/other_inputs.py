"""``ascend-accuracy compare`` of a dump against a golden made from other inputs.

An audit compared a kept dump of ddddocr's quantised OCR model run on a 64x200 text image with
the cache's golden of seeded 64x256 inputs: nothing refused it, every tensor "could not be
compared" and the hint blamed float16 rounding or a fault, with a diagnose command at the
golden's shape. No conversion mode changes a tensor's shape, so the inputs differ.

The golden's ``golden.json`` records the input shapes it was made at (a stored golden's
``input_shape``, a cache entry's ``graph.input_shapes``: ``golden.stored_record``). The dump's
are taken, first found first, from its meta (``input_shapes``, where a run recorded them), the
``atc_cmdline`` of its om json (``--input_shape=``), or its op inputs that are the graph's
inputs (the golden's op inputs stored in their own files with a recorded input's shape). Where
they are known and differ, the compare is refused as the plugin refuses a stored golden of
other inputs (``stored_record.other_source_text``). Where the dump holds no input shapes
(a dump of op outputs), the next step says so instead of a float16 hint when ops reading the
graph's inputs (or the first op compared) differ in shape from the golden's.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Optional, Tuple

Shapes = Dict[str, Tuple[int, ...]]


def golden_record(golden_dir) -> Tuple[Optional[dict], bool]:
    """(the ``golden.json`` of ``golden_dir``, or of the cache entry whose ``npy`` folder it is;
    whether it is a cache entry's); (None, False) where none is readable."""
    from ..errors import AscendAccuracyError
    from ..golden.stored_record import read_record

    for folder in (golden_dir, os.path.dirname(os.path.normpath(str(golden_dir)))):
        try:
            record = read_record(folder) if folder and os.path.isdir(folder) else None
        except AscendAccuracyError:
            return None, False
        if isinstance(record, dict):
            return record, {"model_name", "graph"} <= set(record)
    return None, False


def _input_refs(golden, recorded: Shapes, shared: bool = False) -> Dict[Tuple[str, str], str]:
    """{(golden op, input slot): graph input} of the golden's op inputs stored in their own
    files (``input_<op>...``, not another op's output) whose shape is one recorded input's;
    ``shared``: also those of a shape several inputs share, named ``a or b`` (a BERT's
    input_ids and attention_mask: which one is not told, but the slot is a graph input)."""
    by_shape: Dict[Tuple[int, ...], list] = {}
    for name, shape in recorded.items():
        by_shape.setdefault(tuple(shape), []).append(name)
    out = {}
    for op in golden:
        for t in op.inputs:
            names = by_shape.get(tuple(t.shape or ()), [])
            own = os.path.basename(str(t.source or "").split("#")[-1]).startswith("input_")
            if own and (len(names) == 1 or (shared and names)):
                out[(op.name, t.slot)] = " or ".join(names)
    return out


def dump_input_shapes(actual, golden, recorded: Shapes, om_json=None) -> Shapes:
    """The input shapes the dump ``actual`` ran at, where it tells them (module docstring;
    ``om_json``: the file given as ``--om-json``)."""
    from ..dump.om_json import read_om_json
    from ..graph.onnx_graph import parse_input_shape

    meta = actual.meta.get("input_shapes")
    if isinstance(meta, dict) and meta:
        return {str(k): tuple(int(d) for d in v) for k, v in meta.items()}
    cmdline = str(read_om_json(om_json).attrs.get("atc_cmdline") or "") if om_json else ""
    for arg in cmdline.split():
        if arg.startswith("--input_shape="):
            try:
                return dict(parse_input_shape(arg.split("=", 1)[1]))
            except Exception:  # noqa: BLE001 - a shape ATC took that we do not read: not told
                break
    refs = _input_refs(golden, recorded)
    found: Shapes = {}
    for op in actual:
        for t in op.inputs:
            name = refs.get((op.name, t.slot))
            if name is not None and t.shape:
                found.setdefault(name, tuple(t.shape))
    return found


def _find_golden(golden_dir, cache_entry: bool) -> str:
    """How to find the golden of the dump's inputs, pasteable."""
    if cache_entry:
        entry = Path(golden_dir)
        if entry.name == "npy":
            entry = entry.parent
        root = entry.parent.parent.parent
        return (f"ascend-accuracy cache --entries --cache-dir {_shell(root)} lists each golden "
                f"with its model and input shapes")
    return "give the path of the golden made from the dump's model and inputs"


def _shell(path) -> str:
    import shlex

    rel = os.path.relpath(path)
    return shlex.quote(rel if not rel.startswith("..") else str(path))


def check_same_inputs(actual, golden, golden_dir, om_json=None) -> None:
    """Refuse (``ConfigError``) a golden whose recorded input shapes are not the dump's, where
    the dump tells its own."""
    from ..errors import ConfigError
    from ..golden.stored_record import (input_shapes_mismatch, other_source_text,
                                        recorded_input_shapes)

    record, cache_entry = golden_record(golden_dir)
    recorded = recorded_input_shapes(record)
    if not recorded:
        return
    found = dump_input_shapes(actual, golden, recorded, om_json)
    differs = input_shapes_mismatch(recorded, found, "the dump's")
    if differs:
        kind = "golden" if cache_entry else "stored golden"
        raise ConfigError(str(golden_dir), (
            f"{other_source_text(differs, kind, 'the dump')}\nFix: compare against the golden "
            f"of the dump's inputs: {_find_golden(golden_dir, cache_entry)}"))


def other_inputs_hint(result, golden, golden_dir) -> Optional[str]:
    """The next step where the dump tells no input shapes but ops reading the graph's inputs
    (or the first op compared) differ in shape from the golden's; None otherwise."""
    from ..golden.stored_record import recorded_input_shapes
    from ..graph.shared_dims import shapes_text

    if not golden_dir:  # (judge: a saved result)
        return None
    record, cache_entry = golden_record(golden_dir)
    recorded = recorded_input_shapes(record)
    if not recorded:
        return None
    readers = {op for op, _ in _input_refs(golden, recorded)} if golden is not None else set()
    paired = sorted((r for r in result.rows if r.golden_name and r.shape and r.golden_shape),
                    key=lambda r: r.order)
    first = paired[0] if paired else None
    row = next((r for r in paired if r.golden_name in readers
                and tuple(r.shape) != tuple(r.golden_shape)), None)
    if row is None and first is not None and tuple(first.shape) != tuple(first.golden_shape):
        row = first
    if row is None:
        return None
    return (f"the golden was made from other inputs: its golden.json records inputs "
            f"{shapes_text(recorded)}, and {row.op_name} {row.slot}, fed by them, has shape "
            f"{tuple(row.shape)} in the dump against {tuple(row.golden_shape)} in the golden "
            f"(no conversion mode changes a shape): compare against the golden of the dump's "
            f"inputs: {_find_golden(golden_dir, cache_entry)}")


def _fed_pairs(actual, golden, recorded: Shapes):
    """(dump op, its input slot's TensorRef, the golden's TensorRef, graph input) for each op input
    of the dump that carries a graph input, as the golden's op of its name (or one it covers:
    fused, its om json naming them) reads it, first reader of each input first."""
    refs = _input_refs(golden, recorded, shared=True)
    seen = set()
    for op in actual:
        # a fused op pairs its first slot with its first member's: the golden op of its own
        # name (ATC names it so), or the first its om json lists; never the last member alone,
        # which a dump without the om json names, nor a slot past the first (reviews: a
        # same-sized other operand, Add(b, MatMul(a, W))'s b, read as the input it reads)
        names = ((op.name, *op.original_names[:1]) if len(op.original_names) > 1 else
                 (op.name,)) if op.is_fused else (op.name,)
        for gname in dict.fromkeys(names):
            record = golden.get(gname)
            for t in op.inputs[:1] if op.is_fused else op.inputs:
                name = refs.get((gname, t.slot))
                if name is None or name in seen or record is None:
                    continue
                held = next((g for g in record.inputs if g.slot == t.slot), None)
                if held is not None:
                    seen.add(name)
                    yield op, t, held, name


def other_values_hint(actual, golden, golden_dir) -> Optional[str]:
    """The next step where the dump holds the values an op read from a graph input (dump mode
    ``all`` or ``input``) and they differ from the golden's by more than float16 rounding
    (``triage.inputs.judge_input``): a golden of other inputs of the same shapes (another seed
    or file), or other pre-processing; no conversion mode changes an input, so the float16
    advice would send a user after a difference no mode makes. None otherwise."""
    import numpy as np

    from ..golden.stored_record import recorded_input_shapes
    from ..triage.inputs import judge_input

    if not golden_dir or golden is None:
        return None
    record, cache_entry = golden_record(golden_dir)
    recorded = recorded_input_shapes(record)
    if not recorded:
        return None
    for op, fed, held, name in _fed_pairs(actual, golden, recorded):
        try:
            seen, want = fed.load(), held.load()
        except Exception:  # noqa: BLE001 - a tensor that cannot be read is the compare's to say
            continue
        if np.size(seen) != np.size(want):
            continue  # (other shapes: check_same_inputs refused them)
        differs = (_ids_differ(seen, want) if np.issubdtype(np.asarray(want).dtype, np.integer)
                   else judge_input(seen, want).differs)
        if differs:
            return (f"the dump's inputs are not the golden's: {op.name} {fed.slot} carries "
                    f"graph input {' or '.join(map(repr, name.split(' or ')))} and differs "
                    f"from the values the golden was made "
                    f"from ({differs}); no conversion mode changes an input, only float16 "
                    f"rounding may: the golden was made from other inputs of the same shapes "
                    f"(another seed or file), or the device's pre-processing differs (AIPP, "
                    f"mean and scale, channel order): compare against the golden of the dump's "
                    f"inputs ({_find_golden(golden_dir, cache_entry)}), or check the "
                    f"pre-processing")
    return None


def _ids_differ(seen, want) -> str:
    """``"5 of 128 values differ"`` where integer inputs (token ids, lengths) differ, else ""."""
    import numpy as np

    count = int(np.sum(np.asarray(seen).reshape(-1) != np.asarray(want).reshape(-1)))
    return f"{count} of {np.size(want)} values differ" if count else ""


def golden_entry_text(entry) -> str:
    """``PATH  model common_old, inputs input1: [1, 1, 64, 256]`` for a golden cache entry (``cache
    --entries``; its small ``golden.json`` read alone), "" where it records neither."""
    from ..golden.stored_record import recorded_input_shapes
    from ..graph.shared_dims import shapes_text

    record, _ = golden_record(entry.path)
    if not record:
        return ""
    shapes = recorded_input_shapes(record)
    name = record.get("model_name") or record.get("model") or "?"
    return (f"{_shell(entry.path)}  model {name}, inputs "
            f"{shapes_text(shapes) if shapes else 'not recorded'}")


__all__ = ["check_same_inputs", "dump_input_shapes", "golden_entry_text", "golden_record",
           "other_inputs_hint", "other_values_hint"]
