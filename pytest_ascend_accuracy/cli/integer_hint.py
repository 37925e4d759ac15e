"""The plugin's hint for a first failure of integer values that differ (a flipped ArgMax index,
a Cast to int: compared exactly), spelled for the command line.

``report.hints.next_step`` says what such a failure calls for: the dump's mode in high
precision (float16 rounding of what an index ranks moves it), or, where a Cube op computes
it (high precision still feeds that op float16), the ops computing it kept in float32. The
command line printed its generic "diagnose walks the debugging flow" instead; here the same
reason leads to the ``ascend-accuracy diagnose`` command that tries that mode, pasted as it is
(``MODEL.onnx`` standing for the model the dump ran, as every CLI hint has it).
"""
from __future__ import annotations

from typing import Optional, Sequence

#: how the hint's reason starts where ``next_step`` chose the integer branch
INTEGER_REASON = "integer values differ at "


def integer_hint(verdict, range_inputs: Sequence, result, golden=None,
                 model=None) -> Optional[str]:
    """The hint for ``verdict`` when its first failure is integer values that differ and
    ``next_step`` (in the dump's own mode) has its integer advice for it; else None (the CLI's
    ``default_hint`` serves). ``golden``: the golden DumpSet, whose operand files may say which
    ops feed the integer output (None: a saved result's rows only)."""
    first = verdict.first
    m = first.row.metrics if first is not None else None
    if m is None or not (m.exact and m.unequal):
        return None
    from ..dump.model import DumpSet
    from ..report.cli_commands import cli_diagnose, dumped_mode, not_carried
    from ..report.hints import MODES, integer_upstream, next_step
    from ..report.keep_dtype_text import CLI_EXIT_NOTE

    upstream = integer_upstream(verdict, golden if golden is not None else DumpSet([]),
                                result.rows, model)
    hint = next_step(verdict, range_inputs, dumped_mode(result)[0], upstream=upstream)
    if hint.kind != MODES or not hint.reason.startswith(INTEGER_REASON):
        return None
    if not hint.modes:  # the ops computing it are many or not known: diagnose searches them
        return (f"{hint.reason}: {cli_diagnose(verdict, None, result)} tries high precision "
                "and keeping every op in float32, and where that passes names a small set of "
                "ops to keep in float32" + not_carried(result))
    command = cli_diagnose(verdict, hint.modes[0], result)
    if upstream is not None and upstream.cube:
        return (f"{hint.reason}: keep the ops computing them in float32 to see whether float16 "
                f"rounding moves them: {command}{CLI_EXIT_NOTE}; where this mode still fails "
                "at this op, float16 rounding is not the cause" + not_carried(result))
    return (f"{hint.reason}: convert in high precision to see whether float16 rounding moves "
            f"them: {command}{CLI_EXIT_NOTE}; where this mode still fails, it walks on: ops "
            "kept in float32, buffer reuse off, fusion off" + not_carried(result))
