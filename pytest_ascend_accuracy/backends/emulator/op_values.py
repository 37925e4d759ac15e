"""One emulator run's values, op by op in the plan's order: what a run dumps, or compares.

``op_values`` runs the converted model in segments (``graph.stream``: onnxruntime computes
ahead in a thread while the caller handles the op before) and gives each planned op's
dumped inputs and outputs as arrays in the dtype the plan dumps them in; a run tensor no
later op dumps is released once the caller asks for the next op, and every one of them when
the loop ends (their arena memory goes back). ``EmulatorBackend.run`` writes them;
``compared_run`` compares them against a golden as they come.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence

import numpy as np

from ...errors import BackendError

#: segments a run computes beyond the one being written (``graph.streamed_run``): a second one
#: keeps onnxruntime busy while a slow segment is written, for one more segment's tensors held
RUN_AHEAD = 2


@dataclass
class OpValues:
    """Planned op number ``k`` (``op``, a ``plan.PlannedOp``) with the slots it dumps and
    their arrays."""

    k: int
    op: object
    in_slots: Sequence[object]
    inputs: List[np.ndarray]
    out_slots: Sequence[object]
    outputs: List[np.ndarray]


def op_values(state, model_name: str, feeds, *, with_inputs: bool, with_outputs: bool,
              source_model=None) -> "RunValues":
    """The run of ``state`` (``backend._RunState``) on ``feeds``, started (module doc).
    Raises ``BackendError`` naming ``model_name`` where onnxruntime fails (``run_failed``;
    ``source_model``: the model file converted, for the index hint)."""
    try:  # in segments (graph.stream): tensors come as the ops need them, never all at once
        streamed = state.segmented(state.plan.fetch, writing=True).run(feeds, ahead=RUN_AHEAD)
    except Exception as exc:
        raise run_failed(model_name, exc, feeds, source_model) from exc
    return RunValues(state, model_name, feeds, streamed, with_inputs, with_outputs,
                     source_model)


def run_failed(model_name: str, exc: Exception, feeds, source_model=None) -> BackendError:
    """The error for an emulated run onnxruntime refused: its message, and where it refused an
    index out of its table's range, the input that holds it and the arrays to give, or where a
    seeded input the model compares with a constant took a path that refused these inputs,
    what it drew and how to give it (``graph.integer_ranges.seeded_input_hint``, as the
    golden's refusal says it: a test that ran the device before its golden got onnxruntime's
    words alone). ``source_model``: the model file
    converted (its node names are the emulated graph's), None for a model given in memory."""
    hint = ""
    path = Path(source_model) if source_model is not None else None
    if path is not None and path.is_file():
        try:
            import onnx

            from ...graph.integer_ranges import seeded_input_hint

            proto = onnx.load(str(path), load_external_data=False)
            hint = seeded_input_hint(proto, str(exc), feeds, model_path=str(path))
        except Exception:  # (the refusal is the error to show)
            hint = ""
        if not hint:
            hint = _model_refuses(path, feeds, str(exc))
    return BackendError(f"emulator run of {model_name!r} failed: {exc}{hint}")


def _model_refuses(path: Path, feeds, refused: str) -> str:
    """``"; the ONNX model itself refuses these inputs: ..."`` where onnxruntime's float32
    run of ``path`` refuses ``feeds`` too (``graph.model_refusal``), else ``""``."""
    from ...core.locations import shown
    from ...graph.model_refusal import model_refusal
    from ...graph.shape_trial import refusal_line

    said = model_refusal(path, feeds)
    if said is None:
        return ""
    from ...graph.export_metadata import stride_note

    same = "the same way" if said == refusal_line(refused) else f"too ({said})"
    return (f"; the ONNX model itself refuses these inputs: onnxruntime's float32 run of "
            f"{shown(path, os.getcwd())} fails {same}: they do not fit the model, whatever the "
            f"conversion, and its golden refuses them as well" + stride_note(path, feeds))


class RunValues:
    """A started run: iterate for its ``OpValues`` in plan order, once; ``close()`` (always,
    iterated or not) gives its tensors' memory back."""

    def __init__(self, state, model_name, feeds, streamed, with_inputs, with_outputs,
                 source_model=None):
        self.state, self.model_name, self.feeds, self.streamed = state, model_name, feeds, streamed
        self.with_inputs, self.with_outputs = with_inputs, with_outputs
        self.source_model = source_model

    def __iter__(self) -> Iterator[OpValues]:
        plan, streamed, feeds, inits = self.state.plan, self.streamed, self.feeds, self.state.inits
        values = streamed.values
        last_use = last_uses(plan)
        keep = set(plan.model_outputs)
        for k, op in enumerate(plan.ops):
            try:
                streamed.ensure(s.fetch for s in op.inputs + op.outputs if s.source == "run")
            except Exception as exc:
                raise run_failed(self.model_name, exc, feeds, self.source_model) from exc
            in_slots = op.inputs if self.with_inputs else ()
            out_slots = op.outputs if self.with_outputs else ()
            item = OpValues(k, op, in_slots, [slot_value(s, values, feeds, inits)
                                              for s in in_slots],
                            out_slots, [slot_value(s, values, feeds, inits) for s in out_slots])
            yield item
            item.inputs.clear()  # (the caller's name for it may outlive this op)
            item.outputs.clear()
            for s in op.inputs + op.outputs:
                if s.source == "run" and last_use.get(s.fetch, -1) <= k and s.fetch not in keep:
                    values.pop(s.fetch, None)

    def close(self) -> None:
        """The run's tensors are handled (or abandoned): their arena memory goes back."""
        self.streamed.values.clear()
        self.streamed.close()


def aipp_format(device_formats: bool, array) -> str:
    """The format an Aipp op's output is dumped in: 5HD on a device (AIPP writes NC1HWC0)."""
    return "NC1HWC0" if device_formats and np.ndim(array) == 4 else "ND"


def slot_value(slot, values, feeds, inits) -> np.ndarray:
    """The array ``slot`` dumps: a run tensor, a graph input or an initializer, in the
    slot's dtype (bf16 stays float32: the writer stores it)."""
    if slot.source == "run":
        arr = values[slot.fetch]
    elif slot.source == "input":
        arr = feeds[slot.fetch]
    else:
        arr = inits[slot.fetch]
    arr = np.asarray(arr)
    if slot.dtype and slot.dtype != "bfloat16" and arr.dtype != np.dtype(slot.dtype):
        arr = arr.astype(slot.dtype)
    return arr


def slot_layout(slot, array) -> str:
    """The device format to dump ``array`` in: the planned one when the array fits it."""
    from .layouts import fits

    return slot.format if slot.format and fits(slot.format, array) else "ND"


def stored_type(slot) -> Optional[str]:
    """The dump type to store a tensor as when numpy has no such dtype (bf16)."""
    return "bfloat16" if slot.dtype == "bfloat16" else None


def last_uses(plan) -> Dict[str, int]:
    """Run tensor -> index of the last planned op that dumps it."""
    last: Dict[str, int] = {}
    for k, op in enumerate(plan.ops):
        for s in op.inputs + op.outputs:
            last[s.fetch] = k
    return last
