"""The input shape of a YAML entry with ``aipp:``, as ``ascend_model(m, aipp=cfg)`` takes it.

The AIPP file fixes its input's C x H x W (``aipp.shape_from_file``: the image after AIPP)
and each run's images give the batch (``aipp_placeholders``: the model input AIPP makes of
them). A YAML entry of a model declared ``[-1, 3, ?, ?]`` (the PP-OCR cls model) converted with
the file's sizes only when ``input_shape:`` gave all four, and its advice
(``input_shape: {x: [1, 3, 1, 1]}``) failed pasted: the AIPP output is 16 x 16. Seeded inputs
have no images to take the batch from: their advice is the file's sizes with 1 for the batch,
which pasted converts. Used by ``yaml_suite`` only.
"""
from __future__ import annotations

from typing import Callable, Mapping, Optional


def entry_shape(case, arrays: Optional[Mapping[str, object]] = None):
    """``case.input_shape`` completed from its AIPP file and, for the dimensions neither fixes
    (the batch), from the raw images in ``arrays``; without ``arrays`` the dynamic-shape
    error (``DynamicShapeError``) whose example is the file's sizes."""
    from ..aipp import read_aipp_config
    from ..aipp.shape_from_file import aipp_input_shape, aipp_placeholders
    from ..graph.onnx_graph import load_model
    from ..graph.shape_advice import DynamicShapeError
    from ..graph.shape_from_inputs import shape_from_inputs

    config = read_aipp_config(case.aipp)
    try:
        return aipp_input_shape(config, case.model, case.input_shape)
    except DynamicShapeError:
        if arrays is None:
            raise
    placeholders = aipp_placeholders(config, load_model(case.model, weights=False), arrays)
    return shape_from_inputs(case.model, case.input_shape, placeholders)


def dataset_handle(convert, case, where: str, show: Optional[Callable[[object], str]] = None):
    """A dataset item's model: converted per sample shape where the model has a dimension
    left open (an AIPP entry's batch: each sample's images), as ``ascend_model(m)`` converts
    it, whatever shape ``input_shape:`` or ``inputs.shapes`` give the entry's accuracy item:
    converted at that one shape, a batch-2 sample was refused, and the entry's only fix
    (dropping ``input_shape:``) failed its accuracy item (dimension 'N' is dynamic). A model
    with every dimension fixed converts now. ``show``: a path as messages print it (the model
    file an empty sample's refusal names)."""
    from .shape_deferred_model import deferred_model

    config = None
    if case.aipp is not None:
        from ..aipp import read_aipp_config

        config = read_aipp_config(case.aipp)
    handle = deferred_model(convert, case.model, case.mode, keep_dtype=None, input_shape=None,
                            atc_options=None, where=where, aipp=config,
                            shown=show(case.model) if show is not None else None)
    if handle is not None:
        return handle
    if config is None:
        return convert(case.input_shape)
    from ..aipp.shape_from_file import aipp_input_shape

    return convert(aipp_input_shape(config, case.model, case.input_shape))
