"""The shape a YAML entry's accuracy item converts at, where its ``dataset:`` samples give the
sizes its model leaves open and nothing else does.

An entry with ``dataset:`` has an accuracy item beside its dataset item. Audit 33 (PP-OCRv6
rec, ``x [N, 3, 48, W]``): an entry of only ``model:`` and ``dataset:`` failed its accuracy item
with "nothing gives their sizes", though every sample holds them, and its advice, 1 for each
open dimension, pasted checked a text line 1 pixel wide, which the model is never fed. Where the
entry gives no ``inputs:`` files, no ``inputs.shapes`` or ``input_shape:`` for an open input,
and no AIPP file (whose raw images size it their own way), the open inputs take the first
sample's shapes; its seeded values are drawn at those shapes, as ``inputs: {seed: 0}`` draws.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple


def first_sample_shape(model, dataset: Optional[dict], input_shape, inputs,
                       aipp) -> Optional[Dict[str, Tuple[int, ...]]]:
    """``input_shape`` with the open inputs of ``model`` sized by the first sample of
    ``dataset`` (``yaml_dataset``'s keywords), or ``input_shape`` unchanged where the module
    doc's conditions do not hold or the first sample does not name them."""
    from ..graph.shape_from_inputs import left_dynamic

    if dataset is None or aipp is not None or getattr(inputs, "files", None):
        return input_shape
    open_inputs = left_dynamic(getattr(model, "path", model), input_shape)  # (an EntryModel)
    if not open_inputs:
        return input_shape
    from ..dataset.samples import SampleSource
    from ..errors import AscendAccuracyError

    try:  # at collection: a bad sample fails the dataset item when it runs, not the whole file
        first = next(iter(SampleSource(str(dataset["samples"]))), None)
    except (AscendAccuracyError, OSError, ValueError):  # (a review)
        return input_shape
    if first is None or not all(n in first.inputs for n in open_inputs):
        return input_shape
    return {**(input_shape or {}),
            **{n: tuple(int(d) for d in first.inputs[n].shape) for n in open_inputs}}


__all__ = ["first_sample_shape"]
