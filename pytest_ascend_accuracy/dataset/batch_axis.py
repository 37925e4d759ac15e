"""Which axis of the output a built-in metric reads holds the samples (the batch).

Most outputs put the batch first (``[N, C]``, ``[N, T, C]``), but a time-major sequence
output does not: a CTC recogniser's ``[T, N, C]`` (ddddocr's ``common.onnx`` outputs
``(T, 1, 8210)``, T following the image width). Read along axis 0, each of its T time steps
counted as a sample, and a sample with one changed position cost 1/T of a sample: 2 of 50
samples decoding to other text passed a 0.01 ``max_drop`` (an audit).

``BatchAxis`` finds the axis per sample from the sizes: the inputs' batch is their axis 0 (the
inputs of rank 2 or more, where they agree), and the batch axis of the output is the axis of
that size, axis 0 first where it is one. For a batch of 1 any axis of size 1 reads the same
rows (and an output with none has no batch axis: the sample is one row); for a larger batch
with several axes of its size, the model's declared output dims break the tie (a ``dim_param``
shared with an input's axis 0), else axis 0 is read, and a later sample whose axis 0 is not
the batch is an error, never a silent change of reading. ``batch_axis=`` (``--batch-axis``,
YAML ``batch_axis:``) says it where the sizes cannot: an axis, or ``None`` for an output with
no batch axis.

Where the inputs' axis 0 is over 1 and the output's axis 0 is 1 (unless the model declares
another axis the inputs' symbolic batch), or no output axis has the inputs' size, that axis 0
is no batch (a model taking one image ``[H, W, 3]`` or ``[3, H, W]`` and making a batch of one
itself): the output is read along axis 0 as before (a review: an ``[H, W, 3]`` input's check
stopped with "no axis of the inputs' batch size, 32", and a ``[3, 8, 8]`` one read the 3
classes of its ``[1, 3]`` output as 3 samples).
"""
from __future__ import annotations

from typing import Dict, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..errors import ConfigError

#: ``batch_axis=`` default: found from the sizes (see the module docstring)
AUTO = "auto"
#: an output with no batch axis: each sample's whole output is one row
NO_AXIS = None


def check_batch_axis(value, where: str = "batch_axis"):
    """``value`` as ``AUTO``, ``None`` or an axis (an int >= 0, or negative from the end);
    anything else a ``ConfigError`` at ``where``."""
    if isinstance(value, str) and value.lower() == "none":  # YAML's none, not null
        return None
    if value == AUTO or value is None:
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ConfigError(where, f"expected an axis of the output (0, 1, ..., or -1 for the "
                                 f"last), None for an output with no batch axis, or "
                                 f"{AUTO!r} (found from the sizes), got {value!r}")
    return int(value)


def input_batch(inputs: Mapping[str, np.ndarray]) -> Optional[int]:
    """The batch of one sample's inputs: the axis-0 size of its inputs of rank 2 or more where
    they agree, else None (a waveform ``[T]`` has no batch axis; a state ``[2, 1, 128]`` beside
    ``[1, 512]`` leaves it open)."""
    sizes = {int(np.shape(v)[0]) for v in inputs.values() if np.ndim(v) >= 2}
    return sizes.pop() if len(sizes) == 1 else None


def declared_batch_axes(proto) -> Dict[str, Tuple[int, ...]]:
    """Per output, the axes whose declared ``dim_param`` is one an input declares at its axis 0
    (the symbolic batch), with the output's declared rank first: ``{name: (rank, axes...)}``."""
    batch = {d.dim_param for i in proto.graph.input for d in i.type.tensor_type.shape.dim[:1]
             if d.dim_param}
    out = {}
    for o in proto.graph.output:
        dims = o.type.tensor_type.shape.dim
        axes = tuple(k for k, d in enumerate(dims) if d.dim_param and d.dim_param in batch)
        if axes:
            out[o.name] = (len(dims),) + axes
    return out


