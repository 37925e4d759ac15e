"""The emulator's "ATC": rewrite an ONNX graph so onnxruntime computes what the NPU would.

Steps (all deterministic, no inputs needed):

1. prepare (``graph.prepare.prepare_model``): names, static input shapes, static ``If`` inlined;
2. fold static subgraphs (``onnx_static``): shape arithmetic and constant expressions are
   computed once in float32, as ATC folds them; folded nodes are not executed or dumped;
3. split into executed units (``fusion.build_units``: single ops or fused groups);
4. per unit, by its precision (``rounding.unit_precision``): round float inputs (weights in
   numpy, activations with Cast-to-fp16-and-back nodes), run the member nodes in float32,
   apply active faults, round float outputs; fused groups are rounded only at their borders;
5. record a ``Plan``: for each unit the tensors to dump and their dtypes (the model's own
   outputs keep their names, holding the rounded values).
"""
from __future__ import annotations

from collections import Counter
from typing import Dict, List, Optional, Sequence, Set, Tuple

import numpy as np

from ...core.modes import Mode
from ...graph.control_flow import operator_members
from ...graph.folded_nodes import folded_node_protos
from ...errors import ConfigError, ConversionError
from ...graph.onnx_graph import model_label, tensor_info
from ...graph.prepare import prepare_model
from ...graph.static import evaluate, static_tensors
from ...graph.stream import node_reads
from ...graph.parser_refusals import parser_refusal
from ...graph.value_kinds import refusal_text
from .atc_resize import resize_rows
from .branch_rounding import round_branches
from .branch_faults import apply_branch_faults, branch_types, targets_in_branches
from .faults import FAULTABLE, Fault, fault_chain, insert_aipp_nodes, unfaultable
from .float16_model import float16_tensors, narrow_outputs, origin_precision, widen, widened_inputs
from .fusion import RULES, build_units
from .layouts import FILTER_OF
from .plan import Plan, PlannedOp, Slot
from .rounding import (FP16_MAX, VALUE_PRESERVING, round_array, rounding_nodes, rounds_inputs,
                       kept_by_parser_type, rounds_outputs, unit_precision)

FLOAT = 1  # onnx.TensorProto.FLOAT
FLOAT16 = 10


def fold_constants(model, folder: Optional[str] = None) -> List[str]:
    """Replace static subgraphs by initializers, in place; returns the folded node names
    (``folder``: where external-data weights are, ``graph.external``)."""
    from onnx import numpy_helper

    graph = model.graph
    info = tensor_info(model)
    static = static_tensors(model, info)
    inits = {t.name for t in graph.initializer}
    folded = folded_node_protos(model, static)  # the one rule, which the CLI applies too
    if not folded:
        return []
    folded_ids = {id(n) for n in folded}
    needed = []
    for n in graph.node:
        if id(n) in folded_ids:
            continue
        for t in node_reads(n):  # a subgraph's reads too: a constant an If branch alone uses
            if t in static and t not in inits:
                needed.append(t)
    values = _evaluate_static(model, needed, static, info, folder)
    names = [n.name for n in folded]
    keep = [n for n in graph.node if id(n) not in folded_ids]
    del graph.node[:]
    graph.node.extend(keep)
    for name, value in values.items():
        graph.initializer.append(numpy_helper.from_array(np.asarray(value), name))
    remove_unused_initializers(model)
    return names


def _evaluate_static(model, needed: List[str], static: Set[str], info,
                     folder: Optional[str]) -> Dict[str, np.ndarray]:
    """``evaluate(model, needed)`` on the static subgraph alone: only the nodes the ``needed``
    tensors depend on, and for a ``Shape``/``Size`` of a computed tensor of known shape that
    tensor as a zero-filled input. The values are the same (static tensors do not depend on
    input values) and onnxruntime never loads the model's other weights (PP-OCR det 736:
    0.75 s -> 0.05 s). Falls back to the whole model when the subgraph cannot be built."""
    try:
        probe, feeds = _static_subgraph(model, needed, static, info)
    except (KeyError, TypeError, ValueError):
        return evaluate(model, needed, folder=folder)
    return evaluate(probe, needed, feeds, folder=folder)


