"""Integer inputs that give how much of another input is valid: seeded, they are its full length.

onnx_asr 0.12's audio pre-processors (OnnxScript) take ``waveforms`` float [batch_size, N] and
``waveforms_lens`` int64 [batch_size], the valid samples of each waveform, and mask every frame
past it (``Range(0, T) < lens``; ``features_lens = (lens + pad) / hop``). Drawn from [0, 10) as
other seeded integers are, ``waveforms_lens`` was 5 of 16000 samples: ``features_lens`` 0 and
the ``features`` output all zeros on both sides, which the check scored cosine 1.0 ("both
tensors are all zero") and passed, in pytest, YAML and ``diagnose`` alike (audit 33). An integer
input of rank 0 or 1 whose name says it is a length (``lens``, ``length``, ``lengths``,
``seq_len``: it holds ``len``, as an input named as a mask is read by its name) is drawn as the
length of the input it measures, every element: a seeded run is the common single-utterance
case, where every sample is valid. The input it measures is the first other input of two or
more dimensions whose first dimension is the length's own (the same declared name, else the
same size), and its length is the one dimension past the first that the model leaves open (a
``[batch, 80, T]`` encoder input: ``T``), or where none or several are open, the largest.
Inputs whose draw something else bounds keep it (``graph.integer_ranges``: a table index, a
mask, an RNN's ``sequence_lens``).
"""
from __future__ import annotations

from typing import Dict, Iterable, Mapping, Optional, Sequence, Tuple


def length_inputs(model, names: Iterable[str],
                  shapes: Mapping[str, Tuple[int, ...]]) -> Dict[str, int]:
    """``{input name: n}`` for those of ``names`` (``model``'s integer graph inputs, a
    ModelProto, of these ``shapes``) that are lengths of another input (module doc), ``n`` its
    length (at least 1); others are not listed."""
    declared = {vi.name: _dims(vi) for vi in model.graph.input}
    out: Dict[str, int] = {}
    for name in names:
        shape = shapes.get(name)
        if "len" not in name.lower() or shape is None or len(shape) > 1:
            continue
        n = _measured(name, declared, shapes)
        if n is not None and n >= 1:
            out[name] = n
    return out


def _measured(name: str, declared, shapes) -> Optional[int]:
    """The length of the input ``name`` measures, or None where no input fits."""
    own = declared.get(name) or ()
    size = shapes[name][0] if len(shapes[name]) == 1 else None
    param = own[0] if len(own) == 1 and isinstance(own[0], str) else None
    for other, dims in declared.items():
        shape = shapes.get(other)
        if other == name or shape is None or len(shape) < 2:
            continue
        same_name = param is not None and bool(dims) and dims[0] == param
        if same_name or size is None or shape[0] == size:  # (a scalar length: the first)
            return _length(dims, shape)
    return None


def _length(dims: Sequence, shape: Sequence[int]) -> int:
    """The one open dimension past the first (declared by name, or unknown), else the
    largest dimension past the first."""
    open_axes = [k for k in range(1, len(shape))
                 if k >= len(dims) or not isinstance(dims[k], int) or not dims[k]]
    if len(open_axes) == 1:
        return int(shape[open_axes[0]])
    return int(max(shape[1:]))


def _dims(value_info) -> Tuple:
    """The declared dimensions: an int for a size, the name (or "") for an open one."""
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return ()
    return tuple(d.dim_value if d.HasField("dim_value") else d.dim_param for d in t.shape.dim)


__all__ = ["length_inputs"]
