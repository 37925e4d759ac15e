"""The plugin's hint for a first failure after TopKs whose differing indices all reorder (near)
ties (``report.after_selection``), spelled for the command line.

T2's Faster R-CNN, compared with ``ascend-accuracy compare``, still read "no op list is known
to fix it; ascend-accuracy diagnose ... finds one by running" there, as the plugin's hint did
before c754991, and the diagnosis it named keeps every op in float32. Here the same reason leads
to the ``--ignore`` flags that judge the rest (added to the compare command as it was run) and,
where ops after the selections leave float16's range, the ``ascend-accuracy diagnose`` command
checking their own keep_dtype list beside those flags (``MODEL.onnx`` standing for the model the
dump ran, as every CLI hint has it).
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence


def selection_hint(verdict, range_inputs: Sequence, result, golden=None, model=None,
                   otherwise: Callable[[], str] = lambda: "") -> Optional[str]:
    """The hint for ``verdict`` where its first failure comes after such selections; where it is
    such a selection itself (some of its differences no near ties), what was found, then
    ``otherwise()``, the hint it gets without; else None."""
    if golden is None:  # a saved result: no edges to tell what comes after a selection
        return None
    from ..report.after_selection import (after_selection, apart_from_that, hides,
                                          ignored_what, kept_after, selection_lead,
                                          selection_reason)
    from ..report.cli_commands import cli_diagnose, dumped_mode, not_carried
    from ..report.ignore_spelling import ignore_flags
    from ..report.keep_dtype_text import CLI_EXIT_NOTE

    found = after_selection(verdict, golden, result.rows, model)
    if found is None:
        return None
    if found.itself:
        return f"{selection_lead(verdict)}; {otherwise()}"
    flags = ignore_flags([e for e in found.entries if e not in verdict.policy.ignore])
    text = (f"{selection_reason(verdict, found)}: to judge the rest, add to this command "
            f"{flags}, which ignore {ignored_what(found)}; {hides(found)}")
    kept = kept_after(found, verdict, range_inputs, dumped_mode(result)[0],
                      result.meta.get("actual_kind") or "", result.rows)
    if kept is None:
        return text
    return (f"{text}; {apart_from_that(verdict, found, kept)}; keep "
            f"{'it' if len(kept[1]) == 1 else 'them'} in float32 (ATC --keep_dtype=FILE, one op "
            f"name a line) beside the ignore, and check both on the ONNX model the dump ran: "
            f"{cli_diagnose(_ignoring(verdict, found.entries), kept[0], result)}{CLI_EXIT_NOTE}"
            + not_carried(result))


def _ignoring(verdict, entries):
    """``verdict`` as if judged with ``entries`` ignored too: the command it names carries
    them among its judge options, before any note on its inputs."""
    from dataclasses import replace

    policy = verdict.policy
    return replace(verdict, policy=replace(policy, ignore=tuple(policy.ignore) + tuple(
        e for e in entries if e not in policy.ignore)))
