"""The input shape a YAML entry without an AIPP file converts at (an AIPP entry's is
``yaml_aipp_shape.entry_shape``): its ``input_shape:``, and where the model leaves a size
open, its arrays' (``graph.shape_from_inputs``), as ``ascend_model(m).run(inputs)`` takes it.
An empty array is refused naming the entry's ``.npy`` file and the model file
(``graph.per_shape.refuse_empty_taken``), as a Python test's is."""
from __future__ import annotations

from typing import Callable, Mapping


def shape_from_entry_arrays(case, arrays: Mapping[str, object], where: str,
                            show: Callable[[object], str]):
    """``case`` (a ``SuiteCase``): its input shape, the arrays its inputs read (``arrays``)
    giving the sizes the model leaves open; ``show``: a path as messages print it."""
    from ..graph.per_shape import refuse_empty_taken
    from ..graph.shape_from_inputs import left_dynamic, shape_from_inputs

    shape = shape_from_inputs(case.model, case.input_shape, arrays)
    files = dict(case.inputs.files)
    refuse_empty_taken(case.model, shape, left_dynamic(case.model, case.input_shape), where,
                       shown=show(case.model), origin=lambda name: (
                           f"the array of the entry's inputs ({show(files[name])})"
                           if name in files else "the array of the entry's inputs"))
    return shape


__all__ = ["shape_from_entry_arrays"]
