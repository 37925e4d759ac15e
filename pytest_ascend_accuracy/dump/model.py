"""The DumpSet model: operators of one model run, in execution order, with lazily loaded tensors.

Readers (Ascend binary dumps, ``.npy`` directories) build these objects without reading tensor
data: a ``TensorRef`` holds a loader that memory-maps the bytes only when ``load()`` is called,
so a 5 GB dump costs file handles, not RAM. Compare code only ever sees this model.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from .dtypes import value_dtype

Loader = Callable[[], np.ndarray]


@dataclass(frozen=True)
class TensorRef:
    """One input or output tensor of one operator, loaded on demand.

    ``shape`` is the logical shape that ``load()`` returns (device formats such as NC1HWC0 are
    converted back and channel padding cropped by the reader's loader). ``dtype`` is the numpy
    dtype name of the stored values (``bfloat16`` is loaded as float32, see ``load``).
    ``origin`` is the (original op name, output index) this tensor corresponds to in the source
    framework graph, when the dump or the om json says so (fused operators).
    """

    kind: str  # "input" or "output"
    index: int
    dtype: str
    shape: Tuple[int, ...]
    loader: Loader = field(repr=False, compare=False)
    format: str = "ND"
    device_shape: Optional[Tuple[int, ...]] = None
    origin: Optional[Tuple[str, int]] = None
    source: Optional[str] = None  # file that holds the bytes, for error messages

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= int(d)
        return n

    @property
    def slot(self) -> str:
        """``output:0`` / ``input:1``, the TensorIndex suffix the compare tools use."""
        return f"{self.kind}:{self.index}"

    def load(self) -> np.ndarray:
        """The tensor in its logical layout; may be a read-only memory map."""
        return self.loader()

    @staticmethod
    def from_array(array: np.ndarray, kind: str = "output", index: int = 0, *,
                   origin: Optional[Tuple[str, int]] = None, source: Optional[str] = None,
                   format: str = "ND") -> "TensorRef":
        """An in-memory tensor (tests, emulator before writing)."""
        arr = np.asarray(array)
        return TensorRef(kind=kind, index=index, dtype=arr.dtype.name, shape=tuple(arr.shape),
                         loader=lambda: arr, format=format, origin=origin, source=source)


@dataclass(frozen=True)
class OpRecord:
    """One dumped operator. ``original_names`` lists the framework ops a fused operator covers
    (empty means the op stands for itself). ``order`` is its execution position. ``fed_inputs``:
    inputs the dump does not hold itself, the outputs feeding them by the model's edges (a
    stored golden's TopKs, ``golden.stored_topk_inputs``), read only by what asks for them by
    name: never counted as inputs the dump holds, compared or listed."""

    name: str
    op_type: str = ""
    inputs: Tuple[TensorRef, ...] = ()
    outputs: Tuple[TensorRef, ...] = ()
    original_names: Tuple[str, ...] = ()
    order: int = 0
    timestamp: int = 0
    source: Optional[str] = None  # the dump file (Ascend) or a directory (npy)
    fed_inputs: Tuple[TensorRef, ...] = ()

    @property
    def covers(self) -> Tuple[str, ...]:
        """The framework op names this operator stands for (itself when not fused)."""
        return self.original_names or (self.name,)

    @property
    def is_fused(self) -> bool:
        return len(self.original_names) > 1 or (
            len(self.original_names) == 1 and self.original_names[0] != self.name)

    def output(self, index: int = 0) -> TensorRef:
        for t in self.outputs:
            if t.index == index:
                return t
        raise KeyError(f"op {self.name!r} has no output {index}")


@dataclass
class DumpSet:
    """Ordered operators of one run. ``kind`` says where it came from (``ascend`` or ``npy``)."""

    ops: List[OpRecord]
    kind: str = "memory"
    root: Optional[str] = None
    model_name: Optional[str] = None
    #: free-form facts about the run (backend, mode, soc, toolkit version...), for reports.
    meta: Dict[str, object] = field(default_factory=dict)

    def __post_init__(self):
        self._by_name: Dict[str, OpRecord] = {}
        for op in self.ops:
            # duplicate names: the later dump wins (msaccucmp uses the last file of an op)
            self._by_name[op.name] = op

    def __iter__(self) -> Iterator[OpRecord]:
        return iter(self.ops)

    def __len__(self) -> int:
        return len(self.ops)

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def __getitem__(self, name: str) -> OpRecord:
        return self._by_name[name]

    def get(self, name: str) -> Optional[OpRecord]:
        return self._by_name.get(name)

    def materialize(self) -> "DumpSet":
        """This dump with its files written: itself (a run compared as it ran writes its dump
        here, ``backends.emulator.compared_run``)."""
        return self

    @property
    def names(self) -> List[str]:
        return [op.name for op in self.ops]

    @property
    def nbytes(self) -> int:
        total = 0
        for op in self.ops:
            for t in op.inputs + op.outputs:
                total += t.size * value_dtype(t.dtype).itemsize
        return total

    @staticmethod
    def from_arrays(outputs: Dict[str, Sequence[np.ndarray]], *, op_types: Optional[Dict[str, str]] = None,
                    inputs: Optional[Dict[str, Sequence[np.ndarray]]] = None,
                    original_names: Optional[Dict[str, Sequence[str]]] = None,
                    kind: str = "memory") -> "DumpSet":
        """Build an in-memory DumpSet: {op name: [output arrays]} in insertion (graph) order."""
        ops = []
        for i, (name, outs) in enumerate(outputs.items()):
            ins = (inputs or {}).get(name, ())
            ops.append(OpRecord(
                name=name,
                op_type=(op_types or {}).get(name, ""),
                inputs=tuple(TensorRef.from_array(a, "input", k) for k, a in enumerate(ins)),
                outputs=tuple(TensorRef.from_array(a, "output", k) for k, a in enumerate(outs)),
                original_names=tuple((original_names or {}).get(name, ())),
                order=i,
            ))
        return DumpSet(ops, kind=kind)
