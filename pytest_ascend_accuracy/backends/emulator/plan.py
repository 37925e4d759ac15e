"""The dump plan of a converted model: which operators are dumped and where their tensors come from.

Stored next to the converted ONNX graph in the cache (``plan.json``). For every executed
operator (single op or fused group) it lists its input and output tensors as ``Slot``s: the
name to fetch from the onnxruntime run (or a model input / an initializer of the converted
graph) and the dtype to dump it as (``float16`` for fp16 operators, as the NPU would).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from ...errors import DumpFormatError

PLAN_FILE = "plan.json"


@dataclass(frozen=True)
class Slot:
    """One dumped tensor: ``fetch`` from ``source`` (run | input | init), dumped as ``dtype``
    (empty: as fetched). ``origin`` = (original op name, output index) for outputs.
    ``format``: the device layout it is dumped in (``layouts``; empty = ND); ``shape`` and
    ``type``: its logical shape and dtype name as known at conversion (None/empty: unknown),
    for the om json's ``origin_shape`` / ``shape`` / ``dtype``."""

    fetch: str
    source: str = "run"
    dtype: str = ""
    origin: Optional[Tuple[str, int]] = None
    format: str = ""
    shape: Optional[Tuple[int, ...]] = None
    type: str = ""

    def to_json(self) -> list:
        return [self.fetch, self.source, self.dtype, list(self.origin) if self.origin else None,
                self.format, list(self.shape) if self.shape is not None else None, self.type]

    @staticmethod
    def from_json(data) -> "Slot":
        fetch, source, dtype, origin = data[:4]
        fmt, shape, typ = (list(data[4:7]) + ["", None, ""])[:3]
        return Slot(fetch, source, dtype, tuple(origin) if origin else None, fmt or "",
                    tuple(int(d) for d in shape) if shape is not None else None, typ or "")


@dataclass(frozen=True)
class PlannedOp:
    name: str
    op_type: str
    original_names: Tuple[str, ...]
    onnx_types: Tuple[str, ...]
    precision: str
    rules: Tuple[str, ...] = ()
    faults: Tuple[str, ...] = ()
    inputs: Tuple[Slot, ...] = ()
    outputs: Tuple[Slot, ...] = ()
    #: "src_op:idx" per input, as the om json writes them
    input_refs: Tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"name": self.name, "op_type": self.op_type, "original_names": list(self.original_names),
                "onnx_types": list(self.onnx_types), "precision": self.precision,
                "rules": list(self.rules), "faults": list(self.faults),
                "inputs": [s.to_json() for s in self.inputs],
                "outputs": [s.to_json() for s in self.outputs], "input_refs": list(self.input_refs)}

    @staticmethod
    def from_json(d: dict) -> "PlannedOp":
        return PlannedOp(d["name"], d["op_type"], tuple(d["original_names"]), tuple(d["onnx_types"]),
                         d["precision"], tuple(d["rules"]), tuple(d["faults"]),
                         tuple(Slot.from_json(s) for s in d["inputs"]),
                         tuple(Slot.from_json(s) for s in d["outputs"]), tuple(d["input_refs"]))


@dataclass
class Plan:
    ops: List[PlannedOp]
    model_inputs: List[str]
    model_outputs: List[str]
    info: Dict[str, object] = field(default_factory=dict)

    @property
    def fetch(self) -> List[str]:
        """Run tensors to fetch, first the model outputs, then dump tensors in op order."""
        names = list(self.model_outputs)
        for op in self.ops:
            for s in op.inputs + op.outputs:
                if s.source == "run":
                    names.append(s.fetch)
        return list(dict.fromkeys(names))

    def save(self, path: Path) -> None:
        data = {"ops": [op.to_json() for op in self.ops], "model_inputs": self.model_inputs,
                "model_outputs": self.model_outputs, "info": self.info}
        # compact: json's C encoder (indent= takes the pure-Python one, 3-8x slower)
        Path(path).write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")

    @staticmethod
    def load(path: Path) -> "Plan":
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            return Plan([PlannedOp.from_json(d) for d in data["ops"]], list(data["model_inputs"]),
                        list(data["model_outputs"]), dict(data.get("info", {})))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            if isinstance(exc, FileNotFoundError) and not Path(path).parent.exists():
                # its whole cache entry went while this session used it (a CI trial read
                # "unreadable emulator plan ([Errno 2] ...)": the entry evicted mid-test)
                raise DumpFormatError(
                    Path(path).parent, "this converted model's cache entry was removed while "
                    "the session used it (by hand, or by a prune that does not see this "
                    "session's lease: another machine without shared file locks, or an older "
                    "release of this plugin); run the test again to convert it anew") from exc
            raise DumpFormatError(path, f"unreadable emulator plan ({exc})") from exc
