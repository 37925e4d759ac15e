"""What a stored golden's fate means for the test that asked for it (``golden_dump(path=...)``
and a YAML entry's ``golden:``), in one place for both.

A golden written because it was missing fails the test that wrote it (it is no reviewed
reference), and so does any later use of it in the same session, on any xdist worker: a rerun
(pytest-rerunfailures' ``--reruns``) passed against the file its first attempt had just written,
and a fresh CI clone without the goldens went green on every run (H100), as it did for
baselines (``check_flow``, the session's registry ``AccuracyState.note_written``). As for
baselines, a golden ``--accuracy-regen`` rewrote is not one of them: the user asked for it."""
from __future__ import annotations

import os

import pytest

from .session import AccuracyState


def written_this_session_message(shown: str, writer: str) -> str:
    return (f"golden file {shown} was written by this session (by {writer}), not read as it "
            f"was when the session started: a check against it compares with a golden nobody "
            f"has reviewed. Check it in and run the session again to compare against it.")


def settle(state: AccuracyState, target, status: str, shown: str, model_name: str,
           nodeid: str) -> None:
    """Record a write of the stored golden at ``target`` (as the summary lists it); fail the
    test where the golden was missing, or was written earlier in this session."""
    from ..golden import stored as golden_files

    key = os.path.abspath(target)
    if status != golden_files.USED:
        state.record_golden_write(shown, status, nodeid)
    if state.settings.regen.before_use:  # --accuracy-regen-all: every golden is written first
        return
    if status == golden_files.WRITTEN_MISSING:  # (noted under its lock: golden_policy)
        pytest.fail(golden_files.missing_message(shown, model_name), pytrace=False)
    writer = state.written_by(key) if status == golden_files.USED else None
    if writer is not None:
        pytest.fail(written_this_session_message(shown, writer), pytrace=False)


__all__ = ["settle", "written_this_session_message"]
