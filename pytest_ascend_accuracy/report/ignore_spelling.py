"""The ops a check did not compare (no golden tensor), and an ignore list spelled to paste: for
a test (``@accuracy(ignore=[...])``), a YAML suite (``ignore: [...]``) and the command line
(``--ignore NAME``). The hint of a failed check (``hints.next_step``) and the diagnosis
(``triage.coverage``, its text report, the plugin's fix lines) spell them alike."""
from __future__ import annotations

import shlex
from typing import List, Sequence

from ..core.yaml_text import yaml_quoted


def not_compared_ops(verdict) -> List[str]:
    """The ops of ``verdict``'s failures that were not compared, each once (an op with several
    outputs fails once per output), in graph order."""
    from ..compare.result import NOT_COMPARED

    return list(dict.fromkeys(f.row.op_name for f in verdict.failures
                              if f.reason.startswith(NOT_COMPARED)))


def yaml_list(names: Sequence[str]) -> str:
    """``["a", "b"]``: a YAML flow list of ``names``, each quoted (``core.yaml_text``: JSON's
    quoting loaded back another name for one outside the BMP, and a DEL not at all)."""
    return f"[{', '.join(yaml_quoted(n) for n in names)}]"


def ignore_spelled(names: Sequence[str]) -> str:
    """``@accuracy(ignore=['a']) (YAML: ignore: ["a"])``."""
    return f"@accuracy(ignore={list(names)!r}) (YAML: ignore: {yaml_list(names)})"


def ignore_flags(names: Sequence[str]) -> str:
    """``--ignore a --ignore 'b c'``: the command line's, each name quoted for the shell."""
    return " ".join(f"--ignore {shlex.quote(n)}" for n in names)
