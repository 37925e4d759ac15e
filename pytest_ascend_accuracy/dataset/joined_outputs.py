"""Outputs a model makes by joining values of several kinds: a detector's head.

Ultralytics' YOLOv8 exports (NudeNet's ``320n.onnx``: ``output0`` ``[1, 22, 2100]``) concatenate
the decoded boxes (``Mul`` by the strides) and the class scores (``Sigmoid``) along axis 1. Read
as class scores, class axis last, that is 22 positions of 2100 "classes": ``agreement`` took
the argmax over the 2100 anchors of each channel -- which anchor holds the largest box x -- a
near tie float16 rounding tips, and failed 8 of 8 real photos at 0.0000 against 1.0000 where
``map`` on the same runs gave 1.0 against 1.0 (audit 34). An output whose last op, seen through
ops that move values only, is a Concat joining scores (Sigmoid, Softmax) with other values
(seen through such ops, Split, Slice and nested Concats) is named here, and the built-in class
metrics refuse it. A Concat of scores alone (a recognizer's chunks along time) or of other
values alone (two heads' logits) stays a score tensor.
"""
from __future__ import annotations

from typing import Dict, Optional, Set

from ..errors import ConfigError

#: ops that move or select values without computing new ones
_MOVERS = frozenset({"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Identity", "Flatten",
                     "Cast", "Split", "Slice", "Gather", "Expand"})
#: ops whose outputs are scores
_SCORES = frozenset({"Sigmoid", "Softmax", "LogSoftmax", "HardSigmoid"})


def joined_outputs(graph) -> Dict[str, str]:
    """``{output: "Concat 'name' of Sigmoid scores and Mul values"}`` of ``graph``'s outputs
    made so (module docstring)."""
    producer = {out: node for node in graph.node for out in node.output if out}
    producer.update({t.name: None for t in graph.initializer})  # (constants: no producer op)
    found = {}
    for out in graph.output:
        node = _past_movers(producer, out.name)
        if node is None or node.op_type != "Concat":
            continue
        kinds: Set[str] = set()
        _leaf_types(producer, node, kinds, set())
        scores = sorted(kinds & _SCORES)
        others = sorted(kinds - _SCORES)
        if scores and others:
            name = f"Concat {node.name!r}" if node.name else "an unnamed Concat"
            found[out.name] = (f"{name} of {', '.join(scores)} scores and "
                               f"{', '.join(others)} values")
    return found


def _past_movers(producer, tensor: str):
    node = producer.get(tensor)
    seen = 0
    while node is not None and node.op_type in _MOVERS and node.input and seen < 64:
        node, seen = producer.get(node.input[0]), seen + 1
    return node


def _leaf_types(producer, concat, kinds: Set[str], seen: Set[int]) -> None:
    """The kinds of the ops computing ``concat``'s inputs, past movers and nested Concats (a
    walk, not a recursion: a model of a thousand chained Concats raised RecursionError, a
    review), each node once by identity (unnamed Concats all named ''). ``1 - p`` is a score
    (``_complement_of``)."""
    todo = [concat]
    while todo:
        for tensor in todo.pop().input:
            node = _past_movers(producer, tensor)
            if node is None or node.op_type in ("Constant", "ConstantOfShape"):
                continue  # (a constant or a graph input joined on: no kind of its own)
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.op_type == "Concat":
                todo.append(node)
            elif node.op_type in _SCORES:
                kinds.add(node.op_type)
            else:
                kinds.add(_complement_of(producer, node) or node.op_type)


def _complement_of(producer, node) -> str:
    """The score type ``node`` complements, ``Sub(1, p)`` (a binary classifier's ``1 - p``
    beside ``p``, a review), else "": a score scaled or shifted otherwise (YOLOv5's boxes,
    ``Sigmoid(t) * 2 - 0.5`` times a stride) is a value, not a score."""
    first = producer.get(node.input[0], "input") if len(node.input) == 2 else "input"
    if node.op_type != "Sub" or not (first is None or getattr(first, "op_type", "") in (
            "Constant", "ConstantOfShape")):
        return ""  # (1 - p: a constant first, not a graph input, a final review)
    made = _past_movers(producer, node.input[1])
    return made.op_type if made is not None and made.op_type in _SCORES else ""


def refuse_joined(metric, output: Optional[str], joined: Optional[str]) -> None:
    """A ``ConfigError`` where a built-in class metric (``top1``, ``top5``, ``agreement``) would
    read ``output``, which ``joined`` (``joined_outputs``' text) says joins scores with other
    values; nothing otherwise."""
    if not joined or not isinstance(metric, str) or metric not in ("top1", "top5", "agreement"):
        return
    raise ConfigError("metric", (
        f"metric {metric} reads output {output!r} as class scores, but the model makes it by "
        f"joining values of several kinds ({joined}): a detector's boxes beside its class "
        f"scores (Ultralytics' [N, 4 + classes, anchors])? Its argmax would compare which "
        f"anchor holds the largest box coordinate, a near tie float16 rounding tips; score a "
        f"detector with the map metric and a postprocess function giving its boxes, scores and "
        f"classes, or with a metric function of your own"))


__all__ = ["joined_outputs", "refuse_joined"]
