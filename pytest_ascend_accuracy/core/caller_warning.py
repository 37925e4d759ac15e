"""A library warning at the user's own line: the first frame outside this package and pytest's
machinery (a test's ``check_accuracy`` or ``ascend_model`` call), not a line of the plugin's.
pytest's warnings summary then names the user's file and line, as it does for a warning the
test raises itself (a warning at ``plugin/accuracy_check.py:273`` said nothing to a user)."""
from __future__ import annotations

import os
import sys
import warnings

_PACKAGE = os.path.realpath(os.path.dirname(os.path.dirname(__file__)))


def _machinery(filename: str) -> bool:
    """A frame of this package, or of pytest or pluggy where they are loaded (never imported
    here: the library works without pytest)."""
    path = os.path.realpath(filename)
    roots = [_PACKAGE] + [os.path.realpath(os.path.dirname(m.__file__))
                          for m in (sys.modules.get("_pytest"), sys.modules.get("pluggy"))
                          if getattr(m, "__file__", None)]
    return any(path.startswith(root + os.sep) for root in roots)


def warn_at_caller(warning: Warning) -> None:
    """Issue ``warning`` at the first frame outside this package, pytest and pluggy; where there
    is none (a YAML suite's item, the CLI), at the caller of the function that calls this."""
    frame = sys._getframe(1)
    while frame is not None and _machinery(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        warnings.warn(warning, stacklevel=3)
        return
    warnings.warn_explicit(warning, type(warning), frame.f_code.co_filename, frame.f_lineno,
                           module=frame.f_globals.get("__name__"), module_globals=frame.f_globals)


__all__ = ["warn_at_caller"]
