"""Inline the taken branch of ``If`` nodes whose condition can be computed.

Golden dumps (and the emulator) only see main-graph tensors, so an ``If`` hides everything its
branch computes. When the condition is known (from the given inputs, or without inputs when it
is static: constants and static shapes only) the ``If`` node is replaced by the nodes of the
taken branch, in place:

- tensors produced inside the branch keep their names unless they clash with a main-graph
  name, then they get a ``__{if name}`` suffix (made unique);
- the branch's outputs take the ``If`` node's output names (an ``Identity`` named
  ``{if name}/output_{k}`` bridges a branch output that is an outer tensor);
- unnamed branch nodes are named ``{if name}/{then|else}/{op_type}_{j}``; names that clash with
  existing ones get ``_{k}`` (main-graph names never change, so golden and emulator agree);
- nested ``If`` nodes brought up by inlining are handled in the next round.

An ``If`` whose condition is known only from the given inputs (the golden's run; ATC and the
emulator convert without inputs, so their ``If`` stays one operator) is inlined *and kept*: the
taken branch's nodes come before it under their own names, and the ``If`` itself stays, its
branches reduced to ``Identity`` nodes of the inlined outputs, so its outputs keep the ``If``'s
name and inputs, as the device's dump of the ``If`` operator has them (``keep_if``); the
branch's tensors are golden tensors of their own. With inputs, what a conversion without them
inlines is inlined first, so every ``If`` left is one the device runs as an operator, and each
is kept: an ``If`` whose condition reads the shape of a kept one looks static once that one is
reduced, yet the device, which never reduced it, runs it as an operator.

``Loop`` and ``Scan`` are never touched (their bodies run a data-dependent number of times).
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Set, Tuple

import numpy as np

from .names import unique_name

MAX_ROUNDS = 16


def inline_ifs(model, inputs: Optional[Mapping[str, np.ndarray]] = None, *,
               folder: Optional[str] = None, kept: Optional[List[str]] = None,
               operators: Optional[List[str]] = None) -> List[Tuple[str, str]]:
    """Inline every ``If`` of the main graph whose condition is computable; returns
    ``[(if node name, "then"|"else"), ...]`` in the order they were inlined (``folder``: where
    the model's external-data weights are, ``graph.external``). The names of the ``If`` nodes
    whose condition needed ``inputs``, inlined and kept (module docstring), are appended to
    ``kept``; with ``inputs``, the names of the ``If`` nodes a conversion without them runs as
    operators (those left once it has inlined what it does) to ``operators``."""
    from ..errors import ConversionError
    from .onnx_graph import tensor_info
    from .static import evaluate, static_tensors

    # first what a conversion without inputs inlines (ATC, the emulator), so the graph is theirs;
    # every If left then is an operator of theirs, kept (H110: silero_vad_half's nested Ifs read
    # the shape of an If kept for its inputs, which once reduced looked static to the next round:
    # they were inlined away, and the device's If operators had no golden tensor)
    done: List[Tuple[str, str]] = [] if inputs is None else inline_ifs(model, folder=folder)
    if inputs is not None and operators is not None:
        operators.extend(n.name for n in model.graph.node
                         if n.op_type == "If" and n.domain in ("", "ai.onnx"))
    kept_ids: Set[str] = set()
    for _ in range(MAX_ROUNDS):
        ifs = [n for n in model.graph.node if n.op_type == "If" and n.domain in ("", "ai.onnx")
               and n.name not in kept_ids]
        if not ifs:
            break
        conds = [n.input[0] for n in ifs]
        if inputs is None:
            static = static_tensors(model, tensor_info(model))
            conds = [c for c in conds if c in static]
        if not conds:
            break
        try:
            values = evaluate(model, conds, inputs, folder=folder)
        except ConversionError:
            break  # conditions not computable here (e.g. dynamic shapes without inputs)
        changed = False
        for node in ifs:
            if node.input[0] not in values:
                continue
            taken = "then" if bool(np.asarray(values[node.input[0]]).reshape(-1)[0]) else "else"
            keep = inputs is not None  # known from the inputs alone: the If stays
            _inline_one(model.graph, node, taken, keep_if=keep)
            done.append((node.name, taken))
            if keep:
                kept_ids.add(node.name)
                if kept is not None:
                    kept.append(node.name)
            changed = True
        if not changed:
            break
    return done


def _inline_one(graph, if_node, taken: str, keep_if: bool = False) -> None:
    """Replace ``if_node`` by its ``taken`` branch's nodes; ``keep_if``: put them before it
    and keep it, reading their outputs (module docstring)."""
    import onnx

    branch = next(a.g for a in if_node.attribute if a.name == f"{taken}_branch")
    body = onnx.GraphProto()
    body.CopyFrom(branch)

    outer_names: Set[str] = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    outer_names |= {o for n in graph.node for o in n.output} | {v.name for v in graph.value_info}
    node_names: Set[str] = {n.name for n in graph.node}

    produced = [t.name for t in body.initializer] + [o for n in body.node for o in n.output if o]
    rename: Dict[str, str] = {}
    used = set(outer_names) | set(produced)
    for name in produced:
        if name in outer_names and name not in rename:
            rename[name] = unique_name(f"{name}__{if_node.name}", used)
    # branch outputs take the If's output names when the branch itself produces them
    bridges = []
    claimed: Set[str] = set()
    produced_set = set(produced)
    for k, (bout, iout) in enumerate(zip(body.output, if_node.output)):
        if not iout or keep_if:  # a kept If reads the branch's outputs under their own names
            continue
        if bout.name in produced_set and bout.name not in claimed:
            rename[bout.name] = iout
            claimed.add(bout.name)
        else:  # an outer tensor, or the same tensor as an earlier output
            bridges.append((k, bout.name, iout))
    for t in body.initializer:
        t.name = rename.get(t.name, t.name)
    for j, node in enumerate(body.node):
        if not node.name:
            node.name = f"{if_node.name}/{taken}/{node.op_type}_{j}"
        _rename_io(node, rename)
    for k, src, iout in bridges:
        body.node.append(onnx.helper.make_node("Identity", [rename.get(src, src)], [iout],
                                               name=f"{if_node.name}/output_{k}"))
    for node in body.node:
        if node.name in node_names:
            node.name = unique_name(node.name, node_names)
        node_names.add(node.name)

    position = list(graph.node).index(if_node)
    after = list(graph.node[position + 1:])
    if keep_if:
        _reduce_branches(if_node, [rename.get(b.name, b.name) for b in body.output], body.output,
                         used)
        after.insert(0, if_node)
    new_nodes = list(graph.node[:position]) + list(body.node) + after
    del graph.node[:]
    graph.node.extend(new_nodes)
    graph.initializer.extend(body.initializer)
    for vi in body.value_info:
        vi.name = rename.get(vi.name, vi.name)
        graph.value_info.append(vi)


def _reduce_branches(if_node, sources: List[str], outputs, used: Set[str]) -> None:
    """Make both branches of ``if_node`` return ``sources`` (outer tensors) through
    ``Identity`` nodes: the kept ``If`` of an inlined branch (``keep_if``)."""
    import onnx

    for attr in if_node.attribute:
        if attr.name not in ("then_branch", "else_branch"):
            continue
        side = attr.name.partition("_")[0]
        names = []
        for k in range(len(sources)):
            base = f"{if_node.name}/{side}/out_{k}"
            names.append(base if base not in used else unique_name(base, used))
            used.add(names[-1])
        g = onnx.GraphProto(name=attr.g.name or f"{if_node.name}_{side}")
        g.node.extend(onnx.helper.make_node("Identity", [src], [dst])
                      for src, dst in zip(sources, names))
        for vi, dst in zip(outputs, names):
            out = g.output.add()
            out.CopyFrom(vi)
            out.name = dst
        attr.g.CopyFrom(g)


def _rename_io(node, rename: Mapping[str, str]) -> None:
    for i, name in enumerate(node.input):
        if name in rename:
            node.input[i] = rename[name]
    for i, name in enumerate(node.output):
        if name in rename:
            node.output[i] = rename[name]
    for attr in node.attribute:  # outer-scope references inside nested subgraphs
        for g in ([attr.g] if attr.type == 5 else list(attr.graphs) if attr.type == 10 else []):
            inner = {o for n in g.node for o in n.output} | {t.name for t in g.initializer} | {
                i.name for i in g.input}
            sub = {k: v for k, v in rename.items() if k not in inner}
            for n in g.node:
                _rename_inputs_only(n, sub)


def _rename_inputs_only(node, rename: Mapping[str, str]) -> None:
    for i, name in enumerate(node.input):
        if name in rename:
            node.input[i] = rename[name]
    for attr in node.attribute:
        for g in ([attr.g] if attr.type == 5 else list(attr.graphs) if attr.type == 10 else []):
            inner = {o for n in g.node for o in n.output} | {t.name for t in g.initializer}
            sub = {k: v for k, v in rename.items() if k not in inner}
            for n in g.node:
                _rename_inputs_only(n, sub)
