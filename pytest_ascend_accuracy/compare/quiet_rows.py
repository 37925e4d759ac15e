"""Which compared rows a verdict keeps quiet about though they may feed its failures: those its
policy ignores, and those it passes that the default check fails (a threshold lowered until they
pass). ``fp16_range.failing_ops_past_fp16`` looks at their golden operands too: ``ignore=["norm"]``
hid norm's 1e9 variance, and the printed "threshold that would pass", pasted, did the same."""
from __future__ import annotations

from typing import Tuple

from ..core.check_defaults import DEFAULT_SCALE_TOLERANCE, DEFAULT_THRESHOLD
from .result import judge_row
from .thresholds import Policy


def quiet_rows(verdict, rows) -> Tuple[list, list]:
    """``(ignored, passing)``: the rows the verdict's policy ignores, and those it passes that
    the default check fails (``off_by_default``), in graph order."""
    policy = verdict.policy
    failed = {id(f.row) for f in verdict.failures}
    ignored, passing = [], []
    for r in rows:
        if policy.is_ignored(r.names):
            ignored.append(r)
        elif id(r) not in failed and off_by_default(r):
            passing.append(r)
    return ignored, passing


#: the default check (``core.check_defaults``), which ``off_by_default`` judges passing rows by
_DEFAULT_POLICY = Policy.build(DEFAULT_THRESHOLD, scale_tolerance=DEFAULT_SCALE_TOLERANCE)


def off_by_default(row) -> bool:
    """Whether the default check (cosine 0.95, L2 norm within 0.5-2x the golden's) fails
    ``row``: a passing op whose own values stayed close is no suspect, whatever its operands
    hold (an attention mask's -1e9 turns -inf harmlessly), and naming it would send the user
    to keep an op whose float32 changes nothing."""
    return row.metrics is not None and judge_row(row, _DEFAULT_POLICY)[0] == "failed"
