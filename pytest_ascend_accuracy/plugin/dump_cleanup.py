"""Dumps of passing (and xfailed) tests are removed when the test ends; a failing test keeps its
dumps; an interrupted session (Ctrl-C) removes those of the test it interrupted.

``ascend_model(...).run`` and YAML items dump into directories registered on the test item
(``register_dump_dir``); when the call phase passed, ``settle_dumps`` deletes them, so a passing
check leaves nothing outside the cache (pytest keeps the temp dirs of the last three sessions, which
held every dump of every test); the files go in a thread, and the session's end waits for it.
A failing test's dumps stay for inspection in pytest's temp dir; its report
(``--accuracy-report``) holds copies of the failing tensors (``report.tensor_copies``), so the
report's links do not depend on them. A report made while the test function runs is a
subtest's (pytest 9's ``subtests``): it settles nothing, and one that failed keeps the dumps,
as pytest fails the test for it only after the test's own call report is made.
"""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import List

import pytest

DUMPS_KEY = pytest.StashKey[List[Path]]()
#: whether the test function is running (reports made meanwhile are its subtests')
_RUNNING_KEY = pytest.StashKey[bool]()
#: whether a subtest of the running attempt failed
_SUBTEST_FAILED_KEY = pytest.StashKey[bool]()


@contextlib.contextmanager
def running(item):
    """Around the test function's call (``pytest_runtest_call``): its subtests' reports."""
    item.stash[_RUNNING_KEY], item.stash[_SUBTEST_FAILED_KEY] = True, False
    try:
        yield
    finally:
        item.stash[_RUNNING_KEY] = False


def register_dump_dir(item, directory: Path) -> Path:
    """Remember ``directory`` as holding dumps of ``item``; returns it. A directory of that name
    removed with an earlier test's dumps (pytest's numbered temp dirs take a freed number
    again) holds this item's dumps from now on."""
    from .session import get_state

    state = get_state(item.config)
    state.removed_dumps.pop(Path(directory), None)
    state.unsettled_dumps[Path(directory)] = item.nodeid
    dirs = item.stash.setdefault(DUMPS_KEY, [])
    if directory not in dirs:
        dirs.append(directory)
    return directory


def _write(unwritten, report) -> None:
    """Write the dumps of a failed test's runs compared as they ran (``compared_runs``); one
    that cannot be written is said in the test's report, not raised from the hook."""
    for write in unwritten:
        try:
            write()
        except Exception as exc:  # (the test failed already: its report says why)
            report.sections.append(("ascend-accuracy", f"a run's dump could not be written "
                                                       f"for inspection: {exc}"))


def settle_dumps(item, report) -> None:
    """After the call phase: delete the item's dump directories when it passed (gone from
    their place at once, their files in a thread while the next test runs: the session's
    ``core.background_removal``, waited for when the session ends); a failed item keeps them.
    Either way they are settled: ``remove_unsettled`` leaves them alone. A setup that failed
    or skipped settles them too (kept: a fixture may have run the model before it failed)."""
    if report.when != "call" and (report.when != "setup" or report.passed):
        return
    if item.stash.get(_RUNNING_KEY, False):  # a subtest's report: the test's own one settles
        # a failed subtest printed `dump kept: ...` and fails the test (CI trial: removed when
        # the next subtest or the test's own call report passed)
        if report.failed:
            item.stash[_SUBTEST_FAILED_KEY] = True
        return
    from .session import get_state

    state = get_state(item.config)
    # an xfailed test failed as expected: nobody inspects its dumps on a green run
    passed = (report.when == "call" and (report.passed or hasattr(report, "wasxfail"))
              and not item.stash.get(_SUBTEST_FAILED_KEY, False))
    for directory in item.stash.get(DUMPS_KEY, ()):
        state.unsettled_dumps.pop(Path(directory), None)
        unwritten = state.unwritten_runs.pop(Path(directory), ())
        if passed:
            state.remove_dumps(directory, item.nodeid)
        elif report.failed or item.stash.get(_SUBTEST_FAILED_KEY, False):
            _write(unwritten, report)  # runs compared as they ran: a failed test keeps dumps
    if passed:
        item.stash[DUMPS_KEY] = []


def remove_unsettled(state) -> None:
    """At the end of an interrupted session (Ctrl-C): remove the dumps of tests that never
    finished. They neither passed nor failed, nobody inspects them, and pytest keeps the temp
    dirs of three sessions (a det model's interrupted test left 329 MB, 657 MB under -n 2)."""
    for directory, nodeid in list(state.unsettled_dumps.items()):
        state.remove_dumps(directory, nodeid)
    state.unsettled_dumps.clear()
    state.unwritten_runs.clear()
