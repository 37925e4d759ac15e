"""Ctrl-C must end a run as interrupted (exit 2), never as a crash of pytest's own reporting.

CPython 3.11+ can raise ``KeyboardInterrupt`` at an instruction that has no line number (a
loop's backward jump, an ``except ... as e`` clean-up; python/cpython#107901), so that
traceback entry's ``tb_lineno`` is ``None``. pytest's traceback formatting computes
``tb_lineno - 1`` and dies with ``TypeError``; the run then exits 1 with a page of internal
traceback instead of "KeyboardInterrupt". It happens when the signal lands in such an
instruction anywhere below a test, e.g. while a check waits on another xdist worker's cache lock.

The repair gives each such entry the line of the nearest instruction before it that has one,
splicing a new entry into the chain (``tb_next`` is writable; ``tb_lineno`` is not). Works
without pytest.
"""
from __future__ import annotations

from types import CodeType, TracebackType
from typing import Optional


def line_before(code: CodeType, lasti: int) -> int:
    """The line of the last instruction at or before offset ``lasti`` that has one; the
    function's first line when none does (or before Python 3.10, which has no ``co_lines``
    and never a line-less entry)."""
    line = None
    for start, _end, lineno in getattr(code, "co_lines", lambda: ())():
        if start > lasti:
            break
        if lineno is not None:
            line = lineno
    return line if line is not None else code.co_firstlineno


def _repaired(tb: TracebackType) -> TracebackType:
    return TracebackType(tb.tb_next, tb.tb_frame, tb.tb_lasti,
                         line_before(tb.tb_frame.f_code, tb.tb_lasti))


def repair_traceback(tb: Optional[TracebackType]) -> Optional[TracebackType]:
    """``tb`` with every entry that has no line number replaced (in place after the head);
    returns the head, which is a new object only if the head itself had no line number."""
    if tb is None:
        return None
    head = _repaired(tb) if tb.tb_lineno is None else tb
    prev = head
    while prev.tb_next is not None:
        if prev.tb_next.tb_lineno is None:
            prev.tb_next = _repaired(prev.tb_next)
        prev = prev.tb_next
    return head


def repair_exception(exc: Optional[BaseException]) -> Optional[TracebackType]:
    """Repair the tracebacks of ``exc`` and of the causes and contexts it chains to; returns
    ``exc``'s own (possibly new) traceback head."""
    seen: set = set()
    chained = exc
    while chained is not None and id(chained) not in seen:
        seen.add(id(chained))
        chained.__traceback__ = repair_traceback(chained.__traceback__)
        chained = chained.__cause__ or chained.__context__
    return exc.__traceback__ if exc is not None else None
