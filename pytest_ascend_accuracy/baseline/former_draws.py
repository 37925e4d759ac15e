"""Why a seeded baseline's inputs changed when its seed, shapes and dtypes did not: this version
draws them differently.

Versions of this package before seeded integer inputs learnt their ranges
(``graph.integer_ranges``) drew every integer input from [0, 10); this one draws a *mask* input
from {0, 1}, an index below the table it indexes, an LSTM/GRU/RNN's ``sequence_lens`` from
[1, seq_length], and an input the model compares with a constant (``Equal(sr, 16000)``, which
picks silero-vad's If branch: ``graph.compared_inputs``) as that constant, a length input
as the length of the input it measures (``graph.length_inputs``) and a one-hot encoded input
over its table (``graph.one_hot_tables``) (earlier versions drew them from [0, 10) too: the
same former draw is recognised,
no other record is needed; a baseline could hold one only where onnxruntime took every value,
a sequence of 9 steps or more, or a lucky draw). A baseline recorded by such a version
then reads "rebaseline required ... inputs.attention_mask.sha256: ... -> ...", and its reader
changed nothing. ``former_draw_notes`` names the cause where it is that: the recorded sha256 is
exactly what the former rule draws for that seed, shape and dtype (``make_inputs``: input ``k``
in graph order draws from ``numpy.random.default_rng([seed, k])``; the baseline does not record
``k``, so each position is tried).
"""
from __future__ import annotations

from typing import List

from .file import InputSpec


def former_draw_notes(old: InputSpec, new: InputSpec, *, same_model: bool = False,
                      inputs_only: bool = False) -> List[str]:
    """Lines for the rebaseline message: one for each input of ``new`` (this run's seeded inputs)
    whose recorded (``old``) values differ only in their bytes and are the former [0, 10) draw
    for the same seed; none where the seed, shapes or dtypes changed. The draw is the cause
    where the model is the one recorded (``same_model``: its sha256); else it may be, or the
    model's edit (a table of 16 rows cut to 4 draws its index below 4 now: a review). "Nothing
    of yours changed" only where the inputs are all that changed (``inputs_only``)."""
    if old.seed is None or old.seed != new.seed or old.stored or new.stored:
        return []
    import numpy as np

    from .inputs import array_sha256

    now = {t.name: t for t in new.tensors}
    names = []
    for t in old.tensors:
        cur = now.get(t.name)
        if (cur is None or cur.sha256 == t.sha256 or cur.dtype != t.dtype
                or tuple(cur.shape) != tuple(t.shape) or np.dtype(t.dtype).kind not in "iu"):
            continue
        for k in range(len(old.tensors)):
            drawn = np.random.default_rng([old.seed, k]).integers(0, 10, size=tuple(t.shape))
            if array_sha256(drawn.astype(t.dtype)) == t.sha256:
                names.append(t.name)
                break
    if not names:
        return []
    listed = ", ".join(repr(n) for n in names)
    drew = (f"the recorded {listed} {'is' if len(names) == 1 else 'are'} what an earlier "
            f"version of pytest-ascend-accuracy drew for seed {old.seed} (every integer input "
            f"from [0, 10)); this version draws a *mask* input from {{0, 1}}, an index below "
            f"the table it indexes, an LSTM/GRU/RNN's sequence_lens from [1, seq_length], "
            f"an input the model compares with a constant (Equal) as that constant, a length "
            f"input (waveforms_lens) as the length of the input it measures and a one-hot "
            f"encoded one over its table, the values a real model is fed")
    if not same_model:
        return [f"  why: perhaps {drew}; or an edit of the model (whose sha256 the baseline "
                f"does not show to be the same) changed the range "
                f"{'it is' if len(names) == 1 else 'they are'} drawn from (a table it indexes, "
                f"a *mask* name, the sequence length of an RNN it feeds, a constant it is "
                f"compared with, the input it is the length of, a one-hot table)."]
    mine = ("Nothing of yours changed in " + listed if not inputs_only
            else "Nothing of yours changed")
    return [f"  why: {drew}. {mine}; a machine still on the earlier version reports the same "
            f"change the other way."]


__all__ = ["former_draw_notes"]
