"""One conversion per input shape, for a model with dimensions no ``input_shape`` fixes: ATC
converts one static shape (``--input_shape``), so each shape the inputs of a run have is its own
conversion. ``PerShape`` keys them by the shape ``graph.shape_from_inputs`` takes from the
arrays (the dimensions ``given`` fixes kept), makes each once (``make(shape)``) and remembers
the latest. Shared by ``ascend_model(m)``'s deferred handle (plugin) and
``dataset.load_device_model``.

An array with a size 0 where the model leaves the size open (a declared 0 reads as open,
``declared_shape``) is refused before its conversion, naming the array as its caller says where
it came from (``refuse_empty_taken``): the conversion's own refusal named ``input_shape``, a
setting nobody gave, and no model (an audit's ``test_reduce_sum_empty_set``; the
``ascend-accuracy dataset`` command said the same of an empty sample).
"""
from __future__ import annotations

import os
from typing import Callable, Dict, Iterable, List, Mapping, Optional

from ..errors import ConfigError

#: where an array came from, as a refusal names it, by input name (``refuse_empty_taken``)
Origin = Callable[[str], str]


def _any_array(_name: str) -> str:
    return "the array given for it"


class EmptyInputError(ConfigError):
    """An input of a model has an array of size 0 where the conversion takes its shape from
    it; ``retold(where, origin)``: the same refusal, its array named ``origin`` (a dataset
    check names the sample, which the model it runs does not know)."""

    def __init__(self, where: Optional[str], name: str, dims: List[int], of: str,
                 declared: str, origin: str):
        self.input_name, self.dims, self.of, self.declared = name, dims, of, declared
        from .input_shape_parse import EMPTY_INPUT_ADVICE
        from .shape_advice import ATC_POSITIVE_DIMS

        super().__init__(where, f"input {name!r} of {of} is empty: {origin} has shape {dims}"
                                f"{declared}, and the conversion takes that shape; "
                                f"{ATC_POSITIVE_DIMS}, {EMPTY_INPUT_ADVICE}")

    def retold(self, where: Optional[str], origin: str) -> "EmptyInputError":
        return EmptyInputError(where, self.input_name, self.dims, self.of, self.declared, origin)


def refuse_empty_taken(model, shape: Optional[Mapping], taken: Iterable[str], where: str, *,
                       shown: Optional[str] = None, origin: Optional[Origin] = None,
                       proto=None) -> None:
    """An ``EmptyInputError`` where an input of ``taken`` (those whose size the arrays give)
    has a size 0 in ``shape``: said as the array's shape (``origin(name)``: where the array
    came from, "the array run() was given for it", a YAML entry's ``.npy``), with what the
    model (``shown``: its file as messages name it; a path's own spelling by default)
    declares. ``proto``: the model's graph, where the caller read it already."""
    from .onnx_graph import declared_text, graph_inputs, load_model

    empty = [n for n in taken if 0 in tuple((shape or {}).get(n, ()))]
    if not empty:
        return
    name, dims = empty[0], [int(d) for d in shape[empty[0]]]
    is_file = isinstance(model, (str, os.PathLike))
    of = shown or (os.fspath(model) if is_file else None) or getattr(
        getattr(model, "graph", None), "name", None) or "the model"
    graph = proto if proto is not None else load_model(model, weights=False)
    vi = next((i for i in graph_inputs(graph) if i.name == name), None)
    sizes = declared_text(vi) if vi is not None else None
    declared = f" (the model {'file ' if is_file else ''}declares {sizes})" if sizes else ""
    raise EmptyInputError(where, name, dims, of, declared, (origin or _any_array)(name))


class PerShape:
    """``get(arrays, where)``: the value ``make(shape)`` made for the shape of ``arrays``;
    ``shown``, ``origin``: the model and its arrays as an empty array's refusal names them
    (``refuse_empty_taken``)."""

    def __init__(self, model, given: Optional[Mapping], make: Callable[[dict], object], *,
                 shown: Optional[str] = None, origin: Optional[Origin] = None):
        self.model, self.given, self._make = model, given, make
        self.shown, self.origin = shown, origin
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
        from .shape_from_inputs import left_dynamic, shape_from_inputs

        # a missing or misshapen array is said as such, not as a dimension left open
        check_inputs(self.proto, arrays, where=where)
        shape = shape_from_inputs(self.model, self.given, arrays) or {}
        key = tuple(sorted((k, tuple(v)) for k, v in shape.items()))
        if key not in self._by_shape:
            refuse_empty_taken(self.model, shape, left_dynamic(self.model, self.given), where,
                               shown=self.shown, origin=self.origin, proto=self.proto)
            self._by_shape[key] = self._make(shape)
        self.latest = self._by_shape[key]
        return self.latest

    def values(self):
        """Every value made, one per shape."""
        return list(self._by_shape.values())


__all__ = ["EmptyInputError", "PerShape", "refuse_empty_taken"]