def _shape(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


class BatchAxis:
    """The batch axis of ``output`` for each sample (``rows_first``), decided as the module
    docstring says; ``note`` says how it was read where that is not axis 0."""

    def __init__(self, output: str, given=AUTO, declared: Optional[Tuple[int, ...]] = None):
        self.output = output
        self.given = check_batch_axis(given)
        self.declared = declared
        #: (sample id, axis) where a batch > 1 chose axis 0 among several axes of its size, or
        #: the axis found: later samples must agree
        self.chosen: Optional[Tuple[str, int]] = None
        #: (axis, shape, batch) of the first sample read along another axis than 0, or with none
        self.other: Optional[Tuple[Optional[int], Tuple[int, ...], Optional[int]]] = None

    def rows_first(self, sample, ref: np.ndarray, dev: np.ndarray):
        """``(ref, dev)`` (the device's in the reference's shape) with their batch axis first;
        with none, a new axis of 1 first (the sample is one row)."""
        axis = self.axis_for(sample, ref.shape)
        if axis is NO_AXIS:
            return ref[None], dev[None]
        if axis == 0:
            return ref, dev
        return np.moveaxis(ref, axis, 0), np.moveaxis(dev, axis, 0)

    def axis_for(self, sample, shape: Tuple[int, ...]) -> Optional[int]:
        shape = tuple(int(d) for d in shape)
        if self.given != AUTO:
            return self._given(sample, shape)
        if len(shape) <= 1:  # [C], [N] ids, a scalar: read as they always were
            return 0
        n = input_batch(sample.inputs)
        if n is None:
            return self.chosen[1] if self.chosen is not None else 0
        fits = [k for k, d in enumerate(shape) if d == n]
        if self.chosen is not None:
            if self.chosen[1] in fits:
                return self.chosen[1]
            raise self._conflict(sample, shape, n, fits)
        if n > 1 and (not fits or (shape[0] == 1 and not self._declared_one(shape, fits))):
            return 0  # the inputs' axis 0 is no batch: read as before
        if not fits:
            return self._seen(NO_AXIS, shape, n)
        if n == 1:  # any size-1 axis reads one row the same way
            return self._seen(0 if 0 in fits else fits[0], shape, n)
        if len(fits) > 1:
            fits = self._declared(shape, fits)
        if len(fits) > 1 and 0 not in fits:
            raise ConfigError(f"sample {sample.id!r}", self._ambiguous(shape, n, fits))
        axis = 0 if 0 in fits else fits[0]
        self.chosen = (sample.id, axis)
        return self._seen(axis, shape, n)

    def _given(self, sample, shape) -> Optional[int]:
        if self.given is NO_AXIS:
            self.other = self.other or (NO_AXIS, shape, None)
            return NO_AXIS
        if not -len(shape) <= self.given < len(shape):
            raise ConfigError("batch_axis", f"batch_axis={self.given} is not an axis of output "
                                            f"{self.output!r} of shape {_shape(shape)} in sample "
                                            f"{sample.id!r} ({len(shape)} axes)")
        axis = self.given % len(shape)
        if axis:
            self.other = self.other or (axis, shape, input_batch(sample.inputs))
        return axis

    def _seen(self, axis, shape, n):
        if axis != 0 and self.other is None:
            self.other = (axis, shape, n)
        return axis

    def _declared_one(self, shape, fits) -> bool:
        """Whether the model declares one of ``fits`` as the inputs' symbolic batch (an output
        ``[1, N, C]`` whose ``N`` is the inputs' axis 0: a review found its N read as positions)."""
        return (bool(self.declared) and self.declared[0] == len(shape)
                and any(k in self.declared[1:] for k in fits))

    def _declared(self, shape, fits):
        """The axes of ``fits`` the model declares as the inputs' symbolic batch (where the
        declared rank is the output's), else ``fits``."""
        if not self.declared or self.declared[0] != len(shape):
            return fits
        named = [k for k in fits if k in self.declared[1:]]
        return named or fits

    def _conflict(self, sample, shape, n, fits) -> ConfigError:
        first, axis = self.chosen
        fix = (f"batch_axis={fits[0]}" if len(fits) == 1 else
               "batch_axis= with the axis that holds the samples")
        return ConfigError(f"sample {sample.id!r}", (
            f"output {self.output!r} of shape {_shape(shape)}: its axis {axis} is not the "
            f"inputs' batch, {n}, though sample {first!r} was read along it (the one axis of "
            f"its batch size there, or axis 0 among several): the axis that holds the samples "
            f"cannot be told from the sizes; say it with {fix}"))

    def _ambiguous(self, shape, n, fits) -> str:
        axes = ", ".join(str(k) for k in fits)
        return (f"output {self.output!r} of shape {_shape(shape)} has several axes of the "
                f"inputs' batch size, {n} (axes {axes}), and its axis 0 is not one: which "
                f"holds the samples cannot be told; say it with batch_axis={fits[0]} (or "
                f"another of {axes})")

    def note(self) -> str:
        """How the samples were read, where not along axis 0; "" where they were."""
        if self.other is None:
            return ""
        axis, shape, n = self.other
        given = self.given != AUTO
        if axis is NO_AXIS:
            how = "as batch_axis=None says" if given else (
                f"it has no axis of the inputs' batch size, {n}")
            return (f"output {self.output!r} (e.g. {_shape(shape)}) read as one row per sample "
                    f"({how}); batch_axis=0 reads its axis 0 as the samples")
        why = f"batch_axis={axis}" if given else (
            f"the axis of the inputs' batch size, {n}; axis 0, of {shape[0]}, is not")
        return (f"samples read along axis {axis} of output {self.output!r} (e.g. "
                f"{_shape(shape)}: {why}); batch_axis=AXIS says another")
