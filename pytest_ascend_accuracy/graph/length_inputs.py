"""Integer inputs that give how much of another input is valid: seeded, they are its full length.

onnx_asr 0.12's audio pre-processors (OnnxScript) take ``waveforms`` float [batch_size, N] and
``waveforms_lens`` int64 [batch_size], the valid samples of each waveform, and mask every frame
past it (``Range(0, T) < lens``; ``features_lens = (lens + pad) / hop``). Drawn from [0, 10) as
other seeded integers are, ``waveforms_lens`` was 5 of 16000 samples: ``features_lens`` 0 and
the ``features`` output all zeros on both sides, which the check scored cosine 1.0 ("both
tensors are all zero") and passed, in pytest, YAML and ``diagnose`` alike (audit 33).

An integer input of rank 0 or 1 named as the length of another input is drawn as that input's
length, every element: a seeded run is the common single-utterance case, where every sample is
valid. Only where both are sure (a review found guesses that made passing checks error, and
one that changed which If branch ran):

* the name ends in a length word, ``len``, ``lens``, ``length`` or ``lengths`` (or ESPnet's
  ``ilens``), as a whole word (``waveforms_lens``, ``feats_len``, ``input_lengths``,
  ``speechLengths``, ``seq_len``; not ``blend_mode``),
  and no bound or cache word precedes it (``max_len``, ``min_length``, ``past_sequence_length``,
  ``cache_len`` are no lengths of an input);
* the input it measures is the one named by the words before (``waveforms`` for
  ``waveforms_lens``, ``acoustic_embeds`` for ``acoustic_embeds_len``), else the only other
  input of two or more dimensions whose first dimension is the length's own (the same declared
  name, else the same size) and whose length is sure (next point), or several giving one
  length (``input_ids`` and ``attention_mask``): a speaker embedding ``[B, 192]`` beside the
  audio ``[B, T]`` leaves two lengths, and the length keeps its draw;
* its length is its one dimension past the first, or its one open dimension past the first
  (a ``[batch, 80, T]`` encoder input: ``T``); a static ``[1, 50, 80]`` tells no axis, and the
  length keeps its draw;
* the length fits the input's integer type.

Inputs whose draw something else bounds keep it (``graph.integer_ranges``: a table index, a
mask, an RNN's ``sequence_lens``); a length an ``If`` guard compares with 0 is a length first
(drawn 0, a re-review's check passed on the empty branch).
"""
from __future__ import annotations

import re
from typing import Dict, Iterable, Mapping, Optional, Sequence, Tuple

from .value_readers import integer_holds

#: the last word of a length input's name
_LENGTH_WORDS = frozenset({"len", "lens", "length", "lengths", "ilens", "olens"})
#: words before it that make it a bound, an offset or a cache size, not a length of an input
_NOT_LENGTH = frozenset({"max", "min", "past", "cache", "total", "pad", "padded", "window",
                         "chunk", "hop", "frame", "kernel", "block"})


def length_inputs(model, names: Iterable[str], shapes: Mapping[str, Tuple[int, ...]],
                  declared: Optional[Mapping[str, Tuple]] = None) -> Dict[str, int]:
    """``{input name: n}`` for those of ``names`` (``model``'s integer graph inputs, a
    ModelProto, of these ``shapes``) that are lengths of another input (module doc), ``n`` its
    length (at least 1); others are not listed. ``declared``: each input's dimensions as the
    model declares them (``declared_dims``), where ``model``'s inputs were set to ``shapes``
    already (``make_inputs``: a re-review found every axis read as fixed, and no rank-3 length
    drawn)."""
    if declared is None:
        declared = {vi.name: declared_dims(vi) for vi in model.graph.input}
    types = {vi.name: vi.type.tensor_type.elem_type for vi in model.graph.input}
    out: Dict[str, int] = {}
    for name in names:
        shape = shapes.get(name)
        words = _words(name)
        if (shape is None or len(shape) > 1 or not words or words[-1] not in _LENGTH_WORDS
                or _NOT_LENGTH & set(words[:-1])):
            continue
        n = _measured(name, "_".join(words[:-1]), declared, shapes)
        if n is not None and n >= 1 and integer_holds(types.get(name), n, n):
            out[name] = n
    return out


def _measured(name: str, stem: str, declared, shapes) -> Optional[int]:
    """The length of the input ``name`` measures, or None where none is sure."""
    others = {o: d for o, d in declared.items()
              if o != name and shapes.get(o) is not None and len(shapes[o]) >= 2}
    named = [o for o in others if stem and "_".join(_words(o)) == stem]
    if len(named) == 1:
        return _length(others[named[0]], shapes[named[0]])
    prefixed = {_length(others[o], shapes[o]) for o in others  # input_lengths: input_ids
                if stem and _words(o)[:len(stem.split("_"))] == stem.split("_")}
    if len(prefixed) == 1 and None not in prefixed:
        return prefixed.pop()
    own = declared.get(name) or ()
    size = shapes[name][0] if len(shapes[name]) == 1 else None
    param = own[0] if len(own) == 1 and isinstance(own[0], str) and own[0] else None
    fits = [o for o, dims in others.items()
            if (param is not None and dims and dims[0] == param
                or size is not None and shapes[o][0] == size or size is None)
            and _length(dims, shapes[o]) is not None]
    lengths = {_length(others[o], shapes[o]) for o in fits}  # (input_ids and its mask: one)
    return lengths.pop() if len(lengths) == 1 else None


def _words(name: str) -> list:
    """``speechLengths`` -> ``["speech", "lengths"]``, ``waveforms_lens`` -> ``[..., "lens"]``."""
    return [w for w in re.split(r"[^a-z]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower())
            if w]


def _open_axes(dims: Sequence, shape: Sequence[int]):
    return [k for k in range(1, len(shape))
            if k >= len(dims) or not isinstance(dims[k], int) or not dims[k]]


def _length(dims: Sequence, shape: Sequence[int]) -> Optional[int]:
    """Its one dimension past the first, else its one open dimension past the first."""
    if len(shape) == 2:
        return int(shape[1])
    open_axes = _open_axes(dims, shape)
    return int(shape[open_axes[0]]) if len(open_axes) == 1 else None


def declared_dims(value_info) -> Tuple:
    """The declared dimensions: an int for a size, the name (or "") for an open one."""
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return ()
    return tuple(d.dim_value if d.HasField("dim_value") else d.dim_param for d in t.shape.dim)


__all__ = ["declared_dims", "length_inputs"]
