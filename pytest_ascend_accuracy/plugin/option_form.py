"""A plugin option whose value is given as the next argument and names an existing path
(``--accuracy-cache-dir ../cache``): pytest looks for its ini file before this plugin's options
are known, takes such a value for a path to test, and searches from the common folder of those
paths, so the project's ini file was silently not read (every ``ascend_accuracy_*`` setting
with it, the cache's size bound among them; pytest-dev/pytest#8846), and under ``-n`` workers
that saw the folder appear disagreed on their tests' ids (a review). Refused, naming the file
not read and the ``=`` form to write.
"""
from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Optional

#: this plugin's options that take a value
VALUE_OPTIONS = ("--accuracy-cache-dir", "--accuracy-report", "--accuracy-backend",
                 "--accuracy-threshold", "--accuracy-diagnose-budget", "--accuracy-dump-mode",
                 "--ascend-device", "--ascend-precision-policy", "--soc-version")
#: pytest's ini files, with the section that makes each one pytest's (None: any)
_INI = (("pytest.ini", None), (".pytest.ini", None), ("pyproject.toml", "[tool.pytest"),
        ("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]"))


def check_option_form(config) -> None:
    """``pytest.UsageError`` where a value option's separate value named an existing path and
    the ini file pytest would have read from the invocation folder was not read (module doc)."""
    import pytest

    if getattr(config.option, "inifilename", None):  # -c FILE: the ini file it names is read
        return
    params = config.invocation_params
    args = [str(a) for a in params.args] + shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    base = Path(params.dir)
    for option, value in zip(args, args[1:]):
        if option not in VALUE_OPTIONS or value.startswith("-") or not (base / value).exists():
            continue
        skipped = _ini_not_read(config, base)
        if skipped is not None:
            shown = os.path.relpath(skipped, base) if base in skipped.parents else skipped
            raise pytest.UsageError(
                f"{option} {value}: pytest took {value!r} for a path to test and so did not read "
                f"{shown} (its ini file: every ascend_accuracy_* setting in it was ignored); "
                f"write {option}={value}")


def _ini_not_read(config, base: Path) -> Optional[Path]:
    """The ini file pytest finds from ``base`` upward, where it is not the one it read."""
    read = Path(config.inipath).resolve() if config.inipath else None
    for folder in (base, *base.parents):
        for name, section in _INI:
            path = folder / name
            if not path.is_file():
                continue
            if section is not None:
                try:
                    if section not in path.read_text(encoding="utf-8", errors="replace"):
                        continue
                except OSError:
                    continue
            return None if read is not None and path.resolve() == read else path
    return None
