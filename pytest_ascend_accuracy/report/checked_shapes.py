"""The input shape an accuracy check ran at, spelled as ATC's ``--input_shape`` spells it
(``img:1,3,64,64``), and the words that name it where one test checked several shapes.

A test looping over the gears of a dynamic model (``check_accuracy`` once per input shape, or
one ``ascend_model`` per shape) failed with nothing naming the failing check's shape: not the
summary's ``FAILED`` line, not the failure's block, not a JUnit property; the grid's "1/2
passed" read as though the test had two gears when a third never ran (a trial). A test of one
shape prints as before: its shape is the one it was written for.
"""
from __future__ import annotations

from typing import Dict, Mapping, Optional, Sequence, Tuple


def input_shape_text(*metas: Mapping) -> Optional[str]:
    """``name:d1,d2;name2:d1`` from the first of ``metas`` (a golden's, then the device dump's
    ``DumpSet.meta``) whose ``graph.input_shapes`` holds any, in the model's input order; None
    where none does (a dump read from a folder says nothing of its inputs)."""
    for meta in metas:
        graph = meta.get("graph") if isinstance(meta, Mapping) else None
        shapes = graph.get("input_shapes") if isinstance(graph, Mapping) else None
        if shapes and isinstance(shapes, Mapping):
            return ";".join(f"{name}:{','.join(str(int(d)) for d in dims)}"
                            for name, dims in shapes.items())
    return None


def several_shapes(checks: Sequence[Tuple[str, Optional[str]]]) -> bool:
    """Whether a test's checks, ``(model, input shape)`` each, ran one model at more than one
    known input shape (two models of other inputs are told apart by their names)."""
    seen: Dict[str, set] = {}
    for model, shape in checks:
        if shape:
            seen.setdefault(model, set()).add(shape)
    return any(len(shapes) > 1 for shapes in seen.values())


def shape_context(k: int, shapes: Sequence[Optional[str]], passed: Sequence[bool],
                  model: str) -> str:
    """``input img:1,3,64,64 (check 2 of the 2 of det this test ran, the last; before it
    img:1,3,8,8 passed)``: check ``k`` (from 0) of the test's checks of ``model``, which ran at
    ``shapes`` with the verdicts ``passed``, both in check order. Says which shapes passed or
    failed before and after it, and when it was the last check (a test stops at its first
    failing check unless it catches it: shapes it meant to check after it never ran)."""
    n = len(shapes)
    shape = shapes[k] or "not known"
    last = ", the last" if k == n - 1 else ""
    parts = []
    for where, span in (("before", range(0, k)), ("after", range(k + 1, n))):
        for verdict in (True, False):
            shown = list(dict.fromkeys(shapes[j] or "not known" for j in span
                                       if passed[j] is verdict))
            if shown:
                parts.append(f"{where} it {' '.join(shown)} "
                             f"{'passed' if verdict else 'failed'}")
    tail = f"; {'; '.join(parts)}" if parts else ""
    return f"input {shape} (check {k + 1} of the {n} of {model} this test ran{last}{tail})"
