"""Where a warning raised while a YAML suite's item runs is shown: the suite file, at its entry's
line (``core.caller_warning.warnings_at``). Such an item has no test function of the user's, so
a warning went to this package's own line (``plugin/yaml_suite.py:470``, H101). The entry is the
item's own (``CaseKeys.entry``: ``models[N]``), found in the composed YAML with its line: a text
search for its name or model found another entry's line (H102)."""
from __future__ import annotations

import re
from pathlib import Path

_ENTRY = re.compile(r"models\[(\d+)\]")


def entry_line(path, entry: str) -> int:
    """The line (from 1) where ``entry`` (``models[N]``) of the suite at ``path`` begins; 1
    where it cannot be told."""
    match = _ENTRY.fullmatch(entry or "")
    if match is None:
        return 1
    try:
        import yaml

        root = yaml.compose(Path(path).read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
        models = next(v for k, v in root.value if k.value == "models")
        return models.value[int(match.group(1))].start_mark.line + 1
    except Exception:  # (the suite was read and checked before: this is only a place to show)
        return 1


def warnings_at_entry(path, case):
    """``warnings_at`` the suite file ``path`` and ``case``'s entry line."""
    from ..core.caller_warning import warnings_at

    keys = getattr(case, "keys", None)
    return warnings_at(str(path), entry_line(path, getattr(keys, "entry", "")))
