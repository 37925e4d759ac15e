"""The ONNX model of a YAML suite entry, read once for every check made of it at collection.

The checks of one entry (its ``keep_dtype``, ``per_op`` and ``ignore`` names, its ``inputs``
names and files, its ``input_shape`` names, its ``dataset.output``) each read the model's graph
without weights: an entry with input files, an ``input_shape`` and op names read PP-OCRv4 det
three times. ``EntryModel`` reads it the first time one asks and hands every check that one
graph, which they only read. A model that cannot be read is ``graph`` None: each check then
leaves it to the run, which says why.
"""
from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import List, Optional

from ..errors import ConfigError


class EntryModel:
    """The entry's model file (``path``), its graph without weights and its ops, read lazily."""

    def __init__(self, path: Path):
        self.path = Path(path)

    @property
    def name(self) -> str:
        return self.path.name

    @cached_property
    def graph(self) -> Optional["onnx.ModelProto"]:  # noqa: F821
        """The model without its weights, or None when it cannot be read."""
        from ..graph.onnx_graph import load_model

        try:
            return load_model(self.path, weights=False)
        except ConfigError:
            return None

    @cached_property
    def inputs(self) -> Optional[List[object]]:
        """The graph's real inputs (``onnx_graph.graph_inputs``), or None when unreadable."""
        from ..graph.onnx_graph import graph_inputs

        return None if self.graph is None else graph_inputs(self.graph)

    @cached_property
    def input_names(self) -> Optional[List[str]]:
        return None if self.inputs is None else [i.name for i in self.inputs]

    @cached_property
    def ops(self):
        """Its ``op_catalogue.ModelOps``, or None when it cannot be read."""
        from ..graph.op_catalogue import model_ops

        if self.graph is None:
            return None
        return model_ops(self.path, loaded=self.graph)
