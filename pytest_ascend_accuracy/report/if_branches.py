"""What a failure's hint says of the ``If`` operators it failed at, and of fusion where nothing
was fused.

An ``If`` the device runs as one operator dumps its outputs only; the golden holds the tensors
of the branch that ran, which ``compare.branch_range`` reads. Where they leave the float16 range
(silero_vad.onnx fed int16-scale audio: |1.04e6| at the STFT Conv inside ``If_0``), the hint
says so, naming them, and points to ``--accuracy-diagnose``: keep_dtype refuses a branch op's
name, high precision still feeds a Cube op float16 (silero_vad_op18_ifless's Convs: pasted, it
still failed with NaN), and fusion off changes nothing where nothing is fused (pasted, it
repeated the verdict to the digit), so no mode is promised; the diagnosis keeps the branch's
ops in float32 by type and names a set that passes. Where the branch was not read (a golden
without its tensors, a run that does not list the ops inside its Ifs), the texts say that, not
that the golden values stay within float16 (``unlooked_note``).

On the emulator, fusion off changes nothing where no compared row holds a fused op (the emulator
fuses no op inside an ``If``'s branch, and none outside of it here): the no-overflow hint then
offers no fusion probe (``nothing_fused``), saying why.
"""
from __future__ import annotations

from typing import Sequence

#: the advice of a failing If whose branch's golden values leave the float16 range
BRANCH_ADVICE = ("run with --accuracy-diagnose: it tries high precision and keeping every op "
                 "in float32, the ops inside the If's branches included (by type: keep_dtype "
                 "refuses a branch op's name), and where that passes names a small set of ops "
                 "to keep in float32 as a mode to paste")


def _listed(names: Sequence[str]) -> str:
    return ", ".join(names[:3]) + (f", +{len(names) - 3} more" if len(names) > 3 else "")


def branch_reason(range_inputs: Sequence = ()) -> str:
    """Why a failing If's branch is the place to look: its golden values leave the float16
    range (``RangeFindings.in_branches``), naming up to three; "" where none was found."""
    found = tuple(getattr(range_inputs, "in_branches", ()) or ())
    if not found:
        return ""
    ifs = _listed(list(getattr(range_inputs, "branches", ()) or ()))
    shown = "; ".join(f.describe() for f in found[:3])
    more = f"; +{len(found) - 3} more" if len(found) > 3 else ""
    return (f"golden values inside the branch of {ifs} leave the float16 range ({shown}{more}), "
            f"where the device runs {ifs} as one operator and dumps its outputs only")


def unlooked_note(range_inputs: Sequence = ()) -> str:
    """``; the golden values inside <If>'s branches were not looked at (...)`` for the failing
    Ifs whose branch was not read (``RangeFindings.failing_ifs`` not in ``branches``); ""
    where every one was."""
    read = set(getattr(range_inputs, "branches", ()) or ())
    unread = [n for n in getattr(range_inputs, "failing_ifs", ()) or () if n not in read]
    if not unread:
        return ""
    return (f"; the golden values inside the branches of {_listed(unread)} were not looked at "
            "(the device runs an If as one operator; the golden or the run does not say which "
            "of its ops ran inside it)")


def nothing_fused(rows: Sequence, emulated: bool) -> bool:
    """Whether fusion off would repeat the verdict: an emulated run (``emulated``: the
    emulator's, ``emulated_probes.buffer_off_neutral``) none of whose compared ``rows`` holds a
    fused op (two or more original ops). ``rows`` empty: not known, False."""
    if not emulated or not rows:
        return False
    return not any(len(set(getattr(r, "original_names", ()) or ())) > 1 for r in rows)


def plugin_nothing_fused(buffer_mode: str = "") -> str:
    """The plugin's reason where fusion off is not offered for a run with nothing fused;
    ``buffer_mode``: the buffer-off mode an Ascend device would compare with ("": the test's
    mode has buffer reuse off already)."""
    device = (f" (on an Ascend device, --ascend-device=N, compare with modes=[{buffer_mode}], "
              "and with fusion off: ATC fuses ops of its own)" if buffer_mode else "")
    # (not "no mode changes it": high precision may, which the diagnosis tries; a review)
    return (", and neither fusion off nor buffer reuse off is a probe here: no op of this run "
            "is fused (coverage: 0 inside fused ops), so fusion off repeats this verdict, and "
            "this backend, the emulator, does not emulate buffer reuse" + device)


#: the library's and the command line's
API_NOTHING_FUSED = ("; no op of this run is fused (coverage: 0 inside fused ops), so "
                     'mode="fusion_off" repeats this verdict, and the emulator backend does not '
                     "emulate buffer reuse")
