"""``prepare_model``: the one preparation both the golden run and the emulator apply.

Node names normalised (``names``; ops that share a name refused as ATC's parser refuses them,
``parser_refusals.name_refusal``), input shapes set and checked (``onnx_graph``), computable
``If`` nodes inlined (``inline``); what was done and what could not be done is a ``GraphReport``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Tuple

import numpy as np

from ..errors import ConfigError
from .external import load_model_refs
from .inline import inline_ifs
from .input_names import check_input_names, listed_initializers
from .names import normalize_node_names
from .onnx_graph import (check_inputs, graph_inputs, load_model, model_label, parse_input_shape,
                         resolve_input_shapes)
from .parser_refusals import name_refusal


@dataclass(frozen=True)
class GraphReport:
    """What preparation did and what it could not do, for reports and ``DumpSet.meta``."""

    unnamed_nodes: int = 0
    renamed_duplicates: int = 0
    inlined_ifs: Tuple[Tuple[str, str], ...] = ()  # (If node name, "then"/"else")
    #: the inlined ``If`` nodes kept as operators over their branch (condition known from the
    #: inputs only: the device runs the If, ``inline``)
    kept_ifs: Tuple[str, ...] = ()
    #: with inputs: the ``If`` nodes a conversion without them runs as operators (of
    #: ``kept_ifs``, those the device dumps; the others come out of a kept If's branch)
    operator_ifs: Tuple[str, ...] = ()
    #: operators that keep a subgraph (Loop, Scan, If not inlined): internal tensors not dumped
    subgraph_ops: Tuple[Tuple[str, str], ...] = ()  # (node name, op type)
    input_shapes: Tuple[Tuple[str, Tuple[int, ...]], ...] = ()

    def as_dict(self) -> Dict[str, object]:
        return {
            "unnamed_nodes": self.unnamed_nodes,
            "renamed_duplicates": self.renamed_duplicates,
            "inlined_ifs": [list(x) for x in self.inlined_ifs],
            "kept_ifs": list(self.kept_ifs),
            "subgraph_ops": [list(x) for x in self.subgraph_ops],
            "subgraph_note": ("internal tensors of these operators' subgraphs are not dumped"
                              if self.subgraph_ops else ""),
            "input_shapes": {k: list(v) for k, v in self.input_shapes},
        }


@dataclass
class PreparedModel:
    """A prepared copy of the model (safe to modify further) and what was done to it."""

    model: object  # onnx.ModelProto
    report: GraphReport = field(default_factory=GraphReport)
    #: the folder the model's external-data weights are read from, when they were left there
    #: (``prepare_model(..., weights_by_reference=True)``; ``external.initializer_array``)
    folder: Optional[str] = None


def prepare_model(model, *, input_shape=None, inputs: Optional[Mapping[str, np.ndarray]] = None,
                  require_static: bool = True, weights_by_reference: bool = False) -> PreparedModel:
    """Names, shapes and taken ``If`` branches, as described in the module docstring.

    With ``inputs`` the shapes come from them (and must agree with ``input_shape``) and ``If``
    conditions may depend on input values; without, only conditions computable from constants
    and static shapes are inlined. ``weights_by_reference``: a model file's big external-data
    weights stay in their file (``external.load_model_refs``; ``PreparedModel.folder``)."""
    if weights_by_reference:
        proto, folder = load_model_refs(model)
    else:
        proto, folder = load_model(model), None
    refused = name_refusal(model_label(model), proto.graph)  # ATC: E19009, parser_refusals
    if refused:
        raise ConfigError(_shown(model), refused)
    counts = normalize_node_names(proto.graph)  # by file position, as msit names them
    sort_nodes(proto.graph)
    check_every_input_is_made(proto.graph, model)
    shape_arg = parse_input_shape(input_shape)
    # a name no input has was dropped below with the arrays' names (golden_dump's input_shape)
    check_input_names(shape_arg or {}, [i.name for i in graph_inputs(proto)], "input_shape",
                      listed_initializers(proto))
    if inputs is not None:
        given = {k: tuple(np.asarray(v).shape) for k, v in inputs.items()}
        for name, shape in (shape_arg or {}).items():
            if name in given and tuple(given[name]) != tuple(shape):
                raise ConfigError("input_shape", f"input {name!r}: input_shape says {list(shape)}, "
                                                 f"the given array has {list(given[name])}")
        merged = dict(given)
        merged.update(shape_arg or {})
        names = {i.name for i in graph_inputs(proto)}
        shape_arg = {k: v for k, v in merged.items() if k in names} or None
        check_inputs(proto, inputs, where=f"inputs of {model_label(model)!r}")
    # the given arrays' shapes may hold a 0 (onnxruntime runs an empty input; the user's
    # input_shape, read above, may not: ATC refuses it)
    shapes = resolve_input_shapes(proto, shape_arg, require_static=require_static,
                                  empty_ok=inputs is not None, source=model)
    kept: list = []
    operators: list = []
    inlined = inline_ifs(proto, inputs, folder=folder, kept=kept, operators=operators)
    subgraph_ops = tuple((n.name, n.op_type) for n in proto.graph.node
                         if any(a.type in (5, 10) for a in n.attribute)  # GRAPH / GRAPHS
                         and n.name not in kept)
    report = GraphReport(
        unnamed_nodes=counts["unnamed"], renamed_duplicates=counts["renamed_duplicates"],
        inlined_ifs=tuple(inlined), kept_ifs=tuple(kept), operator_ifs=tuple(operators),
        subgraph_ops=subgraph_ops,
        input_shapes=tuple((k, tuple(int(d) if d is not None else -1 for d in v))
                           for k, v in shapes.items()))
    return PreparedModel(proto, report, folder)


def check_every_input_is_made(graph, model) -> None:
    """Refuse a node reading a tensor that is no graph input, no initializer and no node's
    output (a broken export: onnxruntime and ATC refuse the model too), naming the node and the
    tensor; the runs failed on it later with a bare ``KeyError: 'bn_b'``."""
    made = ({i.name for i in graph.input} | {i.name for i in graph.initializer}
            | {i.values.name for i in graph.sparse_initializer}
            | {o for n in graph.node for o in n.output if o})
    for node in graph.node:
        missing = [i for i in node.input if i and i not in made]
        if missing:
            raise ConfigError(_shown(model), f"node {node.name!r} ({node.op_type}) reads "
                                             f"{missing[0]!r}, which is no graph input, no "
                                             f"initializer and no node's output: the model is "
                                             f"broken (onnxruntime refuses to load it too); "
                                             f"export it again")


def _shown(model) -> str:
    """The model as a refusal names it: its path (relative to the working directory, where
    pytest ran, when it lies below it, and normalised: an upgrade trial read
    '/tmp/t48/proj/tests/../models/dup.onnx'), or its label."""
    import os

    if not isinstance(model, (str, os.PathLike)):
        return model_label(model)
    path = os.path.normpath(os.fspath(model))
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if relative.startswith(os.pardir) else relative


def sort_nodes(graph) -> bool:
    """Put ``graph``'s nodes in an order that runs (each after the producers of its inputs,
    those a subgraph reads from this scope included), keeping the file's order wherever it
    already does; True when it moved any. ONNX requires that order and onnxruntime sorts
    itself, but the dumps, and so "the first failure in graph order", follow the node list:
    a model with its nodes listed in reverse named an op after the one that went wrong."""
    nodes = list(graph.node)
    produced = {o: k for k, n in enumerate(nodes) for o in n.output if o}
    needs = [sorted({produced[i] for i in _read_names(n) if i in produced and produced[i] != k})
             for k, n in enumerate(nodes)]
    if all(d < k for k, deps in enumerate(needs) for d in deps):
        return False
    done, order = set(), []
    waiting = list(range(len(nodes)))
    while waiting:
        ready = [k for k in waiting if all(d in done for d in needs[k])]
        if not ready:  # a cycle: leave the rest as listed (onnxruntime refuses it anyway)
            order.extend(waiting)
            break
        first = ready[0]  # the earliest listed node that can run: the file's order kept
        order.append(first)
        done.add(first)
        waiting.remove(first)
    del graph.node[:]
    graph.node.extend(nodes[k] for k in order)
    return True


def _read_names(node):
    """The tensor names ``node`` reads: its inputs, and what its subgraphs read."""
    names = [i for i in node.input if i]
    for attr in node.attribute:
        for sub in ([attr.g] if attr.type == 5 else list(attr.graphs) if attr.type == 10 else []):
            for inner in sub.node:
                names.extend(_read_names(inner))
    return names
