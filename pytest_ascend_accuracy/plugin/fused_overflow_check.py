"""The plugin's one call for ``report.fused_overflow``: the warning, given what the converter
recorded of the run (``backends.emulator.unfused_precision``: the passes that fused each op and
the members an unfused run of the test's mode rounds to float16) and the test's own modes (where
they hold the unfused run, nothing is said). ``failure``: the check's failure (or a baseline
failure's text holder), which keeps its own text under ``-W error``, the warning appended."""
from __future__ import annotations

from typing import Optional


def warn_fused(result, golden, verdict, actual, mode, spec, label: str, one_model: bool,
               failure=None) -> Optional[str]:
    from ..backends.emulator.unfused_precision import fused_op_facts
    from ..report.fused_overflow import warn_fused_overflow

    return warn_fused_overflow(result, golden, verdict, mode, label, one_model, failure,
                               facts=fused_op_facts(actual, mode),
                               test_modes=getattr(spec, "modes", ()) or ())


__all__ = ["warn_fused"]
