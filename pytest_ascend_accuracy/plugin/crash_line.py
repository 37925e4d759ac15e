"""The one line pytest prints for an error of this package: the short summary's ``FAILED ... -
<message>``, ``--tb=line``'s ``path:line: <message>``, JUnit's ``<failure message=...>``.

* Where pytest renders the failure itself (``--tb=no``, ``line``, ``native``) the line is the
  error's own text: pytest writes a class outside ``builtins`` with its module, and the line
  read ``FAILED test_m.py::test_ok - pytest_ascend_accuracy.report.assertion.AccuracyF...``.
* Where the plugin shows an accuracy failure as its report block (``report_block``), the line
  is the block's first: as a plain string the block was the line, and under ``CI`` (or
  ``-vv``, or in JUnit's message) pytest printed all of it, the whole report a second time in
  every CI log's short summary.
"""
from __future__ import annotations

from typing import Optional, Tuple

PACKAGE = __name__.split(".")[0]


def own_crash_message(report, excinfo, tbstyle: str) -> None:
    """Set ``report``'s crash message to ``excinfo``'s error's text, when the error is one of
    this package's: its first line where a failure section shows the rest, the whole text
    under ``--tb=no`` and ``--tb=line``, which show none (a ``Fix:`` line after the first was
    printed nowhere else: a review)."""
    exc = excinfo.value
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is None or not type(exc).__module__.startswith(f"{PACKAGE}."):
        return
    text = str(exc).strip() if tbstyle in ("no", "line") else first_text_line(str(exc))
    if text:
        crash.message = text


def first_text_line(text: str) -> str:
    """The first line of ``text`` that holds anything, stripped ("" when none does)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def report_block(text: str, location: Optional[Tuple[str, int, str]]):
    """``text`` shown as is, with ``"path:line: ErrorName"`` (``location``, 1-based line) under
    it, as pytest's failure section shows a failure; its crash line is ``text``'s first line.
    A pytest ``ReprExceptionInfo`` of one native entry, which xdist carries whole."""
    from _pytest._code.code import ReprExceptionInfo, ReprFileLocation, ReprTracebackNative

    body = text + (f"\n\n{location[0]}:{location[1]}: {location[2]}" if location else "")
    headline = first_text_line(text)
    path, lineno = (location[0], location[1]) if location else ("", 0)
    return ReprExceptionInfo(reprtraceback=ReprTracebackNative([body + "\n"]),
                             reprcrash=ReprFileLocation(path, lineno, headline))


__all__ = ["first_text_line", "own_crash_message", "report_block"]
