"""The input shape a conversion takes from the inputs it will run on, as the golden does.

``golden_dump(model, inputs)`` runs onnxruntime at the arrays' shapes; ATC converts one static
shape (``--input_shape``), so a model with dynamic dimensions converts per shape. Where the
inputs are known before the conversion (``ascend_model(m).run(inputs)``, a YAML entry's
``.npy`` files) the dimensions left dynamic take the arrays' sizes; a model whose inputs are
all static (or that ``input_shape`` fixes) converts as it did, its cache key unchanged.
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Tuple

import numpy as np

from .onnx_graph import declared_shape, graph_inputs, load_model, parse_input_shape


#: model digest -> the names of its tensor inputs with a dimension it leaves open, in order
_OPEN: Dict[str, Tuple[str, ...]] = {}


def left_dynamic(model, input_shape=None) -> List[str]:
    """The tensor inputs of ``model`` with a dimension (or their whole shape) that neither the
    model nor ``input_shape`` fixes, in input order. The model is read once per content (every
    ``ascend_model`` call and every run of a shape-deferred one asks)."""
    given = parse_input_shape(input_shape) or {}
    return [n for n in _open_inputs(model) if n not in given]


def _open_inputs(model) -> Tuple[str, ...]:
    from .content_digests import model_digest

    digest = model_digest(model)
    hit = _OPEN.get(digest)
    if hit is None:
        hit = tuple(vi.name for vi in graph_inputs(load_model(model, weights=False))
                    if vi.type.WhichOneof("value") == "tensor_type"
                    and (not vi.type.tensor_type.HasField("shape") or None in declared_shape(vi)))
        if len(_OPEN) > 64:
            _OPEN.clear()
        _OPEN[digest] = hit
    return hit


def shape_from_inputs(model, input_shape, inputs: Mapping[str, object],
                      ) -> Optional[Dict[str, Tuple[int, ...]]]:
    """``input_shape`` plus, for each input left dynamic that ``inputs`` holds, its array's
    shape; ``input_shape`` as given when nothing is left dynamic (or no array helps). An array
    that does not fit the model is not judged here: running it says what is wrong."""
    dynamic = left_dynamic(model, input_shape)
    taken = {n: tuple(int(d) for d in np.shape(inputs[n])) for n in dynamic if n in inputs}
    if not taken:
        return input_shape
    return {**(parse_input_shape(input_shape) or {}), **taken}
