"""``DeviceModel``: a converted model bound to its backend, for dataset checks without pytest.

It offers what ``check_dataset`` needs from ``om`` (``outputs``, ``run``, ``model``,
``input_shape``, ``name``, ``mode``); inside pytest the ``ascend_model`` fixture's result
offers the same.
"""
from __future__ import annotations

import itertools
import shutil
import tempfile
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional

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


def load_device_model(backend, model, mode="default", *, input_shape=None,
                      dump_root=None) -> DeviceModel:
    """Convert ``model`` under ``mode`` with ``backend`` (cached) and bind them."""
    from ..core.modes import resolve_mode

    converted = backend.convert(model, resolve_mode(mode, "mode"), input_shape=input_shape)
    return DeviceModel(backend, converted, model, input_shape,
                       Path(dump_root) if dump_root is not None else None)
