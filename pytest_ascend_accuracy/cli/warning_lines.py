"""How the console script prints a warning: ``ascend-accuracy: AtcQuantWarning: ...``, one line
of its own, without Python's ``FILE:LINE:`` prefix and source line. No user code runs in the
CLI, so ``core.caller_warning`` found no user frame and Python named the console script's own
``sys.exit(main())`` line (``.../bin/ascend-accuracy:8: AtcResizeWarning: ...`` followed by
``  sys.exit(main())``, audit 35), which told the user nothing. Filters are Python's as ever
(``-W``, ``PYTHONWARNINGS``): only the way a shown warning is written changes, and only while
the console script runs (``cli.console_main``): ``main()`` called in a process of its own, a
test's included, shows warnings as that process does (pytest records them)."""
from __future__ import annotations

import contextlib
import sys
import warnings

from .app import PROG


def warning_line(message, category) -> str:
    """The line the CLI prints for a warning of ``category`` with ``message``."""
    return f"{PROG}: {category.__name__}: {message}\n"


@contextlib.contextmanager
def plain_warnings():
    """Within the block, shown warnings are printed as ``warning_line`` to stderr (or the
    ``file`` Python hands over)."""
    before = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        stream = sys.stderr if file is None else file
        try:
            stream.write(warning_line(message, category))
        except (OSError, ValueError):  # a closed stream: Python drops such warnings too
            pass

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = before
