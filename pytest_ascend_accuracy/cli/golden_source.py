"""What a stored golden tells ``ascend-accuracy compare`` about the diagnose command it prints:
the model (its ``golden.json`` names it relative to the golden directory; the command runs from
the current one), the input shapes, and whether ``diagnose``'s own seeded inputs are the ones
the golden was made from (their digest is recorded, not the arrays). A PP-OCRv4 trial: the
command said ``MODEL.onnx`` though the golden named ``../../../models/rec.onnx``, and ran seeded
random inputs without a word about the golden's.

A golden of a model with dynamic inputs stored from the arrays' shapes records no input shape
(``"input_shape": {}``): its command had no ``--input-shape`` and, pasted, was refused ('3
inputs are left dynamic', a BERT trial). The sizes it ran at come from its own tensors
(``graph.shapes_from_tensors``); where they do not tell them, the command gives 1 for each
dynamic dimension, as diagnose's own advice does, and says so (``sizes_chosen``)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Optional


def diagnose_source(golden_dir) -> Optional[Dict[str, object]]:
    """{"model": its absolute path (``report.cli_commands`` shows it from the current directory
    where that is shorter, as a saved result is judged elsewhere), "input_shape":
    "x:1,3,48,320" or "", "seed": 0 where diagnose's default inputs have the recorded digest,
    else None, "inputs": the input names, "sizes_chosen": the inputs whose dynamic dimensions
    "input_shape" gives 1 as nothing told their sizes, else absent} for a stored golden whose
    record names a model file that exists; None otherwise (the command keeps its placeholder).
    The shapes are the record's, else those the golden's tensors tell."""
    from ..errors import AscendAccuracyError
    from ..golden.stored_record import read_record
    from ..golden.stored_record_check import check_record

    try:
        record = read_record(golden_dir) if golden_dir and os.path.isdir(golden_dir) else None
        if record is None and golden_dir:  # a golden cache entry's npy folder: its entry's
            parent = os.path.dirname(os.path.normpath(golden_dir))
            entry = read_record(parent) if os.path.isdir(parent) else None
            return _cache_entry_source(entry) if _is_cache_entry(entry) else None
        if _is_cache_entry(record):  # not a stored golden: no model file named
            return _cache_entry_source(record)
        check_record(golden_dir, record)  # a hand-edited one names no model to trust
    except AscendAccuracyError:
        return None
    written = record.get("model") if record else None
    if not isinstance(written, str) or not written:
        return None
    path = Path(written) if os.path.isabs(written) else Path(golden_dir) / written
    return _source(path, record.get("input_shape"), record.get("inputs_digest"),
                   lambda: _dump_tensors(golden_dir))


def _is_cache_entry(record) -> bool:
    """Whether ``record`` is a golden cache entry's ``golden.json`` (not a stored golden's)."""
    return isinstance(record, dict) and {"model_name", "graph"} <= set(record)


def _cache_entry_source(record) -> Optional[Dict[str, object]]:
    """``{"input_shape": ..., "model_name": ...}`` of a golden cache entry's ``golden.json``
    (``record``; the entry given as its folder or its ``npy`` folder): it names the model and
    the input shapes it ran at, not the model file, so the command keeps ``MODEL.onnx`` but
    carries the sizes. A PP-OCRv4 trial: without them, the pasted command was refused as
    dynamic, and its ``e.g.`` (1 for each dynamic dimension) said PASSES of a dump that fails
    at 48x320. None where it records neither."""
    try:
        shapes = (record.get("graph") or {}).get("input_shapes") or {}
        shape = ";".join(f"{k}:{','.join(str(int(d)) for d in v)}" for k, v in shapes.items())
    except (ValueError, TypeError, AttributeError):
        return None
    name = record.get("model_name")  # what MODEL.onnx stands for (audit 33)
    named = {"model_name": name} if isinstance(name, str) and name else {}
    return {"input_shape": shape, **named} if shape or named else None


def saved_source(meta, rows=()) -> Optional[Dict[str, object]]:
    """``diagnose_source``'s dict for a saved result (``judge``): the one its comparison saved
    (``meta["diagnose"]``), its input shape taken from the golden shapes of ``rows`` (the
    result's ``CompareRow`` s) where it had none and the model leaves inputs dynamic (results
    saved before the sizes were read from the golden's tensors); else from the golden's record
    the comparison kept (``meta["golden"]["golden_source"]``: its model file, input shapes and
    inputs' digest), or the stored golden it names (``golden_record``, as ``diagnose_source``);
    None where it names no model file that exists here (a paths trial: judge printed
    ``diagnose MODEL.onnx`` though the result named the model)."""
    golden = meta.get("golden") if isinstance(meta, dict) else None
    tensors = lambda: _row_tensors(rows)  # noqa: E731
    saved = meta.get("diagnose") if isinstance(meta, dict) else None
    if isinstance(saved, dict) and saved.get("model"):
        model = Path(str(saved["model"]))
        if saved.get("input_shape") or not model.is_file():
            return saved
        shaped = _shaped(model, None, lambda: _recorded_digest(golden), tensors)
        return {**saved, **shaped} if shaped["input_shape"] else saved  # a static model's kept
    record = golden.get("golden_source") if isinstance(golden, dict) else None
    written = record.get("model_file") if isinstance(record, dict) else None
    if not isinstance(written, str) or not written:  # a stored golden's (a plugin's report)
        stored = golden.get("golden_record") if isinstance(golden, dict) else None
        there = isinstance(stored, str) and os.path.isfile(stored)
        return diagnose_source(os.path.dirname(stored)) if there else None
    return _source(Path(written), record.get("input_shape"), record.get("inputs_digest"), tensors)


def _source(path: Path, shapes, digest, tensors) -> Optional[Dict[str, object]]:
    """The dict for ``path``; ``tensors()``: the golden's (op, slot, shape) triples, asked for
    only where ``shapes`` leaves inputs dynamic."""
    if not path.is_file():
        return None
    return {"model": os.path.abspath(path), **_shaped(path, shapes, lambda: digest, tensors),
            "inputs": _input_names(path)}


def _shaped(model: Path, recorded, digest, tensors) -> Dict[str, object]:
    """{"input_shape", "seed"[, "sizes_chosen"[, "sizes_unfit"]]} of the dict (``digest()``: the
    recorded one). Sizes chosen as 1 that the model cannot take (``sizes_fit``: a Reshape to
    [2, -1]) are left out of ``input_shape`` and said (``sizes_unfit``): a command with them
    failed pasted (a review)."""
    from ..graph.shapes_from_tensors import sizes_fit

    shapes, chosen, runs = _shapes(model, recorded, tensors)
    unfit = bool(chosen) and not (runs and sizes_fit(str(model), shapes))
    if unfit:
        shapes = {k: v for k, v in shapes.items() if k not in chosen}
    shape = ";".join(f"{k}:{','.join(str(int(d)) for d in v)}" for k, v in shapes.items())
    out: Dict[str, object] = {"input_shape": shape,
                              "seed": None if unfit else _default_seed(model, shape, digest())}
    if chosen:
        out["sizes_chosen"] = chosen
        out["sizes_unfit"] = unfit
    return out


def _shapes(model: Path, recorded, tensors):
    """(``recorded`` completed with the sizes of the inputs it leaves dynamic, in input order;
    the inputs whose sizes nothing told, given 1 for each dynamic dimension as diagnose's own
    advice does, so that the command runs pasted; whether onnxruntime runs the model at those
    1s, where it was tried: ``graph.shape_trial``, silero_vad's reflect Pad refuses them)."""
    from ..errors import AscendAccuracyError
    from ..graph.onnx_graph import load_model, resolve_input_shapes
    from ..graph.shape_advice import DynamicShapeError
    from ..graph.shape_from_inputs import left_dynamic
    from ..graph.shapes_from_tensors import input_shapes_from_tensors

    shapes = {str(k): tuple(int(d) for d in v) for k, v in (recorded or {}).items()}
    try:
        if not left_dynamic(str(model), shapes or None):
            return shapes, [], True
        shapes.update(input_shapes_from_tensors(str(model), tensors(), shapes))
        resolve_input_shapes(load_model(str(model), weights=False), shapes or None,
                             source=str(model))
    except DynamicShapeError as exc:  # not told: its example (1 for each dynamic dimension)
        runs = exc.pasted == exc.example  # (an example not tried counts as running)
        return exc.example, [n for n in exc.example if n not in shapes], runs
    except (AscendAccuracyError, ValueError):  # a model diagnose cannot read says so itself
        return shapes, [], True
    names = [i for i in _input_names(model) if i in shapes]
    return {n: shapes[n] for n in names}, [], True


def _dump_tensors(golden_dir):
    """(op, slot, shape) of every tensor of the stored golden in ``golden_dir`` (headers only);
    [] where it cannot be read."""
    from ..errors import AscendAccuracyError
    from ..dump.loader import load_dump

    try:
        dump = load_dump(golden_dir)
    except AscendAccuracyError:
        return []
    return [(op.name, t.slot, t.shape) for op in dump for t in op.outputs + op.inputs]


def _row_tensors(rows):
    """(op, slot, shape) of the golden tensor of each compared row of a saved result."""
    return [(r.golden_name, r.golden_slot or "output:0", r.golden_shape) for r in rows
            if getattr(r, "golden_name", None) and getattr(r, "golden_shape", None)]


def _recorded_digest(golden) -> Optional[str]:
    """The inputs' digest of the stored golden a saved comparison names (``golden_record``),
    where that record is still there; else None."""
    from ..errors import AscendAccuracyError
    from ..golden.stored_record import read_record

    path = golden.get("golden_record") if isinstance(golden, dict) else None
    if not isinstance(path, str) or not os.path.isfile(path):
        return None
    try:
        record = read_record(os.path.dirname(path)) or {}
    except AscendAccuracyError:
        return None
    digest = record.get("inputs_digest")
    return digest if isinstance(digest, str) else None


def _default_seed(model: Path, shape: str, digest) -> Optional[int]:
    """0 where ``diagnose``'s default inputs (``make_inputs(model, seed=0)``) are the golden's
    (same digest), else None."""
    from ..errors import AscendAccuracyError
    from ..graph.content_digests import inputs_digest
    from ..graph.onnx_graph import make_inputs

    if not digest:
        return None
    try:
        made = make_inputs(str(model), seed=0, input_shape=shape or None)
    except (AscendAccuracyError, ValueError):
        return None
    return 0 if inputs_digest(made) == digest else None


def _input_names(model: Path):
    from ..graph.onnx_graph import graph_inputs, load_model

    return [i.name for i in graph_inputs(load_model(str(model), weights=False))]
