"""Ctrl-C whose traceback has an entry without a line number (CPython raises KeyboardInterrupt
at such instructions, python/cpython#107901) ends the run as interrupted, exit 2, not as a
TypeError in pytest's own traceback formatting (seen in CI: Ctrl-C while waiting on a cache
lock exited 1)."""
import sys
import types

import pytest

from pytest_ascend_accuracy.plugin.interrupt_traceback import (
    line_before,
    repair_exception,
    repair_traceback,
)

# before 3.11 the entry built below reads as line -1 (no crash in pytest), and 3.9 has no co_lines
pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="line-less entries read as None from 3.11")

UNLINED = '''import sys, types

def frame_with_an_unlined_instruction():
    try:
        raise ValueError
    except ValueError as e:  # entering this handler has no line number
        pass
    return sys._getframe()

def unlined_entry(tb_next=None):
    frame = frame_with_an_unlined_instruction()
    offset = next(start for start, _end, line in frame.f_code.co_lines() if line is None)
    return types.TracebackType(tb_next, frame, offset, -1)
'''
namespace: dict = {}
exec(compile(UNLINED, "unlined_helper.py", "exec"), namespace)
unlined_entry = namespace["unlined_entry"]
RAISE_LINE = UNLINED.splitlines().index("        raise ValueError") + 1  # last line run before


def _entry_here(tb_next=None):
    frame = sys._getframe()
    return types.TracebackType(tb_next, frame, frame.f_lasti, frame.f_lineno)


def test_the_constructed_entry_really_has_no_line_number():
    assert unlined_entry().tb_lineno is None


def test_line_before_is_the_last_line_at_or_before_the_offset():
    entry = unlined_entry()
    line = line_before(entry.tb_frame.f_code, entry.tb_lasti)
    assert line == RAISE_LINE
    assert line_before(entry.tb_frame.f_code, -1) == entry.tb_frame.f_code.co_firstlineno


def test_repair_splices_a_new_entry_and_keeps_the_rest_of_the_chain():
    tail = _entry_here()
    head = _entry_here(unlined_entry(tail))
    assert repair_traceback(head) is head
    assert head.tb_next.tb_lineno == RAISE_LINE and head.tb_next.tb_next is tail
    assert repair_traceback(None) is None


def test_repair_replaces_an_unlined_head_and_repairs_chained_exceptions():
    context = ValueError("first")
    context.__traceback__ = _entry_here(unlined_entry())
    exc = KeyboardInterrupt()
    exc.__traceback__ = unlined_entry()
    exc.__context__ = context
    head = repair_exception(exc)
    assert head is exc.__traceback__ and head.tb_lineno == RAISE_LINE
    assert context.__traceback__.tb_next.tb_lineno == RAISE_LINE
    assert repair_exception(None) is None


def test_ctrl_c_with_an_unlined_entry_exits_as_interrupted(pytester):
    pytester.makepyfile(unlined_helper=UNLINED)
    pytester.makepyfile(test_interrupted='''
        from unlined_helper import unlined_entry

        def test_waits():
            raise KeyboardInterrupt().with_traceback(unlined_entry())
    ''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == 2, out  # pytest.ExitCode.INTERRUPTED
    assert "KeyboardInterrupt" in out and "TypeError" not in out
    result.stdout.fnmatch_lines([f"*unlined_helper.py:{RAISE_LINE}: KeyboardInterrupt*"])
