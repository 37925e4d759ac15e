"""One conversion per input shape, for a model with dimensions no ``input_shape`` fixes: ATC
converts one static shape (``--input_shape``), so each shape the inputs of a run have is its own
conversion. ``PerShape`` keys them by the shape ``graph.shape_from_inputs`` takes from the
arrays (the dimensions ``given`` fixes kept), makes each once (``make(shape)``) and remembers
the latest. Shared by ``ascend_model(m)``'s deferred handle (plugin) and
``dataset.load_device_model``."""
from __future__ import annotations

from typing import Callable, Dict, Mapping, Optional


class PerShape:
    """``get(arrays, where)``: the value ``make(shape)`` made for the shape of ``arrays``."""

    def __init__(self, model, given: Optional[Mapping], make: Callable[[dict], object]):
        self.model, self.given, self._make = model, given, make
        self._by_shape: Dict[tuple, object] = {}
        self._proto = None
        self.latest = None  # the value of the last ``get``

    @property
    def proto(self):
        """The model's graph without weights, read once (a dataset check gets per sample)."""
        if self._proto is None:
            from .onnx_graph import load_model

            self._proto = load_model(self.model, weights=False)
        return self._proto

    def get(self, arrays, where: str):
        from .onnx_graph import check_inputs
        from .shape_from_inputs import shape_from_inputs

        # a missing or misshapen array is said as such, not as a dimension left open
        check_inputs(self.proto, arrays, where=where)
        shape = shape_from_inputs(self.model, self.given, arrays) or {}
        key = tuple(sorted((k, tuple(v)) for k, v in shape.items()))
        if key not in self._by_shape:
            self._by_shape[key] = self._make(shape)
        self.latest = self._by_shape[key]
        return self.latest

    def values(self):
        """Every value made, one per shape."""
        return list(self._by_shape.values())


__all__ = ["PerShape"]