def _static_subgraph(model, needed: List[str], static: Set[str], info):
    """(model of the nodes ``needed`` depends on, zero feeds for its inputs)."""
    from onnx import ValueInfoProto, helper

    from ...graph.static import SHAPE_OPS

    graph = model.graph
    producer = {o: k for k, n in enumerate(graph.node) for o in n.output if o}
    inits = {t.name: t for t in graph.initializer}
    keep: Set[int] = set()
    seen: Set[str] = set()
    used_inits, feeds = [], {}
    stack = [t for t in needed if t]
    while stack:
        name = stack.pop()
        if not name or name in seen:
            continue
        seen.add(name)
        if name in inits:
            used_inits.append(inits[name])
            continue
        k = producer[name]  # a static tensor is an initializer or computed (else: fall back)
        if k in keep:
            continue
        keep.add(k)
        node = graph.node[k]
        if node.op_type in SHAPE_OPS and node.input[0] not in static:
            x = node.input[0]  # its shape is known (static_tensors checked): feed zeros
            elem, shape = info[x]
            if shape is None or any(d is None for d in shape):
                raise ValueError(x)
            feeds[x] = np.zeros(shape, helper.tensor_dtype_to_np_dtype(elem))
            seen.add(x)
            continue
        stack.extend(node.input)
    sub = helper.make_graph(
        [graph.node[k] for k in sorted(keep)], "static",
        [helper.make_tensor_value_info(x, info[x][0], a.shape) for x, a in feeds.items()],
        [ValueInfoProto(name=t) for t in dict.fromkeys(needed)], used_inits)
    probe = helper.make_model(sub, opset_imports=list(model.opset_import),
                              ir_version=model.ir_version)
    return probe, feeds


def remove_unused_initializers(model) -> None:
    used: Set[str] = {i for n in model.graph.node for i in n.input} | {o.name for o in model.graph.output}
    for n in model.graph.node:  # outer-scope references from subgraphs
        for a in n.attribute:
            for g in ([a.g] if a.type == 5 else list(a.graphs) if a.type == 10 else []):
                used |= _subgraph_inputs(g)
    keep = [t for t in model.graph.initializer if t.name in used]
    dropped = {t.name for t in model.graph.initializer} - {t.name for t in keep}
    del model.graph.initializer[:]
    model.graph.initializer.extend(keep)
    if dropped:  # an IR-3 model lists each initializer as a graph input too: that entry goes
        inputs = [i for i in model.graph.input if i.name not in dropped]  # with it, or it is
        del model.graph.input[:]  # an input nobody feeds (graph_inputs skips initializers only)
        model.graph.input.extend(inputs)


def _subgraph_inputs(g) -> Set[str]:
    names = {i for n in g.node for i in n.input}
    for n in g.node:
        for a in n.attribute:
            for sub in ([a.g] if a.type == 5 else list(a.graphs) if a.type == 10 else []):
                names |= _subgraph_inputs(sub)
    return names


