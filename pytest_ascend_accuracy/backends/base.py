"""The backend protocol shared by the CPU emulator and the real Ascend backend.

A backend converts an ONNX model under a ``Mode`` (ATC, or the emulator's equivalent) into a
``ConvertedModel`` stored in the cache, and runs it on inputs, returning the dump of every
operator as a ``DumpSet`` read back from files in the real Ascend dump layout.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Mapping, Optional, Tuple

import numpy as np

try:  # Protocol is typing-only here; keep 3.7-style fallbacks out of the way
    from typing import Protocol
except ImportError:  # pragma: no cover
    Protocol = object  # type: ignore

from ..dump.model import DumpSet
from ..core.modes import Mode
from .dump_modes import DUMP_MODES, check_dump_mode  # noqa: F401  (re-exported)

Inputs = Mapping[str, np.ndarray]
#: input shapes as {input name: shape}; ATC syntax is "in1:1,3,224,224;in2:1,10"
InputShape = Optional[Mapping[str, Tuple[int, ...]]]

@dataclass(frozen=True)
class ConvertedModel:
    """A converted model in the cache: ``path`` is the .om (or the emulator's artefact).

    ``om_json`` is the ``atc --mode=1`` JSON (or its emulator equivalent) that maps fused ops to
    their original op names; ``info`` holds facts for reports (ATC command, toolkit version)."""

    backend: str
    path: Path
    source_model: Path
    mode: Mode
    key: str
    model_name: str
    om_json: Optional[Path] = None
    info: Dict[str, object] = field(default_factory=dict, compare=False)


class Backend(Protocol):
    """What every backend provides."""

    name: str

    def convert(self, model: "str | Path", mode: Mode, *, input_shape: InputShape = None,
                atc_options: Optional[Mapping[str, str]] = None) -> ConvertedModel:
        """Convert (or fetch from the cache) ``model`` under ``mode``."""
        ...

    def run(self, converted: ConvertedModel, inputs: Inputs, *, dump: bool = True,
            dump_dir: "str | Path | None" = None, dump_mode: Optional[str] = None) -> DumpSet:
        """Run once on ``inputs``; with ``dump`` return every operator's dump as a DumpSet.
        Without ``dump`` the DumpSet holds only the model outputs (as ops named after them).
        ``dump_mode`` (one of ``DUMP_MODES``) overrides the backend's own setting for this run
        (None: the backend's); an unknown one is a ``ConfigError``. Without ``dump_dir`` the
        dump goes to a temporary directory the backend owns and deletes on ``close()`` (or
        when it is collected, or at exit)."""
        ...

    def close(self) -> None:
        """Release the device and delete the dump directories the backend made itself."""
        ...

    def outputs(self, converted: ConvertedModel, inputs: Inputs) -> Dict[str, np.ndarray]:
        """Run once without dumping; the model's plain outputs keyed by the ONNX output names
        (optional: ``model_outputs`` falls back to ``run(dump=False)``)."""
        ...

    def describe(self) -> str:
        """One line for the terminal header, e.g. 'emulator (CPU, onnxruntime 1.18)'."""
        ...


def model_outputs(backend, converted: ConvertedModel, inputs: Inputs) -> Dict[str, np.ndarray]:
    """``om.outputs(inputs)``: the plain outputs of one run, no dump, keyed by the ONNX output
    names; ``backend.outputs`` when the backend has it, else the ops of ``run(dump=False)``
    (one per model output, named after it)."""
    direct = getattr(backend, "outputs", None)
    if direct is not None:
        return dict(direct(converted, inputs))
    ds = backend.run(converted, inputs, dump=False)
    return {op.name: op.outputs[0].load() for op in ds.ops}


def shape_from_options(input_shape, atc_options):
    """(``input_shape``, ``atc_options`` without it) where ATC's own ``input_shape`` option
    among ``atc_options`` gives the sizes: both backends take it so (a review: one library
    call, two behaviours); given both ways, a ``ConfigError`` (ATC would get it twice). Any
    option given under two spellings (``log`` and ``--log``) is refused too, as the command
    builder refuses it: the emulator kept one of them without a word (a review: an
    ``input_shape`` and a ``--input_shape`` converted at the one and wrote both on its command
    line)."""
    from ..errors import ConfigError

    options = dict(atc_options or {})
    spelled: dict = {}
    for key in options:
        name = str(key).lstrip("-")
        if name in spelled:
            raise ConfigError("atc_options", f"--{name} given twice (as {spelled[name]!r} and "
                                             f"{key!r}); keep one")
        spelled[name] = key
    given = spelled.get("input_shape")
    if given is None:
        return input_shape, options
    if input_shape is not None:
        raise ConfigError("atc_options", "input_shape given twice (argument and atc option)")
    return str(options.pop(given)), options
