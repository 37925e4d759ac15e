"""Which framework tensor each output of an om op stands for, as msaccucmp decides it.

Real ATC om jsons put ``_datadump_origin_name`` on almost every output, but it cannot always be
believed: an NPU-inserted ``TransData``/``Cast`` (empty ``_datadump_original_op_names``) often
names its *consumer* (``trans_TransData_4`` before ``Conv_52`` says ``Conv_52``), whose golden
tensor has another shape and other values. msaccucmp never uses that attr for such ops: in
``vector_cmp/fusion_manager/compare_fusion_op.py`` (``get_right_dump_data``) it walks a
``SPECIAL_OPS_TYPE = ("Cast", "TransData")`` op back through its ``input`` edge (output i <->
data input i) until it reaches another op, and takes *that* op's origin. We do the same for every
op whose original-names list is empty (whatever its type), through chains of them.

Per output of an op that is not NPU-only, first rule that applies (msaccucmp's
``fusion_rule_parser.py`` semantics):

1. ``origin``: the output's ``_datadump_origin_name``, when it agrees with the op: it names one
   of the op's original names (or the op itself, unless rule 3 applies);
2. ``self``: the op has no original-names attr: it stands for itself, output i -> output i;
3. ``inner``: several ops share one original-names list (one framework op split in several
   NPU ops) and this one is not the last of them: its output is an intermediate value that no
   framework tensor holds; not compared (msaccucmp finds no origin for it either);
4. ``renamed``: one original name: that op, output i -> output i;
5. ``fused``: several original names and no usable origin: left to ``compare.matching`` (the
   last original op that has a golden tensor).

An NPU-only op gets ``producer`` with the origin its producer's output resolves to (rules
above), or ``npu_only`` (no origin) when the walk ends nowhere (no data input, a producer the
json does not list, a cycle) or at an op whose origin is undetermined. Ops ATC inserted next to
another op without marking them (``inserted_ops``) are NPU-only when the golden lacks them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from .om_json import OmGraph, OmOp

Origin = Tuple[str, int]


@dataclass(frozen=True)
class OutputPairing:
    """Where one om op output finds its golden: ``origin`` (framework op, output index) or None,
    ``how`` the rule (see module doc), ``via`` the ops walked through (``producer`` only: the
    NPU-only ops after this one, then the producer)."""

    origin: Optional[Origin]
    how: str
    via: Tuple[str, ...] = ()


def pair_outputs(graph: OmGraph) -> Dict[str, Tuple[OutputPairing, ...]]:
    """{op name: per output ``OutputPairing``} for every op of ``graph``."""
    by_name = graph.by_name
    last_of_group = _last_of_groups(graph)
    out: Dict[str, Tuple[OutputPairing, ...]] = {}
    for op in graph.ops:
        n = max(len(op.output_origins), len(op.output_descs), 1)
        if op.npu_only:
            out[op.name] = tuple(_walk_back(op, k, by_name, last_of_group) for k in range(n))
        else:
            out[op.name] = tuple(_resolve(op, k, last_of_group) for k in range(n))
    return out


#: op types that hold data but never run (and are never dumped): a Const that carries a
#: framework op's name (``PartitionedCall_Gather_1221_const_data_2`` next to the GatherV2 in the
#: real ATC 5.1 file) does not split that op
NOT_RUN_TYPES = frozenset({"Const", "Constant", "Data", "NetOutput", "Variable"})


def _last_of_groups(graph: OmGraph) -> Dict[Tuple[str, ...], str]:
    """{original-names list shared by several running ops: the last of them in execution
    order}."""
    members: Dict[Tuple[str, ...], List[str]] = {}
    for op in graph.ops:
        if op.original_names and op.type not in NOT_RUN_TYPES:
            members.setdefault(op.original_names, []).append(op.name)
    return {names: ops[-1] for names, ops in members.items() if len(ops) > 1}


def _resolve(op: OmOp, k: int, last_of_group: Dict[Tuple[str, ...], str]) -> OutputPairing:
    origin = op.output_origins[k] if k < len(op.output_origins) else None
    if origin is not None and origin[0] in op.original_names:
        return OutputPairing(origin, "origin")
    names_itself = origin is not None and origin[0] == op.name
    if not op.original_names:
        return OutputPairing(origin if names_itself else (op.name, k),
                             "origin" if names_itself else "self")
    last = last_of_group.get(op.original_names)
    if last is not None and last != op.name:
        return OutputPairing(None, "inner")
    if names_itself:
        return OutputPairing(origin, "origin")
    if len(set(op.original_names)) == 1:
        return OutputPairing((op.original_names[0], k), "renamed")
    return OutputPairing(None, "fused")


def _walk_back(op: OmOp, k: int, by_name: Dict[str, OmOp],
               last_of_group: Dict[Tuple[str, ...], str]) -> OutputPairing:
    cur, index, via, seen = op, k, [], {op.name}
    while True:
        inputs = cur.data_inputs
        if index >= len(inputs):
            return OutputPairing(None, "npu_only", tuple(via))
        src, index = inputs[index]
        producer = by_name.get(src)
        if producer is None or producer.name in seen:
            return OutputPairing(None, "npu_only", tuple(via + [src]))
        via.append(producer.name)
        seen.add(producer.name)
        if not producer.npu_only:
            found = _resolve(producer, index, last_of_group)
            if found.origin is None:
                return OutputPairing(None, "npu_only", tuple(via))
            return OutputPairing(found.origin, "producer", tuple(via))
        cur = producer


def untrusted_origins(graph: OmGraph) -> Dict[str, Origin]:
    """{``op:output:i``: origin attr} for the origins ``pair_outputs`` does not believe (those of
    NPU-only ops that name something other than what their producer resolves to, and those of
    other ops that name an op they do not cover): for reports, so the override is visible."""
    pairing = pair_outputs(graph)
    out = {}
    for op in graph.ops:
        for k, origin in enumerate(op.output_origins):
            if origin is None:
                continue
            paired = pairing[op.name][k] if k < len(pairing[op.name]) else None
            if paired is None or paired.origin != origin:
                out[f"{op.name}:output:{k}"] = origin
    return out


def inserted_ops(graph: OmGraph) -> Tuple[str, ...]:
    """Ops ATC inserted around another op without marking them: no original-names attr, and
    named ``{neighbour}_{suffix}`` after an op they feed or are fed by
    (``BatchMultiClassNMS_1203_Input0_TransposeBefore`` -> ``BatchMultiClassNMS_1203`` in the
    real ATC 5.1 file). They stand for themselves, so one the golden graph also has is compared;
    one it lacks is NPU-only (a fault in it shows in its neighbour), not an unseen op."""
    consumers: Dict[str, List[str]] = {}
    for op in graph.ops:
        for src, _ in op.data_inputs:
            consumers.setdefault(src, []).append(op.name)
    out = []
    for op in graph.ops:
        if op.original_names or op.npu_only or op.type in NOT_RUN_TYPES:
            continue
        neighbours = [src for src, _ in op.data_inputs] + consumers.get(op.name, [])
        if any(n != op.name and op.name.startswith(n + "_") for n in neighbours):
            out.append(op.name)
    return tuple(out)


__all__ = ["OutputPairing", "pair_outputs", "untrusted_origins", "inserted_ops"]
