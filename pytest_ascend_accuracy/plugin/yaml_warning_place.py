"""Where a warning raised while a YAML suite's item runs is shown: the suite file, at its entry's
line (``core.caller_warning.warnings_at``). Such an item has no test function of the user's, so
a warning went to this package's own line (``plugin/yaml_suite.py:470``, H101)."""
from __future__ import annotations

from pathlib import Path


def entry_line(path, name: str, model) -> int:
    """The line of the entry ``name`` (its ``name:``, else its model file's name) in the suite
    at ``path``, from 1; 1 where neither is found."""
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return 1
    for needle in (f"name: {name}", Path(str(model)).name):
        for k, line in enumerate(lines, 1):
            if needle and needle in line:
                return k
    return 1


def warnings_at_entry(path, case):
    """``warnings_at`` the suite file ``path`` and ``case``'s entry line."""
    from ..core.caller_warning import warnings_at

    return warnings_at(str(path), entry_line(path, case.name, case.model))
