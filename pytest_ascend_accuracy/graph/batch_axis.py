"""Which tensors of a model hold one value per sample along a batch axis: known from the model's
symbolic input dims, never guessed from a tensor's shape.

A one-element tensor is judged by its relative error (``compare.one_element``); a batch's
``[N, 1]`` of the same values was judged as an N-vector by its cosine, led by its largest value,
so a batch of two Smart Turn clips passed a probability that doubled (0.114 -> 0.221) where the
clip alone failed (audit 35). Judging ``[N, 1]`` per sample by its shape alone failed a seq-first
per-frame logit ``[50, 1, 1]`` of a batch-1 model at cosine 1.000000 (review RB): axis 0 there
holds frames. So a tensor's axis 0 is taken as the batch axis only where ONNX shape inference,
run on the model with its own symbolic input dims (before the run's shapes fix them), gives it
the same ``dim_param`` as axis 0 of a graph input that the run feeds with more than one value
along it, and that name says it is a batch (``BATCH_DIM``: ``batch``, ``batch_size``,
``Batch``, ``bs``; torch.onnx's ``dynamic_axes={"x": {0: "batch_size"}}``). A review (RP) found
names that say nothing wrong either way: a per-frame detector's ``s0`` (torch.export), a per-box
scorer's ``N`` or ``num_boxes``, tf2onnx's ``unk__12`` each failed frames or boxes near 0 at
cosine 1.000000 when taken as samples; so those are not batches here, and Smart Turn's
``input_features [s6, 80, 800]`` (torch.export) is not either: its batch of two clips is judged
as a whole, as before (README). Where it cannot be known (a model whose batch is a fixed
number, an unnamed or otherwise named dim, shape inference failing, a golden read from files),
nothing is batched: each tensor is judged as a whole. ``batched_outputs`` gives the golden's
``meta["batch_axis"]``; ``compare.batch_samples`` judges those tensors sample by sample.
"""
from __future__ import annotations

import re
from typing import Dict, Mapping, Tuple

import numpy as np

#: names of a symbolic dim that say it holds samples (module docstring)
BATCH_DIM = re.compile(r"batch|^bs$", re.IGNORECASE)

_MEMO: Dict[Tuple[str, Tuple], Dict[str, object]] = {}


def _dims(value_info):
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_param if d.HasField("dim_param") else
            (int(d.dim_value) if d.HasField("dim_value") else None) for d in t.shape.dim]


def batch_dims(graph, shapes: Mapping[str, Tuple[int, ...]]) -> Dict[str, int]:
    """``{dim_param: N}`` of the symbolic dims at axis 0 of ``graph``'s inputs that the run
    feeds (``shapes``: input name -> fed shape) with ``N > 1`` along it (module docstring)."""
    weights = {t.name for t in graph.initializer}
    found: Dict[str, int] = {}
    for vi in graph.input:
        dims = _dims(vi)
        if vi.name in weights or not dims:
            continue
        first, fed = dims[0], shapes.get(vi.name)  # (a state input [2, batch, 128] has none)
        if not isinstance(first, str) or not BATCH_DIM.search(first) or not fed:
            continue
        n = int(fed[0])
        if found.get(first, n) != n:  # one name fed two sizes: not one axis
            return {}
        if n > 1:
            found[first] = n
    return found


def batched_outputs(model, inputs: Mapping[str, object]) -> Dict[str, object]:
    """``{"dims": {dim_param: N}, "outputs": {"node:output:k": dim_param}}`` for the node
    outputs of ``model`` (nodes named as ``op_catalogue.model_ops`` names them) whose axis 0 is
    a batch axis fed with ``N > 1`` (``batch_dims``) and whose other axes are 1 or unknown (one
    value per sample, once the run's shapes say so); ``{}`` where none is known (module
    docstring). Shape inference runs only where an input's batch axis is fed with ``N > 1``."""
    shapes = {str(k): tuple(int(d) for d in np.shape(v)) for k, v in inputs.items()}
    try:
        from .content_digests import model_digest

        key = (model_digest(model), tuple(sorted(shapes.items())))
    except Exception:  # (nothing batched is what a model it cannot read gets)
        return {}
    if key not in _MEMO:
        try:
            _MEMO[key] = _batched(model, shapes)
        except Exception:  # a model shape inference refuses: nothing known, judged as before
            _MEMO[key] = {}
    return _MEMO[key]


def _batched(model, shapes) -> Dict[str, object]:
    from .names import normalize_node_names
    from .onnx_graph import load_model
    from .onnxruntime_version import require_onnx

    proto = load_model(model, weights=False)
    dims = batch_dims(proto.graph, shapes)
    if not dims:
        return {}
    normalize_node_names(proto.graph)  # the golden's op names (``model_ops``)
    inferred = require_onnx().shape_inference.infer_shapes(proto)
    axis0 = {}
    for vi in (*inferred.graph.value_info, *inferred.graph.output):
        d = _dims(vi)
        if d and d[0] in dims and all(x == 1 or x is None or isinstance(x, str) and x not in dims
                                      for x in d[1:]):
            axis0[vi.name] = d[0]
    outputs = {f"{node.name}:output:{k}": axis0[o] for node in proto.graph.node
               for k, o in enumerate(node.output) if o in axis0}
    return {"dims": dims, "outputs": outputs} if outputs else {}


__all__ = ["BATCH_DIM", "batch_dims", "batched_outputs"]
