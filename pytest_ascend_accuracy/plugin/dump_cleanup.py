"""Dumps of passing tests are removed when the test ends; a failing test keeps its dumps.

``ascend_model(...).run`` and YAML items dump into directories registered on the test item
(``register``); when the call phase passed, ``remove_passed`` deletes them, so a passing check
leaves nothing outside the cache (pytest keeps the temp dirs of the last three sessions, which
held every dump of every test). A failing test's dumps stay for inspection in pytest's temp
dir; its report (``--accuracy-report``) holds copies of the failing tensors
(``report.tensor_copies``), so the report's links do not depend on them.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import List

import pytest

DUMPS_KEY = pytest.StashKey[List[Path]]()


def register(item, directory: Path) -> Path:
    """Remember ``directory`` as holding dumps of ``item``; returns it."""
    dirs = item.stash.setdefault(DUMPS_KEY, [])
    if directory not in dirs:
        dirs.append(directory)
    return directory


def remove_passed(item, report) -> None:
    """After the call phase: delete the item's dump directories when it passed."""
    if report.when != "call" or not report.passed:
        return
    for directory in item.stash.get(DUMPS_KEY, ()):
        shutil.rmtree(directory, ignore_errors=True)
    item.stash[DUMPS_KEY] = []
