"""Operator matching: which golden tensor each actual tensor is compared with.

Rules, first that applies wins, per actual output tensor:

1. ``mapping``: a user mapping {actual op name: golden op name}; output i against output i.
2. ``origin``: the tensor's ``TensorRef.origin`` (original op name, output index), from the dump
   header or the om json; golden key ``{sanitize(name)}.{index}`` as msaccucmp builds it.
3. ``fused``: a fused op (its ``original_names`` differ from its own name) is compared with
   the output of the LAST original op it covers that has a golden dump, in golden order. This
   only applies to an output without an origin: a fused op's output whose origin (om json
   output desc / dump header) names an op the golden lacks is NOT compared with another
   member (an inner member's output is consumed inside the fusion: another tensor), as
   msaccucmp compares a fused op only with its output desc's ``origin_name`` and reports it
   uncompared when that golden file is missing; such an op is in ``MatchPlan.not_compared``,
   such an output of an op whose other outputs are compared in ``MatchPlan.lacking_outputs``.
4. ``name``: the golden op whose sanitised name equals the actual op's sanitised name.

NPU-only ops (original names all empty, or listed in the dump's ``meta['npu_only_ops']``: the
om json says so) have no golden op of their own. One that ``load_dump`` paired with its
producer through the om json's input edges (``meta['paired_via_producer']``, see
``dump.om_pairing``) is compared with the producer's golden tensor (``how="producer"``, as
msaccucmp does for Cast/TransData); any other is reported NPU-only, never a failure. Without an
om json, a TransData/Cast whose header origin points at a golden tensor of another size is not
paired with it (real ATC gives such ops their consumer's name), nor is one whose header origin
a later op of the dump claims too (in the real ATC 6.0 tdnn file ``trans_TransData_40`` before
``Conv_232`` and the TransData after it both say ``Conv_232``, and the Pad output the first holds
has the conv output's size): the later claim is the producer's output; one left without a pair
is reported NPU-only. Ops in ``meta['om_inner_ops']`` (intermediate parts of one framework op
split in several) have no golden tensor either; ops in ``meta['om_inserted_ops']`` (unmarked ops ATC inserted next to
another, e.g. ``X_Input0_TransposeBefore``) the golden graph lacks are reported NPU-only. Names
are compared after ``dump.layout.sanitize`` on both sides, because golden ``.npy`` names and
Ascend dump file names are sanitised. Matching reads no tensor data.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Tuple

from ..dump.layout import sanitize
from ..dump.model import DumpSet, OpRecord, TensorRef
from ..errors import ConfigError
from ..graph.concatenated_names import ConcatenatedNames
from .golden_spelling import name_members
from .result import Coverage


@dataclass(frozen=True)
class TensorPair:
    """An actual tensor and the golden tensor it is compared with (or why there is none)."""

    actual_op: OpRecord
    actual: TensorRef
    golden_op: Optional[OpRecord]
    golden: Optional[TensorRef]
    how: str  # mapping | origin | producer | fused | name
    reason: str = ""


@dataclass(frozen=True)
class MatchPlan:
    pairs: Tuple[TensorPair, ...]
    coverage: Coverage
    unmatched_ops: Tuple[OpRecord, ...] = ()  # actual ops with no golden counterpart
    npu_only_ops: Tuple[str, ...] = ()
    #: unmatched fused ops whose output's origin the golden lacks: {op name: why}
    not_compared: Mapping[str, str] = field(default_factory=dict)
    #: outputs of compared fused ops whose own origin the golden lacks: (op, output, why)
    lacking_outputs: Tuple[Tuple[OpRecord, TensorRef, str], ...] = ()


class _GoldenIndex:
    """Golden ops by name, with their position in golden order. A name is looked up exactly
    first, then by its sanitised form (golden dirs msit wrote hold sanitised names); golden
    ops whose names sanitise alike (``a.b``, ``a_b``: our writer keeps them apart, see
    ``dump.golden_names``) stay distinct, the one whose name is the sanitised form answering
    the loose lookup."""

    def __init__(self, golden: DumpSet):
        self.ops: Dict[str, Tuple[int, OpRecord]] = {}
        self._loose: Dict[str, str] = {}
        self.skipped = tuple(golden.meta.get("skipped_files") or ())
        for pos, op in enumerate(golden.ops):
            self.ops[op.name] = (pos, op)  # duplicates: the later dump wins
            key = sanitize(op.name)
            if key == op.name or self._loose.get(key) != key:
                self._loose[key] = op.name

    @functools.cached_property
    def stems(self) -> ConcatenatedNames:
        """The golden op names, sanitised (fused ops' names are cut into them)."""
        return ConcatenatedNames(self._loose)

    def _name(self, name: str) -> Optional[str]:
        if not name:
            return None
        return name if name in self.ops else self._loose.get(sanitize(name))

    def get(self, name: str) -> Optional[OpRecord]:
        hit = self.ops.get(self._name(name))
        return hit[1] if hit else None

    def position(self, name: str) -> int:
        return self.ops[self._name(name)][0]

    def no_output(self, op: OpRecord, index: int) -> str:
        """Why there is no golden tensor for output ``index`` of golden op ``op``, naming the
        golden files of its name the reader skipped (``topk.1.npy``, no timestamp)."""
        stem = sanitize(op.name) + "."
        mine = [f"{name} ({why})" for name, why in self.skipped if str(name).startswith(stem)]
        return (f"golden op {op.name!r} has no output {index}"
                + (f"; its golden file not read: {'; '.join(mine[:3])}" if mine else ""))

    def last_of(self, names) -> Optional[OpRecord]:
        present = [n for n in names if self._name(n) is not None]
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


def _input_pair(op: OpRecord, t: TensorRef, target: Optional[OpRecord], how: str,
                index: "_GoldenIndex") -> Optional[TensorPair]:
    """Input ``t`` of ``op`` and its golden: the golden output of the framework tensor that
    feeds it (``t.origin``: its producer's, through ATC's inserted Cast/TransData, from the om
    json) as msaccucmp pairs inputs, so a golden of op outputs only serves; else, for an op
    matched by name or mapping, the golden op's own input of that index (msit's input_*.npy)."""
    if t.origin is not None and how != "mapping":
        producer = index.get(t.origin[0])
        g = _output(producer, t.origin[1]) if producer is not None else None
        if g is not None:
            return TensorPair(op, t, producer, g, "producer")
    if target is not None and how in ("name", "mapping"):
        g = _input(target, t.index)
        if g is not None:
            return TensorPair(op, t, target, g, how)
    return None


def _is_npu_only(op: OpRecord, listed=frozenset()) -> bool:
    """No framework origin: original names all empty, or listed in the dump's
    ``meta['npu_only_ops']`` (what ``load_dump`` records from the om json)."""
    return op.name in listed or (bool(op.original_names) and all(not n for n in op.original_names))


#: op types msaccucmp walks back to their producer (``ConstManager.SPECIAL_OPS_TYPE``)
SPECIAL_OPS_TYPE = ("Cast", "TransData")


def _origin_pair(op: OpRecord, t: TensorRef, index: _GoldenIndex, how: str,
                 guard: bool) -> Optional[TensorPair]:
    """The pair ``t.origin`` names; None when that golden op is absent or, with ``guard``,
    when its tensor holds another number of values (the origin cannot be the same tensor)."""
    origin_op = index.get(t.origin[0]) if t.origin else None
    if origin_op is None:
        return None
    g = _output(origin_op, t.origin[1])
    if g is None:
        return TensorPair(op, t, origin_op, None, how, index.no_output(origin_op, t.origin[1]))
    if guard and g.size != t.size:
        return None
    return TensorPair(op, t, origin_op, g, how)


def _claim(origin) -> Tuple[str, int]:
    return sanitize(origin[0]), int(origin[1])


def _last_claims(actual: DumpSet) -> Dict[Tuple[str, int], int]:
    """Header origin (sanitised name, index) -> position of the last actual op claiming it."""
    last: Dict[Tuple[str, int], int] = {}
    for pos, op in enumerate(actual.ops):
        for t in op.outputs:
            if t.origin and t.origin[0]:
                last[_claim(t.origin)] = pos
    return last


def _framework_names(actual: DumpSet) -> Dict[str, Dict[str, None]]:
    """{sanitised name: the distinct real names of the actual dump spelled so}: op names,
    original names and output origins."""
    out: Dict[str, Dict[str, None]] = {}
    for op in actual.ops:
        names = [op.name, *op.original_names, *(t.origin[0] for t in op.outputs if t.origin)]
        for n in names:
            if n:
                out.setdefault(sanitize(n), {})[n] = None
    return out


def colliding_golden_ops(actual: DumpSet, golden: DumpSet) -> Dict[str, str]:
    """{golden op name: why no actual tensor is compared with it}: golden ops of msit's naming
    (``{sanitize(N)}.{j}.{ts}.npy``, not injective) holding several files for one output where
    the actual dump has several ops whose names sanitise to that op's name (``a/b`` and
    ``a_b``: ``a_b.0.{ts1}.npy``, ``a_b.0.{ts2}.npy``). Which file is whose cannot be told from
    the names; msaccucmp takes the latest for both, so a correct device failed, the Relu
    compared with the Tanh's golden. The same op dumped twice (one real name) is not this: the
    latest file serves, as msaccucmp's does."""
    repeated = golden.meta.get("repeated") or {}
    if not repeated or golden.meta.get("naming") != "golden":
        return {}
    files = golden.meta.get("repeated_files") or {}
    by_key = _framework_names(actual)
    out: Dict[str, str] = {}
    for g in repeated:
        real = list(by_key.get(sanitize(g), ()))
        if sanitize(g) != g or len(real) < 2:  # escaped/recorded: a real name; or one op
            continue
        listed = list(files.get(g, ()))
        shown = ", ".join(listed[:4]) + (f", +{len(listed) - 4} more" if len(listed) > 4 else "")
        ops = ", ".join(repr(n) for n in real[:4]) + (", ..." if len(real) > 4 else "")
        out[g] = (f"the golden's files {shown} all stand for op {g!r}: msit's naming writes "
                  f"ops {ops} (with '/', '.', '\\' and ' ' as '_') under that one name and "
                  "cannot tell them apart, so none is compared (msaccucmp compares each with the "
                  "latest file); pass a golden written with the real names (this package's: "
                  "store_golden, or the plugin's stored golden), or ignore these ops")
    return out


#: an ONNX node name given by its type and a number (``Relu_1``): how msit and ATC name unnamed
#: nodes
_NUMBERED = re.compile(r"([A-Za-z][A-Za-z0-9]*)_([0-9]+)")


def _names_its_own(golden: DumpSet) -> bool:
    """Whether this package wrote the golden (its op names are ATC's, ``graph/names.py``): a
    stored golden (its ``golden.json``), ``golden_dump``'s, or a cache entry's pack read from a
    report's path (``{pack}#{name}`` sources: only this package's writer packs tensors)."""
    meta = golden.meta
    if meta.get("golden_record") or meta.get("backend") == "golden":
        return True
    first = next((t for op in golden.ops for t in op.outputs), None)
    source = (first.source or "") if first is not None else ""
    return "#" in source and source.endswith(".npy")


def renumbered_ops(actual: DumpSet, golden: DumpSet) -> Dict[str, str]:
    """{actual name: why its golden is not the golden op of that name} for unnamed ONNX nodes
    numbered otherwise by the golden: msit names node ``k`` of the graph ``{Type}_{k}`` (its
    position), ATC ``{Type}_{n}``, ``n`` counting unnamed nodes only (docs/formats.md §7), so
    after a named node they differ: ATC's ``Relu_0``, ``Relu_1`` are msit's ``Relu_1``,
    ``Relu_2``, and ``Relu_1`` was compared with the other node's tensor. Said only for a golden
    of msit's naming (not this package's) whose every ``{Type}_{N}`` op sits at position ``N``
    of the golden's op order, and not all of them at their count (where the two agree)."""
    if golden.meta.get("naming") != "golden" or _names_its_own(golden):
        return {}
    numbered = []
    for pos, op in enumerate(golden.ops):
        m = _NUMBERED.fullmatch(op.name)
        if m:
            if int(m.group(2)) != pos:
                return {}  # not msit's position numbering
            numbered.append((m.group(1), pos))
    if all(pos == k for k, (_, pos) in enumerate(numbered)):
        return {}
    theirs = {f"{t}_{k}": f"{t}_{pos}" for k, (t, pos) in enumerate(numbered)}  # ATC's -> msit's
    golden_names = {op.name for op in golden.ops}
    shown = ", ".join(f"{a} -> {b}" for a, b in theirs.items() if a != b)
    out: Dict[str, str] = {}
    for names in _framework_names(actual).values():
        for name in names:
            if theirs.get(name, name) == name:
                continue
            other = (f"the golden's {name!r} is another node" if name in golden_names
                     else f"the golden has no {name!r}")
            out[name] = (f"the golden numbers unnamed ONNX nodes by their position in the graph "
                         f"(msit), the device by counting unnamed nodes only (ATC), so after a "
                         f"named node the numbers are offset: this {name!r} is the golden's "
                         f"{theirs[name]!r}, and {other}; give the ONNX nodes names, or use this "
                         f"package's golden (golden_dump / store_golden: named as ATC names "
                         f"them), or map them ({_capped(shown)})")
    return out


def _capped(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit].rpartition(", ")[0] + ", ..."


def check_mapping(mapping: Mapping[str, str], actual: DumpSet, golden: DumpSet, *,
                  where: str = "mapping", index: Optional["_GoldenIndex"] = None
                  ) -> Dict[str, str]:
    """The user's ``{actual op: golden op}`` mapping keyed by sanitised actual names; every op
    it names must be in its dump (the name, else its sanitised form), else a ``ConfigError`` at
    ``where`` naming the closest real names."""
    from ..errors import closest_text

    if not isinstance(mapping, Mapping):
        raise ConfigError(where, f"expected a mapping of actual op name -> golden op name, "
                          f"got {type(mapping).__name__}")
    index = index if index is not None else _GoldenIndex(golden)
    prefix = "" if where == "mapping" else "mapping: "
    actual_names = [op.name for op in actual.ops]
    loose = {sanitize(n) for n in actual_names}
    out = {}
    for a, g in mapping.items():
        if sanitize(str(a)) not in loose:
            raise ConfigError(where, f"{prefix}actual op {a!r} is not in the actual dump"
                                     f"{closest_text(str(a), actual_names, n=3)}")
        if index.get(str(g)) is None:
            raise ConfigError(where, f"{prefix}golden op {g!r} (mapped from {a!r}) is not in "
                                     f"the golden dump"
                                     f"{closest_text(str(g), [op.name for op in golden.ops], n=3)}")
        out[sanitize(str(a))] = str(g)
    return out


def match_ops(actual: DumpSet, golden: DumpSet, *, mapping: Optional[Mapping[str, str]] = None,
              compare_inputs: bool = False) -> MatchPlan:
    """Pair every actual output (and, with ``compare_inputs``, input) with a golden tensor."""
    index = _GoldenIndex(golden)
    user = check_mapping(mapping, actual, golden, index=index) if mapping else {}
    pairs: List[TensorPair] = []
    compared: Dict[str, None] = {}  # golden op names, insertion-ordered set
    covered: Dict[str, None] = {}
    unmatched_actual: List[OpRecord] = []
    npu_only_names: List[str] = []
    not_compared: Dict[str, str] = {}
    lacking_outputs: List[Tuple[OpRecord, TensorRef, str]] = []
    listed = frozenset(actual.meta.get("npu_only_ops", ()) or ())
    via_producer = actual.meta.get("paired_via_producer") or {}
    inner = frozenset(actual.meta.get("om_inner_ops", ()) or ())
    inserted = frozenset(actual.meta.get("om_inserted_ops", ()) or ())
    header_origins = "om_json" not in actual.meta
    last_claim = _last_claims(actual) if header_origins else {}
    colliding = colliding_golden_ops(actual, golden)
    unpaired = dict(actual.meta.get("unpaired_ops") or {})
    renumbered = renumbered_ops(actual, golden)
    for op in actual.ops:  # an op whose golden the numbering hides: its own, not a node's
        named = [t.origin[0] for t in op.outputs if t.origin and t.origin[0]] or [op.name]
        why = next((renumbered[n] for n in named if n in renumbered), None)
        if why is not None:
            unpaired.setdefault(op.name, why)
    for pos, op in enumerate(actual.ops):
        key = sanitize(op.name)
        npu_only = False
        if op.name in unpaired and key not in user:  # the loader could not name it for pairing
            unmatched_actual.append(op)
            not_compared[op.name] = str(unpaired[op.name])
            continue
        if key in user:
            target, how = index.get(user[key]), "mapping"
        elif op.name in inner:
            target, how = None, "inner"
        elif _is_npu_only(op, listed):
            target, how, npu_only = None, "producer" if op.name in via_producer else "", True
        elif op.is_fused:
            target, how = index.last_of(op.original_names), "fused"
            if target is None and index.get(op.name) is not None:
                target, how = index.get(op.name), "name"
        else:
            target, how = index.get(op.name), "name"
        special = npu_only or (header_origins and op.op_type in SPECIAL_OPS_TYPE)
        op_pairs, guarded, lacking = [], False, []
        for t in op.outputs:
            pair = None
            if (t.origin and special and header_origins and how != "mapping"
                    and last_claim.get(_claim(t.origin), pos) > pos):
                guarded = True  # a later op holds that tensor: this one is an input's copy
                continue
            if t.origin and how != "mapping":  # an inner op's trusted origins still count
                pair = _origin_pair(op, t, index, "producer" if how == "producer" else "origin",
                                    guard=special)
                if pair is None and special and index.get(t.origin[0]) is not None:
                    guarded = True  # the origin names a tensor of another size: not this one
                    continue
                if (pair is None and op.is_fused and not special and t.origin[0]
                        and not _fused_twin(index, op)):
                    lacking.append(t)  # its producer's golden is missing: no member stands in
                    continue
            if pair is not None:
                op_pairs.append(pair)
            elif target is not None:
                g = _output(target, t.index)
                reason = "" if g is not None else index.no_output(target, t.index)
                op_pairs.append(TensorPair(op, t, target, g, how, reason))
        collided = []  # outputs whose golden file may be another op's: (output, why)
        if colliding and how != "mapping":
            collided = [(p.actual, colliding[p.golden_op.name]) for p in op_pairs
                        if p.golden_op is not None and p.golden_op.name in colliding]
            op_pairs = [p for p in op_pairs
                        if p.golden_op is None or p.golden_op.name not in colliding]
        if compare_inputs and op_pairs:  # a compared op's inputs (an unmatched op gets none)
            op_pairs.extend(p for p in (_input_pair(op, t, target, how, index) for t in op.inputs)
                            if p is not None and (p.golden_op is None
                                                  or p.golden_op.name not in colliding))
        if not op_pairs and collided:
            unmatched_actual.append(op)
            not_compared[op.name] = collided[0][1]
            continue
        lacking_outputs.extend((op, t, why) for t, why in collided)
        if not op_pairs:
            unmatched_actual.append(op)
            if lacking:
                not_compared[op.name] = _lacking_reason(op, lacking)
                _cover(op, index, covered)
            if npu_only or guarded or op.name in inserted or (header_origins and special):
                npu_only_names.append(op.name)
            continue
        pairs.extend(op_pairs)
        # its other outputs are compared: each lacking one still gets its row, not compared
        lacking_outputs.extend((op, t, _lacking_reason(op, [t])) for t in lacking)
        for p in op_pairs:
            if p.actual.kind == "output":  # an input's producer counts by its own outputs
                compared[p.golden_op.name] = None
        _cover(op, index, covered)
    fused = [n for n in covered if n not in compared]
    seen = set(compared) | set(fused)
    # nodes inside an If the device runs as one operator, which dumps none of its branch's
    # tensors (a backend that knows them lists them in meta["inside_ops"]: {node: the If})
    inside = actual.meta.get("inside_ops") or {}
    ran = {op.name for op in actual.ops} if inside else set()
    in_if_names = {g.name for n, owner in inside.items()
                   if owner in ran for g in (index.get(n),) if g is not None} - seen
    seen |= in_if_names
    # ops the converter computed at conversion time (constants, static shapes) never run on the
    # device: a backend that knows them lists them in meta["folded_ops"]
    folded_names = {g.name for g in (index.get(n) for n in actual.meta.get("folded_ops", ()))
                    if g is not None and g.name not in seen}
    ordered = [op.name for _, op in sorted(index.ops.values(), key=lambda po: po[0])]
    folded = [n for n in ordered if n in folded_names]
    unmatched_golden = [n for n in ordered if n not in seen and n not in folded_names]
    coverage = Coverage(golden_total=len(index.ops), compared=tuple(compared), fused=tuple(fused),
                        in_ifs=tuple(n for n in ordered if n in in_if_names),
                        folded=tuple(folded), unmatched_golden=tuple(unmatched_golden),
                        unmatched_actual=tuple(op.name for op in unmatched_actual),
                        npu_only=tuple(npu_only_names))
    return MatchPlan(tuple(pairs), coverage, tuple(unmatched_actual), tuple(npu_only_names),
                     not_compared, tuple(lacking_outputs))


def _cover(op: OpRecord, index: _GoldenIndex, covered: Dict[str, None]) -> None:
    # a fused op's own name names members too (a dump header gives only its output's origin)
    members = name_members(op, index.stems) if op.is_fused else []
    for n in (*op.original_names, *members):
        g = index.get(n)
        if g is not None:
            covered[g.name] = None


def _lacking_reason(op: OpRecord, lacking: List[TensorRef]) -> str:
    outs = ", ".join(f"{t.origin[0]} output {t.origin[1]}" for t in lacking)
    return (f"the golden has no tensor for {outs}, the fused op's output (its other original "
            "ops' outputs are computed inside the fusion: not the same tensor)")


def _fused_twin(index: _GoldenIndex, op: OpRecord) -> bool:
    """Whether the golden holds a fused op of ``op``'s own name: the golden is another device
    run (``triage`` compares two modes' dumps), whose op is the same fusion's output."""
    twin = index.get(op.name)
    return twin is not None and twin.is_fused
