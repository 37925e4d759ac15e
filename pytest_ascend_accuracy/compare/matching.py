"""Operator matching: which golden tensor each actual tensor is compared with.

Rules, first that applies wins, per actual output tensor:

1. ``mapping``: a user mapping {actual op name: golden op name}; output i against output i.
2. ``origin``: the tensor's ``TensorRef.origin`` (original op name, output index), from the dump
   header or the om json; golden key ``{sanitize(name)}.{index}`` as msaccucmp builds it.
3. ``fused``: a fused op (its ``original_names`` differ from its own name) is compared with
   the output of the LAST original op it covers that has a golden dump, in golden order.
4. ``name``: the golden op whose sanitised name equals the actual op's sanitised name.

An op whose original names are all empty, or that the dump's ``meta['npu_only_ops']`` lists
(the om json says so), is NPU-only (an inserted TransData/Cast) and has no golden counterpart. Names are compared after ``dump.layout.sanitize`` on both sides, because
golden ``.npy`` names and Ascend dump file names are sanitised. Matching reads no tensor data.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Tuple

from ..dump.layout import sanitize
from ..dump.model import DumpSet, OpRecord, TensorRef
from ..errors import ConfigError
from .result import Coverage


@dataclass(frozen=True)
class TensorPair:
    """An actual tensor and the golden tensor it is compared with (or why there is none)."""

    actual_op: OpRecord
    actual: TensorRef
    golden_op: Optional[OpRecord]
    golden: Optional[TensorRef]
    how: str  # mapping | origin | fused | name
    reason: str = ""


@dataclass(frozen=True)
class MatchPlan:
    pairs: Tuple[TensorPair, ...]
    coverage: Coverage
    unmatched_ops: Tuple[OpRecord, ...] = ()  # actual ops with no golden counterpart
    npu_only_ops: Tuple[str, ...] = ()


class _GoldenIndex:
    """Golden ops by sanitised name, with their position in golden order."""

    def __init__(self, golden: DumpSet):
        self.ops: Dict[str, Tuple[int, OpRecord]] = {}
        for pos, op in enumerate(golden.ops):
            self.ops[sanitize(op.name)] = (pos, op)  # duplicates: the later dump wins

    def get(self, name: str) -> Optional[OpRecord]:
        hit = self.ops.get(sanitize(name)) if name else None
        return hit[1] if hit else None

    def position(self, name: str) -> int:
        return self.ops[sanitize(name)][0]

    def last_of(self, names) -> Optional[OpRecord]:
        present = [n for n in names if n and sanitize(n) in self.ops]
        if not present:
            return None
        return self.get(max(present, key=self.position))


def _output(op: OpRecord, index: int) -> Optional[TensorRef]:
    for t in op.outputs:
        if t.index == index:
            return t
    return None


def _input(op: OpRecord, index: int) -> Optional[TensorRef]:
    for t in op.inputs:
        if t.index == index:
            return t
    return None


def _is_npu_only(op: OpRecord, listed=frozenset()) -> bool:
    """No framework origin: original names all empty, or listed in the dump's
    ``meta['npu_only_ops']`` (what ``load_dump`` records from the om json)."""
    return op.name in listed or (bool(op.original_names) and all(not n for n in op.original_names))


def _check_mapping(mapping: Mapping[str, str], actual: DumpSet, index: _GoldenIndex) -> Dict[str, str]:
    if not isinstance(mapping, Mapping):
        raise ConfigError("mapping", f"expected a mapping of actual op name -> golden op name, "
                          f"got {type(mapping).__name__}")
    actual_names = {sanitize(op.name) for op in actual.ops}
    out = {}
    for a, g in mapping.items():
        if sanitize(str(a)) not in actual_names:
            raise ConfigError("mapping", f"actual op {a!r} is not in the actual dump")
        if index.get(str(g)) is None:
            raise ConfigError("mapping", f"golden op {g!r} (mapped from {a!r}) is not in the "
                              "golden dump")
        out[sanitize(str(a))] = str(g)
    return out


def match_ops(actual: DumpSet, golden: DumpSet, *, mapping: Optional[Mapping[str, str]] = None,
              compare_inputs: bool = False) -> MatchPlan:
    """Pair every actual output (and, with ``compare_inputs``, input) with a golden tensor."""
    index = _GoldenIndex(golden)
    user = _check_mapping(mapping, actual, index) if mapping else {}
    pairs: List[TensorPair] = []
    compared: Dict[str, None] = {}  # golden op names, insertion-ordered set
    covered: Dict[str, None] = {}
    unmatched_actual: List[OpRecord] = []
    npu_only: List[str] = []
    listed = frozenset(actual.meta.get("npu_only_ops", ()) or ())
    for op in actual.ops:
        key = sanitize(op.name)
        if key in user:
            target, how = index.get(user[key]), "mapping"
        elif _is_npu_only(op, listed):
            target, how = None, ""
        elif op.is_fused:
            target, how = index.last_of(op.original_names), "fused"
            if target is None and index.get(op.name) is not None:
                target, how = index.get(op.name), "name"
        else:
            target, how = index.get(op.name), "name"
        op_pairs = []
        for t in op.outputs:
            origin_op = index.get(t.origin[0]) if t.origin and how != "mapping" else None
            if origin_op is not None:
                g = _output(origin_op, t.origin[1])
                reason = "" if g is not None else (
                    f"golden op {origin_op.name!r} has no output {t.origin[1]}")
                op_pairs.append(TensorPair(op, t, origin_op, g, "origin", reason))
            elif target is not None:
                g = _output(target, t.index)
                reason = "" if g is not None else f"golden op {target.name!r} has no output {t.index}"
                op_pairs.append(TensorPair(op, t, target, g, how, reason))
        if compare_inputs and target is not None and how in ("name", "mapping"):
            for t in op.inputs:
                g = _input(target, t.index)
                if g is not None:
                    op_pairs.append(TensorPair(op, t, target, g, how))
        if not op_pairs:
            unmatched_actual.append(op)
            if _is_npu_only(op, listed):
                npu_only.append(op.name)
            continue
        pairs.extend(op_pairs)
        for p in op_pairs:
            compared[p.golden_op.name] = None
        for n in op.original_names:
            g = index.get(n)
            if g is not None:
                covered[g.name] = None
    fused = [n for n in covered if n not in compared]
    seen = set(compared) | set(fused)
    # ops the converter computed at conversion time (constants, static shapes) never run on the
    # device: a backend that knows them lists them in meta["folded_ops"]
    folded_names = {g.name for g in (index.get(n) for n in actual.meta.get("folded_ops", ()))
                    if g is not None and g.name not in seen}
    ordered = [op.name for _, op in sorted(index.ops.values(), key=lambda po: po[0])]
    folded = [n for n in ordered if n in folded_names]
    unmatched_golden = [n for n in ordered if n not in seen and n not in folded_names]
    coverage = Coverage(golden_total=len(index.ops), compared=tuple(compared), fused=tuple(fused),
                        folded=tuple(folded), unmatched_golden=tuple(unmatched_golden),
                        unmatched_actual=tuple(op.name for op in unmatched_actual),
                        npu_only=tuple(npu_only))
    return MatchPlan(tuple(pairs), coverage, tuple(unmatched_actual), tuple(npu_only))
