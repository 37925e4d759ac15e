"""``DeviceModel``: a converted model bound to its backend, for dataset checks without pytest.

It offers what ``check_dataset`` needs from ``om`` (``outputs``, ``run``, ``model``,
``input_shape``, ``name``, ``mode``); inside pytest the ``ascend_model`` fixture's result
offers the same.

A model with a dimension that ``input_shape`` leaves open (``[N, 8]`` without one) converts at
each sample's shape (``PerShapeDeviceModel``), as ``ascend_model(m)`` does in a test: ATC
converts one static shape, and a dataset of batches 1 and 2 had no ``input_shape`` to take (the
check's advice, "convert it without input_shape", failed with ``DynamicShapeError`` here and
in ``ascend-accuracy dataset``).
"""
from __future__ import annotations

import itertools
import shutil
import tempfile
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional, Union

import numpy as np

from ..backends.base import model_outputs

_runs = itertools.count()


@dataclass
class DeviceModel:
    backend: object
    converted: object  # ConvertedModel
    model: object  # the original ONNX model (path, bytes or ModelProto)
    input_shape: object = None
    dump_root: Optional[Path] = field(default=None, repr=False)
    _cleanup: object = field(default=None, init=False, repr=False, compare=False)

    @property
    def name(self) -> str:
        """The model as reports name it: its file's stem (``graph.onnx_graph.model_label``),
        as an accuracy check names it, not the converted file's sanitized name."""
        from ..graph.onnx_graph import model_label

        return model_label(self.model)

    @property
    def mode(self):
        return self.converted.mode

    def outputs(self, inputs) -> Dict[str, np.ndarray]:
        """The model's plain outputs keyed by the ONNX output names (no dump)."""
        return model_outputs(self.backend, self.converted, inputs)

    def run(self, inputs, dump: bool = True):
        if self.dump_root is None:  # ours, not the caller's: removed by close() or at exit
            self.dump_root = Path(tempfile.mkdtemp(prefix="ascend-accuracy-dataset-"))
            self._cleanup = weakref.finalize(self, shutil.rmtree, str(self.dump_root), True)
        dump_dir = self.dump_root / f"dump-{next(_runs)}" if dump else None
        return self.backend.run(self.converted, inputs, dump=dump, dump_dir=dump_dir)

    def close(self) -> None:
        """Remove the temporary dump directory ``run`` made (a ``dump_root`` given is kept)."""
        if self._cleanup is not None:
            self._cleanup()


class PerShapeDeviceModel:
    """``load_device_model`` of a model with a dimension ``input_shape`` leaves open: converted
    at the shapes of the inputs of each ``run``/``outputs`` (one conversion per shape, cached),
    each a ``DeviceModel``; ``input_shape`` is None (the golden takes the inputs' shapes)."""

    input_shape = None
    per_shape = True  # one conversion per input shape (``PerShape``)

    def __init__(self, backend, model, mode, given, dump_root: Optional[Path]):
        from ..graph.per_shape import PerShape

        self.backend, self.model, self._mode = backend, model, mode
        self.dump_root = dump_root  # where each run dumps (a public attribute, as DeviceModel's)

        def convert(shape) -> DeviceModel:
            converted = backend.convert(model, mode, input_shape=shape)
            return DeviceModel(backend, converted, model, shape, dump_root)

        self._shapes = PerShape(model, given, convert)

    @property
    def name(self) -> str:
        from ..graph.onnx_graph import model_label

        return model_label(self.model)

    @property
    def mode(self):
        latest = self._shapes.latest
        return latest.mode if latest is not None else self._mode

    @property
    def converted(self):
        """The latest conversion (None before the first run)."""
        latest = self._shapes.latest
        return latest.converted if latest is not None else None

    def for_inputs(self, inputs) -> DeviceModel:
        """The conversion at the shapes of ``inputs`` (made now, or the one made before)."""
        from ..graph.onnx_graph import model_label

        return self._shapes.get(inputs, f"inputs of {model_label(self.model)!r}")

    def outputs(self, inputs) -> Dict[str, np.ndarray]:
        return self.for_inputs(inputs).outputs(inputs)

    def run(self, inputs, dump: bool = True):
        return self.for_inputs(inputs).run(inputs, dump=dump)

    def close(self) -> None:
        for handle in self._shapes.values():
            handle.close()


def load_device_model(backend, model, mode="default", *, input_shape=None,
                      dump_root=None) -> Union[DeviceModel, PerShapeDeviceModel]:
    """Convert ``model`` under ``mode`` with ``backend`` (cached) and bind them; a model with a
    dimension ``input_shape`` leaves open converts at each run's input shapes instead
    (``PerShapeDeviceModel``)."""
    from ..core.modes import resolve_mode
    from ..graph.onnx_graph import parse_input_shape
    from ..graph.shape_from_inputs import left_dynamic

    resolved = resolve_mode(mode, "mode")
    root = Path(dump_root) if dump_root is not None else None
    given = parse_input_shape(input_shape)
    if left_dynamic(model, given):
        return PerShapeDeviceModel(backend, model, resolved, given, root)
    converted = backend.convert(model, resolved, input_shape=input_shape)
    return DeviceModel(backend, converted, model, input_shape, root)
