"""The ``ascend-accuracy compare`` command that judges a failing check's kept dump again.

Audits 32 and 33 (Magika, openwakeword) looked for the golden a failing check had compared
with: ``cache --entries`` lists goldens of one model and shape alike, and a wrong pick failed
at op #0 and was blamed on float16. The failure names the dump it keeps; the line after it now
names its golden and the command that compares them again, the check's own threshold, metric,
per-op thresholds and ignore list as options, the conversion's om json with them.
"""
from __future__ import annotations

import shlex
from typing import Optional


def compare_again(state, actual, golden, verdict) -> Optional[str]:
    """``"  compare them again: ascend-accuracy compare DUMP GOLDEN --om-json F ..."`` for a
    failing check whose device dump was written and whose golden lies in a folder (a cache
    entry's, a stored golden's), paths as printed; None where either is not on disk."""
    import os

    from ..report.cli_commands import cli_judge_options

    dump = actual.meta.get("dump_dir") or getattr(actual, "root", None)
    folder = getattr(golden, "root", None)
    if not dump or not folder or not os.path.isdir(str(dump)) or not os.path.isdir(
            str(folder)):
        return None
    words = ["ascend-accuracy", "compare", state.settings.show(dump), state.settings.show(folder)]
    om_json = actual.meta.get("om_json")
    if om_json and os.path.isfile(str(om_json)):
        words += ["--om-json", state.settings.show(om_json)]
    return (f"  compare them again: {' '.join(shlex.quote(str(w)) for w in words)}"
            f"{cli_judge_options(verdict)}")


__all__ = ["compare_again"]
