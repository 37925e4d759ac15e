"""A diagnosis of a model ATC does not convert as it is: its ONNX quantisation ops.

Audit 35: ``ascend-accuracy diagnose`` of pipecat's Smart Turn v3.2 (a QDQ-quantised Whisper-tiny
encoder) ended ``RESTORED only by keeping 335 of 338 ops in float32`` and wrote ``atc_args.txt``
(``--precision_mode=force_fp16 --keep_dtype=fix/keep_dtype.cfg``) and a keep_dtype.cfg of 335
names, most of them ``*_QuantizeLinear``/``*_DequantizeLinear``, while its own
``AtcQuantWarning`` (``backends.emulator.atc_quant``) said ATC cannot convert the model at all:
CANN's AMCT guide ("QAT Model Adaptation to CANN Format") has such a model adapted with
``amct_onnx.convert_qat_model`` first, which replaces the QDQ pairs by AscendQuant/AscendDequant
(other names, int8 numerics), and no CANN ONNX parser converts the ONNX ops (the warning's
module says where that was looked for). Neither the ``atc ... $(cat fix/atc_args.txt)`` line
nor the keep_dtype file applied to any model ATC converts, and no fix file said so.

So where the model holds such ops (``graph.op_domains.quant_nodes``, If branches included), the
verdict says that ATC does not convert the model as it is (the op types, the AMCT route the
warning gives), that whatever the diagnosis found was found on the emulator's float16 model of
the quantised graph, and that the deployed (AMCT-adapted) model must be checked on an NPU; the
verdict is what diagnosis.txt, .json and .html and the plugin's failure block show.

``atc_args.txt`` and the mode's config files are not written for such a fix (``report.
write_all``): they are ATC's inputs, for a model ATC refuses, and their op names are the QDQ
graph's, not the deploy model's. A note in the file itself cannot be had: the file is pasted as
``$(cat fix/atc_args.txt)``, whose words the shell passes to atc as they are (a ``#`` in the
output of a command substitution starts no comment; only a ``#`` the shell reads as a word of
its input does, bash(1) COMMENTS and Word Splitting), so a comment line would reach atc as
arguments. The note is written beside the other files instead (``NOTE_FILE``), and the fix
stays pasteable where it applies: the emulator's ``modes=[...]`` line.
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

#: the file written in place of atc_args.txt for such a fix (``report.write_all``)
NOTE_FILE = "atc_note.txt"


def quant_op_types(model) -> Tuple[str, ...]:
    """The quantisation op types of ``model`` (a path, bytes or ModelProto) in graph order, or
    () where it holds none or cannot be read (the diagnosis read it already: a file gone since
    says nothing)."""
    from ..graph.onnx_graph import load_model
    from ..graph.op_domains import quant_nodes

    try:
        proto = load_model(model, weights=False)
    except Exception:  # noqa: BLE001 -- a note only
        return ()
    return tuple(dict.fromkeys(op for _, op, _ in quant_nodes(proto.graph)))


def atc_quant_note(op_types: Sequence[str], restored: bool) -> str:
    """The sentence appended to the verdict of a diagnosis of a model with ``op_types``;
    ``restored``: the diagnosis names a fix (found on the emulator)."""
    from ..backends.emulator.atc_quant import amct_route

    route = amct_route(op_types)
    found = ("this fix was found on the emulator's float16 model of the quantised graph and "
             "holds there only (no atc_args.txt is written: its options and op names are for a "
             "model ATC refuses)" if restored else
             "this diagnosis ran on the emulator's float16 model of the quantised graph")
    return (f"; ATC does not convert this model as it is: its ONNX quantisation ops "
            f"({', '.join(op_types)}) have no CANN ONNX parser (CANN's AMCT guide: {route}); "
            f"{found}; check the deployed (AMCT-adapted) model on an NPU")


def with_note(outcome: dict, model) -> dict:
    """``outcome`` (``_Flow.walk``'s) with ``atc_quant_ops`` and the note in its verdict where
    ``model`` holds quantisation ops; as it is otherwise."""
    types = quant_op_types(model)
    if not types:
        return outcome
    restored = outcome.get("restored_by") not in (None, "default")
    return {**outcome, "verdict": outcome["verdict"] + atc_quant_note(types, restored),
            "atc_quant_ops": types}


def note_file_text(diagnosis) -> Optional[str]:
    """The text of ``NOTE_FILE`` for ``diagnosis``, or None where its model converts."""
    if not diagnosis.atc_quant_ops:
        return None
    lines = [f"ATC does not convert {diagnosis.model} as it is: its ONNX quantisation ops "
             f"({', '.join(diagnosis.atc_quant_ops)}) have no CANN ONNX parser.",
             "No atc_args.txt or keep_dtype.cfg is written: they would be ATC options and op "
             "names for a model ATC refuses.",
             "The fix below was found on the emulator's float16 model of the quantised graph "
             "and holds there only; adapt the model with AMCT (amct_onnx.convert_qat_model) "
             "and check that deployed model on an NPU.",
             f"fix on the emulator: modes=[{diagnosis.fix_mode.python_expr()}] (from "
             f"pytest_ascend_accuracy import {', '.join(diagnosis.fix_mode.python_imports())})"]
    return "\n".join(lines) + "\n"