class _Emitter:
    """Builds the rewritten node list and the plan, one unit at a time."""

    def __init__(self, model, info, consts, overflow: str, device_formats: bool = True, sink=None):
        self.sink = sink  # big new initializers go to the converted model's data file as made
        self.model = model
        self.branch_elem_types: Optional[Dict[str, int]] = None  # of If branches, when needed
        self.info = info
        self.consts = consts
        self.overflow = overflow
        self.device_formats = device_formats
        self.inputs = {i.name for i in model.graph.input} - set(consts)
        self.nodes: List[object] = []
        self.inits: List[object] = []
        self.exact: Dict[str, str] = {}   # tensor -> rounding kind its values are exact in
        self.half: Dict[str, str] = {}    # tensor -> its float16 twin (fetched for dumps)
        self.rounded: Dict[Tuple[str, str], Tuple[str, Slot]] = {}
        self.used: Set[str] = set(info) | set(consts) | {o for n in model.graph.node for o in n.output}
        self.used |= {i for n in model.graph.node for i in n.input}
        self.bounds: Optional[Tuple[str, str]] = None
        self.counter = 0
        self.widened: Dict[str, str] = {}  # float16 graph input -> its float32 copy

    # -- helpers -------------------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        name = base
        k = 1
        while name in self.used:
            name = f"{base}_{k}"
            k += 1
        self.used.add(name)
        return name

    def prefix(self, what: str) -> str:
        self.counter += 1
        return f"emu::{what}::{self.counter}"

    def is_float(self, t: str) -> bool:
        if t in self.consts:
            return self.consts[t].dtype == np.float32
        return self.info.get(t, (0, None))[0] == FLOAT

    def const_init(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        name = self.fresh(name)
        if self.sink is not None:
            tensor = self.sink.add(name, value)
            self.inits.append(tensor)
            if tensor.data_location == 1:  # written out: read back (mapped) when needed
                self.consts.refer(tensor, self.sink.folder)
                return name
        else:
            self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        self.consts[name] = np.asarray(value)
        return name

    def saturate_bounds(self) -> Tuple[str, str]:
        if self.bounds is None:
            self.bounds = (self.const_init("emu::fp16_min", np.array(-FP16_MAX, np.float32)),
                           self.const_init("emu::fp16_max", np.array(FP16_MAX, np.float32)))
        return self.bounds

    def plain_slot(self, t: str, origin=None) -> Slot:
        if t in self.inputs:
            return Slot(t, "input", "", origin)
        if t in self.consts:
            return Slot(t, "init", "", origin)
        if self.exact.get(t) == "fp16" and t in self.half:
            return Slot(self.half[t], "run", "float32", origin)
        return Slot(t, "run", "", origin)

    def exact_slot(self, t: str, kind: str) -> Slot:
        """Where to fetch a tensor whose values are exact in ``kind``, dumped as that dtype
        (bf16 tensors are fetched as float32 and stored as bf16 by the dump writer)."""
        dtype = "float16" if kind == "fp16" else "bfloat16"
        if t in self.consts:
            return Slot(t, "init", dtype)
        if kind == "fp16" and t in self.half:
            return Slot(self.half[t], "run", dtype)
        return Slot(t, "run", dtype)

    def round_input(self, t: str, kind: str) -> Tuple[str, Slot]:
        if self.exact.get(t) == kind:
            return t, self.exact_slot(t, kind)
        if t in self.info and self.info[t][0] == FLOAT16 and kind == "fp16":
            return t, self.plain_slot(t)  # already float16 in the model
        key = (t, kind)
        if key not in self.rounded:
            if t in self.consts:
                name = self.const_init(f"{t}__{kind}", round_array(self.consts[t], kind, self.overflow))
                self.exact[name] = kind
                self.rounded[key] = (name, self.exact_slot(name, kind))
            else:
                dst = self.fresh(f"{t}__{kind}")
                half = self.fresh(f"{t}__h") if kind == "fp16" else None
                bounds = self.saturate_bounds() if kind == "fp16" and self.overflow == "saturate" else None
                self.nodes.extend(rounding_nodes(t, dst, kind, self.overflow, prefix=self.prefix("round"),
                                                 half_name=half, bounds=bounds))
                self.exact[dst] = kind
                if half:
                    self.half[dst] = half
                self.rounded[key] = (dst, self.exact_slot(dst, kind))
        return self.rounded[key]

    def placed(self, slot: Slot, tensor: str, unit) -> Slot:
        """``slot`` with its dump layout (``layouts``), logical shape and dtype name."""
        import dataclasses

        from .layouts import tensor_format

        if tensor in self.consts:
            shape, dtype = tuple(self.consts[tensor].shape), self.consts[tensor].dtype.name
        else:
            elem, dims = self.info.get(tensor, (0, None))
            ok = dims is not None and all(isinstance(d, int) and d >= 0 for d in dims)
            shape = tuple(dims) if ok else None
            dtype = _np_name(elem)
        dtype = slot.dtype or dtype
        fmt = ""
        if self.device_formats:
            is_filter = any(n.op_type in FILTER_OF and len(n.input) > 1 and n.input[1] == tensor
                            for n in unit.nodes)
            fmt = tensor_format(unit.anchor_type, shape=shape, dtype=dtype, is_filter=is_filter)
        return dataclasses.replace(slot, format="" if fmt == "ND" else fmt, shape=shape, type=dtype)

    # -- one unit ------------------------------------------------------------------------------
    def emit(self, unit, precision: str, faults: Sequence[Fault], producers: Dict[str, str],
             branch_faults: Sequence[Fault] = (), precision_of=None) -> PlannedOp:
        import onnx

        in_kind = rounds_inputs(precision)
        out_kind = rounds_outputs(precision)
        mapping: Dict[str, str] = {}
        in_slots: List[Slot] = []
        refs: List[str] = []
        for t in unit.external_inputs():
            if t in self.widened:  # a float16 model's input (float16_model)
                mapping[t], slot = self.widened[t], self.plain_slot(t)
            elif in_kind and self.is_float(t):
                mapping[t], slot = self.round_input(t, in_kind)
            else:
                slot = self.plain_slot(t)
            in_slots.append(self.placed(slot, t, unit))
            refs.append(producers.get(t, f"{t}:0"))
        nodes = []
        for n in unit.nodes:
            copy = onnx.NodeProto()
            copy.CopyFrom(n)
            for k, name in enumerate(copy.input):
                if name in mapping:
                    copy.input[k] = mapping[name]
            nodes.append(copy)
        if branch_faults:
            if self.branch_elem_types is None:
                self.branch_elem_types = branch_types(self.model)
            for copy in nodes:
                apply_branch_faults(copy, branch_faults, self.branch_elem_types, self.prefix)
        if precision_of is not None:  # an If's branch ops, each in its precision
            round_branches(nodes, self, precision_of)
        preserving = len(unit.members) == 1 and unit.anchor_type in VALUE_PRESERVING
        out_slots: List[Slot] = []
        elems = {o: self.info.get(o, (0, None))[0] for o in unit.output_origins}
        if faults and not any(self.is_float(o) or elems[o] in FAULTABLE for o in elems):
            named = [f for f in faults if f.kind != "rule"]  # a rule's other operators may do
            if named:  # it would change nothing, yet be reported active
                raise ConfigError("fault", unfaultable(
                    named, f"operator {unit.name!r} ({unit.op_type})", list(elems.items())))
            faults = []
        for o, origin in unit.output_origins.items():
            floaty = self.is_float(o)
            if faults and not floaty and elems[o] in FAULTABLE:  # float16, double: cast around
                raw = self.fresh(f"{o}__emu_raw")
                _rename_outputs(nodes, o, raw)
                more, inits = fault_chain(faults, raw, o, elem=elems[o], prefix=self.prefix,
                                          shape=self.info.get(o, (0, None))[1])
                nodes.extend(more)
                self.inits.extend(inits)
            if floaty and (faults or (out_kind and not preserving)):
                raw = self.fresh(f"{o}__emu_raw")
                _rename_outputs(nodes, o, raw)
                cur = raw
                if faults:
                    cur = self.fresh(f"{o}__emu_fault")
                    more, inits = fault_chain(faults, raw, cur, elem=FLOAT, prefix=self.prefix,
                                              shape=self.info.get(o, (0, None))[1])
                    nodes.extend(more)
                    self.inits.extend(inits)
                if out_kind:
                    half = self.fresh(f"{o}__h") if out_kind == "fp16" else None
                    bounds = self.saturate_bounds() if out_kind == "fp16" and self.overflow == "saturate" else None
                    nodes.extend(rounding_nodes(cur, o, out_kind, self.overflow, prefix=self.prefix("round"),
                                                half_name=half, bounds=bounds))
                    self.exact[o] = out_kind
                    if half:
                        self.half[o] = half
                else:
                    nodes.append(onnx.helper.make_node("Identity", [cur], [o], name=self.prefix("fault_out")))
            elif floaty and out_kind:  # value-preserving op: inputs exact, so outputs are too
                self.exact[o] = out_kind
                if out_kind == "fp16":
                    half = self.fresh(f"{o}__h")
                    nodes.append(onnx.helper.make_node("Cast", [o], [half], name=self.prefix("half"),
                                                       to=FLOAT16))
                    self.half[o] = half
            if floaty and out_kind:
                slot = self.exact_slot(o, out_kind)
                slot = Slot(slot.fetch, slot.source, slot.dtype, origin)
            else:
                slot = self.plain_slot(o, origin)
            out_slots.append(self.placed(slot, o, unit))
            producers[o] = f"{unit.name}:{len(out_slots) - 1}"
        self.nodes.extend(nodes)
        return PlannedOp(name=unit.name, op_type=unit.op_type, original_names=unit.members,
                         onnx_types=unit.member_types, precision=precision, rules=unit.rules,
                         faults=tuple(f.describe() for f in list(faults) + list(branch_faults)),
                         inputs=tuple(in_slots),
                         outputs=tuple(out_slots), input_refs=tuple(refs))


def emulate_graph(model, mode: Mode, *, input_shape=None, faults: Sequence[Fault] = (),
                  overflow: str = "inf", device_formats: bool = True, sink=None):
    """Return ``(converted ModelProto, Plan)`` for ``model`` under ``mode`` (see module doc).
    ``device_formats``: plan conv-like/matmul tensors in NPU layouts (``layouts``).
    ``sink`` (a ``graph.external.WeightSink``): a model file whose weights are external data is
    converted without loading them: they are read (mapped) as needed, and the converted model's
    big weights are written to the sink as they are made; the returned model refers to it."""
    import onnx
    from onnx import numpy_helper

    from ...graph.external import WeightValues
    from ...graph.names import unique_name

    prepared = prepare_model(model, input_shape=input_shape, weights_by_reference=sink is not None)
    proto = prepared.model
    refused = (refusal_text(model_label(model), proto)  # strings, sequences: ATC has none
               or parser_refusal(model_label(model), proto))  # Loop/Scan, refused attrs
    if refused:
        raise ConversionError(refused)
    sink = sink if prepared.folder else None
    aipp = set(insert_aipp_nodes(proto.graph, faults))
    folded = fold_constants(proto, prepared.folder)
    inside = operator_members(proto.graph)  # branch ops of Ifs run as operators: never dumped
    info = tensor_info(proto)
    half = float16_tensors(proto, info)  # float16 ops computed in float32, rounded (float16_model)
    widen(proto, info, half, prepared.folder)
    consts = WeightValues(proto, prepared.folder)
    ranks = {k: len(v[1]) for k, v in info.items() if v[1] is not None}
    keeps = kept_by_parser_type(mode, proto.graph.node)
    units, new_inits = build_units(proto.graph, consts, fusion=mode.fusion,
                                   rules_off=mode.fusion_rules_off, ranks=ranks, keeps=keeps)
    for t in new_inits:
        consts[t.name] = numpy_helper.to_array(t)
    names_used = {n.name for n in proto.graph.node}
    for u in units:
        if u.members and u.members[0] in aipp:  # inserted pre-processing: dumped as Ascend's Aipp
            u.op_type = "Aipp"
    for u in units:  # concatenated fused names must not clash with other node names
        if u.fused and u.name not in u.members and u.name in names_used:
            u.name = unique_name(u.name, names_used)
    # before the emitter renames constants (scales -> scales__fp16: Resize sizes never compared)
    atc_resize = resize_rows(proto, [n for u in units for n in u.nodes], info)
    emitter = _Emitter(proto, info, consts, overflow, device_formats, sink)
    emitter.inits.extend(new_inits)
    emitter.widened = widened_inputs(emitter, half)
    buffer_on = mode.buffer_optimize != "off_optimize"
    producers: Dict[str, str] = {}
    ops: List[PlannedOp] = []
    active: Dict[str, List[str]] = {}
    for u in units:
        precision = unit_precision(mode, anchor_type=u.anchor_type, member_names=u.members,
                                   member_types=u.member_types, keeps=keeps)
        precision = origin_precision(precision, mode.precision_mode, u.output_origins, half,
                                     u.member_types)
        unit_faults = [f for f in faults if f.applies_to(u, buffer_on=buffer_on)]
        # faults on nodes inside the branches of an If run as one operator (branch_faults)
        in_branch = [f for n in u.nodes for f in targets_in_branches(
            n, [f for f in faults if (f.kind != "buffer" or buffer_on) and f not in unit_faults])]
        ops.append(emitter.emit(u, precision, unit_faults, producers, in_branch, lambda n: (
            unit_precision(mode, anchor_type=n.op_type, member_names=[n.name],
                           member_types=[n.op_type], keeps=keeps))))
        for described in ops[-1].faults:  # the faults it applied
            active.setdefault(described, []).append(u.name)
    graph = proto.graph
    del graph.node[:]
    graph.node.extend(emitter.nodes)
    graph.initializer.extend(emitter.inits)
    remove_unused_initializers(proto)
    ops = narrow_outputs(proto, ops, half, emitter.fresh)
    if sink is not None:
        sink.finish(proto, prepared.folder)
    model_outputs = [o.name for o in graph.output]
    plan = Plan(ops=ops, model_inputs=[i.name for i in graph.input if i.name not in consts],
                model_outputs=model_outputs, info={})
    existing = set(model_outputs)
    for name in plan.fetch:
        if name not in existing:
            graph.output.append(onnx.ValueInfoProto(name=name))
            existing.add(name)
    known_rules = set(RULES)
    plan.info = {
        "graph": prepared.report.as_dict(),
        "folded": folded,
        "inside": inside,
        "fused": {u.name: list(u.members) for u in units if u.fused},
        "faults_active": {k: v for k, v in active.items()},
        "faults_inactive": [f.describe() for f in faults if f.describe() not in active],
        "unknown_fusion_rules": [r for r in mode.fusion_rules_off if r.rpartition(":")[2] not in known_rules],
        # keep_dtype names that match no node (typos; ATC would warn): they keep nothing
        "unknown_keep_dtype": [k for k in mode.keep_dtype if not k.startswith("OpType::")
                               and k not in {m for u in units for m in u.members} and k not in folded],
        "atc_resize": atc_resize,  # atc_resize.py
        "untyped_tensors": sorted(o for u in units for o in u.output_origins if o not in info)[:50],
        "precisions": dict(Counter(op.precision for op in ops)),
        "buffer_optimize": mode.buffer_optimize,
        "device_formats": device_formats,
        "overflow": overflow,
        "float16_tensors": len(half),  # widened (float16_model)
        "branch_weights_unrounded": getattr(emitter, "branch_weights_unrounded", False),
        "fusion_refused": units.refused}  # a pattern left unfused (fusion_limits, numerics 13)
    return proto, plan


def _rename_outputs(nodes, old: str, new: str) -> None:
    for n in nodes:
        for k, name in enumerate(n.output):
            if name == old:
                n.output[k] = new


def _np_name(elem: int) -> str:
    """numpy dtype name of an ONNX element type ('' when unknown or not numpy's)."""
    if not elem:
        return ""
    from onnx.helper import tensor_dtype_to_np_dtype

    try:
        return tensor_dtype_to_np_dtype(elem).name
    except (KeyError, TypeError, ValueError):
        return ""
