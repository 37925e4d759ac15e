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
each TopK of the model's main graph fed by another node's output gets that output as a fed
``input:0`` (``OpRecord.fed_inputs``: the file the cache entry would reference). A fed input is
no input the golden holds: whatever asks whether a golden holds inputs (the graph's edges read
from its operand files, ``--accuracy-store-inputs``' warning, ``compare --inputs``) sees none,
as before. Nothing is written. A TopK fed by a graph input, or inside the branch of an If
not inlined by preparing the model, gets nothing: its row is compared as it was.
"""
from __future__ import annotations

import threading
from dataclasses import replace
from typing import Dict, Optional, Tuple

#: {model content digest: ``_topk_feeds`` of it}: a golden is read once per test that uses it
_FEEDS: Dict[str, Dict[str, Tuple[str, int]]] = {}
_LOCK = threading.Lock()


def with_topk_inputs(golden, model) -> object:
    """``golden`` (a DumpSet read from a stored golden) with ``input:0`` fed to each TopK that
    has none: the golden output of the op feeding it in ``model`` (the ONNX model the golden ran,
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
        held = any(t.slot == "input:0" for t in (*op.inputs, *op.fed_inputs))
        ref = None if feed is None or held else _output(by_real.get(feed[0]), feed[1])
        if ref is not None:
            fed = replace(ref, kind="input", index=0, origin=None)
            op = replace(op, fed_inputs=(*op.fed_inputs, fed))
            changed = True
        out.append(op)
    if not changed:
        return golden
    return DumpSet(out, kind=golden.kind, root=golden.root, model_name=golden.model_name,
                   meta=dict(golden.meta))


def _topk_feeds(model) -> Dict[str, Tuple[str, int]]:
    """``{TopK node name: (name of the node whose output it ranks, that output's index)}`` of
    the model's main graph, its nodes named as the golden run names them
    (``compare.fp16_range.ModelEdges``, the edges the hints read); {} where the model cannot be
    read. Remembered by the model's content digest (a 50 MB model's parse took 0.13 s at every
    read of its golden)."""
    from ..compare.fp16_range import ModelEdges
    from ..graph.content_digests import model_digest

    try:
        digest = model_digest(model)
    except Exception:  # noqa: BLE001 -- a model gone or unreadable: nothing to look up
        return {}
    with _LOCK:
        known = _FEEDS.get(digest)
    if known is not None:
        return known
    inputs, producers, _, types = ModelEdges(model).edges()  # (all empty: unreadable)
    feeds = {name: producers[tensors[0]] for name, tensors in inputs.items()
             if types.get(name) == "TopK" and tensors and tensors[0] in producers}
    with _LOCK:
        _FEEDS[digest] = feeds
    return feeds


def _output(op, index: int) -> Optional[object]:
    """``op``'s output ``index`` (a TensorRef), or None."""
    if op is None:
        return None
    return next((t for t in op.outputs if t.index == index), None)
