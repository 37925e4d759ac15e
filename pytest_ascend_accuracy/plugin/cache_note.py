"""The cache line's note where a session grew an unbounded cache past ``UNBOUNDED_NOTE_BYTES``
(``session.summary_cache_stats``): what it holds, the ini line that bounds it, spelled for the
project's ini file and section, and the command that prunes it now (audits 32 and 33 filled
project caches with 2.4 and 4.2 GB within an hour, unseen)."""
from __future__ import annotations

import os
from typing import Mapping


def unbounded_note(cache_stats: Mapping) -> str:
    """What an unbounded cache holds where the session says so (``summary_cache_stats``), with
    the ini bound that keeps it and the command that prunes it now, to paste."""
    held = cache_stats.get("held")
    if not isinstance(held, int):
        return ""
    import shlex

    from ..core.cache_size import format_size

    where = shlex.quote(str(cache_stats.get("cache_dir") or ".ascend-accuracy"))
    ini_file = str(cache_stats.get("ini_file") or "")
    ini = os.path.basename(ini_file)
    # a TOML file takes a quoted string (a review: pasted bare, pyproject.toml stopped pytest)
    line = ('ascend_accuracy_cache_size = "2GB"' if ini.endswith(".toml")
            else "ascend_accuracy_cache_size = 2GB")
    section = f" in {_ini_section(ini_file)} of {ini}" if ini else (
        " in a pytest.ini's [pytest] section")
    return (f"; it holds {format_size(held)}, unbounded: {line}{section} keeps it within 2 GB "
            f"(least recently used entries go), ascend-accuracy cache --cache-dir {where} "
            f"--max-size 2GB prunes it now")


def _ini_section(ini_file: str) -> str:
    """The section of ``ini_file`` that holds pytest's settings: pyproject.toml's
    ``[tool.pytest.ini_options]``, or pytest 9's native ``[tool.pytest]`` where the file has
    that one (both stop pytest: a re-review), setup.cfg's ``[tool:pytest]``, else
    ``[pytest]``."""
    name = os.path.basename(ini_file)
    if name == "setup.cfg":
        return "[tool:pytest]"
    if name != "pyproject.toml":
        return "[pytest]"
    try:
        with open(ini_file, encoding="utf-8") as f:
            lines = {raw.strip() for raw in f}
    except OSError:
        lines = set()
    native = "[tool.pytest]" in lines and "[tool.pytest.ini_options]" not in lines
    return "[tool.pytest]" if native else "[tool.pytest.ini_options]"


__all__ = ["unbounded_note"]
