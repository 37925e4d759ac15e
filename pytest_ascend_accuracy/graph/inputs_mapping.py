"""A model's inputs given as anything but ``{input name: array}`` (a bare array, a list) are
refused naming the model's inputs as the mapping to give (``input_names.require_mapping``),
the model read (without weights) only then: for callers that hold the model, not its inputs.
Its own module: ``onnx_graph`` imports ``input_names``, so this cannot live there.
"""
from __future__ import annotations

from .input_names import require_mapping
from .onnx_graph import graph_inputs, load_model


def require_inputs_mapping(model, inputs, where: str) -> None:
    """Refuse ``inputs`` of ``model`` that are not a mapping, naming ``model``'s inputs."""
    def names():
        return [i.name for i in graph_inputs(load_model(model, weights=False))]

    require_mapping(inputs, names, where)


__all__ = ["require_inputs_mapping"]
