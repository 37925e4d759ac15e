"""A stored golden of op outputs only gives each TopK the values it ranked.

A TopK's indices that differ from the golden's are judged against the values it ranked
(``compare.topk_near_ties``): near ties the device's own error reorders are no device error.
The golden run's cache entry holds each op's inputs, as references to the outputs feeding them;
a stored golden (``golden_dump(path=...)``) holds op outputs only, unless written with
``--accuracy-store-inputs``. So one device run of a detector passed against the cache and
failed against a stored golden of the same model and inputs, at its TopK: "78 of 100 values
differ (int64 values are compared exactly)" where the cache's compare said they reorder near
ties (T2's Faster R-CNN: /rpn/TopK). The values a TopK ranked are the output of the op feeding
it, which the stored golden holds: where its record names the model, still there unchanged,
each TopK of the model's main graph gets that output as its ``input:0``, the file the cache
entry would reference. Nothing else changes: no other op gets inputs, no file is written.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, Optional, Tuple


def with_topk_inputs(golden, model) -> object:
    """``golden`` (a DumpSet read from a stored golden) with ``input:0`` of each TopK that lacks
    it: the golden output of the op feeding it in ``model`` (the ONNX model the golden ran,
    ``stored_record.recorded_model``); ``golden`` itself where ``model`` is None, has no TopK,
    or cannot be read."""
    if model is None:
        return golden
    from ..dump.model import DumpSet
    from ..graph.op_catalogue import model_ops

    try:
        ops = model_ops(model)  # (cached by the model's content: read once a session)
    except Exception:  # noqa: BLE001 -- a model that cannot be read feeds nothing
        return golden
    if "TopK" not in ops.types:
        return golden
    feeds = _topk_feeds(model)
    by_real = {ops.real_name(op.name): op for op in golden.ops}
    changed, out = False, []
    for op in golden.ops:
        feed = feeds.get(ops.real_name(op.name))
        ref = None if feed is None or any(t.slot == "input:0" for t in op.inputs) else \
            _output(by_real.get(feed[0]), feed[1])
        if ref is not None:
            op = replace(op, inputs=(replace(ref, kind="input", index=0, origin=None),
                                     *op.inputs))
            changed = True
        out.append(op)
    if not changed:
        return golden
    return DumpSet(out, kind=golden.kind, root=golden.root, model_name=golden.model_name,
                   meta=dict(golden.meta))


def _topk_feeds(model) -> Dict[str, Tuple[str, int]]:
    """``{TopK node name: (name of the node whose output it ranks, that output's index)}`` of
    the model's main graph, its nodes named as the golden run names them; {} where the model
    cannot be read."""
    from ..graph.names import normalize_node_names
    from ..graph.onnx_graph import load_model

    try:
        proto = load_model(model, weights=False)
    except Exception:  # noqa: BLE001 -- a model gone or unreadable: nothing to look up
        return {}
    graph = proto.graph  # (a private copy: named in place)
    normalize_node_names(graph)
    made = {o: (n.name, k) for n in graph.node for k, o in enumerate(n.output) if o}
    return {n.name: made[n.input[0]] for n in graph.node
            if n.op_type == "TopK" and n.input and n.input[0] in made}


def _output(op, index: int) -> Optional[object]:
    """``op``'s output ``index`` (a TensorRef), or None."""
    if op is None:
        return None
    return next((t for t in op.outputs if t.index == index), None)
