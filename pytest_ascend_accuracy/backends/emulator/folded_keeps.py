"""keep_dtype entries naming only ops folded at conversion are refused, as per_op entries are.

ATC computes an op whose inputs are all constants or static shapes at conversion
(``graph.folded_nodes``: ``p2o.Shape.0``, a Cast of a constant); it never runs on the device,
so keeping it in its original dtype changes nothing. ``keep_dtype(["p2o.Shape.0"])`` converted,
ran with the first failure unchanged, and ``diagnose --mode '{keep_dtype: [p2o.Shape.0]}'``
said PASSES, without a word that the entry kept nothing (a PP-OCRv4 trial), where the same name
as a ``per_op`` entry is refused ("names only ops never compared here ... folded at
conversion"). The emulator's conversion, which folds exactly these, refuses them now, naming
the closest ops that run.
"""
from __future__ import annotations

import difflib
from typing import Iterable, Sequence


def folded_keep_problem(keep_dtype: Sequence[str], folded: Iterable[str],
                        running: Iterable[str], label: str) -> str:
    """The refusal's text for the entries of ``keep_dtype`` among ``folded`` (node names of
    the model ``label``), or "" where there are none; ``running``: the names of the ops that
    run, for the closest ones."""
    folded = set(folded)
    named = [k for k in keep_dtype if not k.startswith("OpType::") and k in folded]
    if not named:
        return ""
    near = difflib.get_close_matches(named[0], list(running), n=3, cutoff=0.6)
    closest = f"; closest ops that run: {', '.join(repr(n) for n in near)}" if near else ""
    one = len(named) == 1
    these = "it" if one else "them"
    return (f"keep_dtype entr{'y' if one else 'ies'} {', '.join(repr(n) for n in named)} of "
            f"model {label!r} name{'s' if one else ''} only ops folded at conversion (ATC "
            f"computes them from constants and static shapes; they never run on the device), "
            f"so keeping {these} in the original dtype changes "
            f"nothing: remove {these}{closest}")


__all__ = ["folded_keep_problem"]
