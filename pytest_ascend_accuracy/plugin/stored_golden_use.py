"""What a stored golden's fate means for the test that asked for it (``golden_dump(path=...)``
and a YAML entry's ``golden:``), in one place for both.

A golden written because it was missing fails the test that wrote it (it is no reviewed
reference), and so does any later use of it in the same session, on any xdist worker: a rerun
(pytest-rerunfailures' ``--reruns``) passed against the file its first attempt had just written,
and a fresh CI clone without the goldens went green on every run (H100), as it did for
baselines (``check_flow``, the session's registry ``AccuracyState.note_written``). As for
baselines, a golden ``--accuracy-regen`` rewrote is not one of them: the user asked for it.

One stored golden holds one model's golden on one set of inputs: two tests of a session that
name one path with other inputs (a test parametrized over input shapes, one ``path=``) are
refused before the second reads it (``obtain_held``). One of the two always failed against the
other's golden, and under ``--accuracy-regen`` each rewrote the file the other had written, in
every session (H103): the advice it printed could never end."""
from __future__ import annotations

import os

import pytest

from .registry_text import append_line, registry_text
from .session import AccuracyState


def written_this_session_message(shown: str, writer: str) -> str:
    return (f"golden file {shown} was written by this session (by {writer}), not read as it "
            f"was when the session started: a check against it compares with a golden nobody "
            f"has reviewed. Check it in and run the session again to compare against it.")


def obtain_held(state: AccuracyState, policy, target, compute, identity, nodeid: str):
    """``policy.obtain(target, compute, identity)`` for the test ``nodeid``, refused first where
    this session, on any worker, held ``target`` for other inputs (the session's registry
    ``<key>.held``). The claim is appended before anything is read or written, then the
    registry read: the first claim of ``target`` in the file wins, so of two xdist workers
    that reach one path at once with other inputs exactly one goes on (H106: a claim written
    after the golden was read let both through, to rewrite it in turn under --accuracy-regen)."""
    # (by its real path: the same golden given through a link is one file, H108)
    key, digest = os.path.realpath(target), getattr(identity, "inputs_digest", None)
    if not digest:
        return policy.obtain(target, compute, identity)
    registry = state.session_registry.with_name(f"{state.session_key}.held")
    line = f"{key}\t{digest}\t{identity.input_shape}\t{nodeid}\n"
    try:
        append_line(registry, line)
        lines = registry_text(registry.read_bytes()).splitlines()
    except OSError:  # a read-only cache: the check is then this session's loss only
        lines = []
    for held in lines:
        path, first, shape, holder = (held.split("\t") + ["", "", ""])[:4]
        if path == key:  # the first claim of this path decides
            if first != digest:
                pytest.fail(shared_message(state.settings.show(target), holder, nodeid, shape,
                                           identity.input_shape), pytrace=False)
            break
    return policy.obtain(target, compute, identity)


def shared_message(shown: str, holder: str, nodeid: str, held_shape, shape) -> str:
    inputs = (f"input_shape {held_shape}, this call's {shape}" if str(held_shape) != str(shape)
              else "another seed or inputs file")
    by = "an earlier golden_dump call of this test" if holder == nodeid else holder
    return (f"golden file {shown} is used in this session by {by} with other inputs "
            f"({inputs}): a stored golden holds one model's golden on one set of inputs, so "
            f"each test would fail against the other's, and --accuracy-regen would rewrite it "
            f"for each in turn. Give this test a golden path of its own (golden_dump(..., "
            f"path=...), a YAML entry's golden:)")


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


__all__ = ["obtain_held", "settle", "shared_message", "written_this_session_message"]
