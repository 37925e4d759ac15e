"""Each source file a traceback passes through, parsed once per process that runs tests (the
suite's harness, never what a test checks).

pytest shows a traceback entry's statement by parsing the entry's whole source file and walking
every node of it (``_pytest._code.source.getstatementrange_ast``): once per entry, and the parse
is kept only for the one report being made. The suite's in-process ``pytester`` runs make
hundreds of such reports: failing inner tests, and every inner run that ends on a collection
error, for which pytest renders the whole ``Interrupted`` traceback through its own main.py,
runner.py and pluggy (the terminal reporter's ``pytest_keyboard_interrupt`` does, though it
prints only the message). In tests/plugin under ``-n 2`` that was 13.5 s of CPU (268 and 179
reports on the two workers, measured 2026-12-06), nearly all of it in this function, over the
same few dozen files.

``parse_once`` parses each text once and memoizes the statement found by the text and the line
asked for: the result is a function of those alone (the ``astnode`` pytest passes is its own
parse of the same text, from the same report), so what the reports show is what it was.
"""
from __future__ import annotations

import _pytest._code.code
import _pytest._code.source

#: what ``parse_once`` replaces, as this module found it
REAL = _pytest._code.source.getstatementrange_ast


def parse_once(monkeypatch) -> None:
    """Install the memoization for this process (undone with ``monkeypatch``)."""
    parsed, ranges = {}, {}

    def getstatementrange_ast(lineno, source, assertion=False, astnode=None):
        text = str(source)
        key = (text, lineno, assertion)
        if key not in ranges:
            ranges[key] = REAL(lineno, source, assertion, parsed.get(text, astnode))
            parsed[text] = ranges[key][0]
        return ranges[key]

    for module in (_pytest._code.source, _pytest._code.code):
        monkeypatch.setattr(module, "getstatementrange_ast", getstatementrange_ast)
