"""What a stored golden tells ``ascend-accuracy compare`` about the diagnose command it prints:
the model (its ``golden.json`` names it relative to the golden directory; the command runs from
the current one), the input shapes, and whether ``diagnose``'s own seeded inputs are the ones
the golden was made from (their digest is recorded, not the arrays). A PP-OCRv4 trial: the
command said ``MODEL.onnx`` though the golden named ``../../../models/rec.onnx``, and ran seeded
random inputs without a word about the golden's."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Optional


def diagnose_source(golden_dir) -> Optional[Dict[str, object]]:
    """{"model": its absolute path (``report.cli_commands`` shows it from the current directory
    where that is shorter, as a saved result is judged elsewhere), "input_shape":
    "x:1,3,48,320" or "", "seed": 0 where diagnose's default inputs have the recorded digest,
    else None, "inputs": the input names} for a stored golden whose record names a model file
    that exists; None otherwise (the command keeps its placeholder)."""
    from ..errors import AscendAccuracyError
    from ..golden.stored_record import read_record
    from ..golden.stored_record_check import check_record

    try:
        record = read_record(golden_dir) if golden_dir and os.path.isdir(golden_dir) else None
        check_record(golden_dir, record)  # a hand-edited one names no model to trust
    except AscendAccuracyError:
        return None
    written = record.get("model") if record else None
    if not isinstance(written, str) or not written:
        return None
    path = Path(written) if os.path.isabs(written) else Path(golden_dir) / written
    return _source(path, record.get("input_shape"), record.get("inputs_digest"))


def saved_source(meta) -> Optional[Dict[str, object]]:
    """``diagnose_source``'s dict for a saved result (``judge``), from the golden's record the
    comparison kept (``meta["golden"]["golden_source"]``: its model file, input shapes and
    inputs' digest); None where it names no model file that exists here (a paths trial: judge
    printed ``diagnose MODEL.onnx`` though the result named the model)."""
    golden = meta.get("golden") if isinstance(meta, dict) else None
    record = golden.get("golden_source") if isinstance(golden, dict) else None
    written = record.get("model_file") if isinstance(record, dict) else None
    if not isinstance(written, str) or not written:
        return None
    return _source(Path(written), record.get("input_shape"), record.get("inputs_digest"))


def _source(path: Path, shapes, digest) -> Optional[Dict[str, object]]:
    if not path.is_file():
        return None
    shape = ";".join(f"{k}:{','.join(str(int(d)) for d in v)}" for k, v in (shapes or {}).items())
    return {"model": os.path.abspath(path), "input_shape": shape,
            "seed": _default_seed(path, shape, digest), "inputs": _input_names(path)}


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
