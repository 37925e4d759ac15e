"""A library warning at the user's own line: the first frame outside this package and any
installed or standard-library code (pytest, pluggy, xdist, execnet, runpy, the ``pytest``
script), which is a test's ``check_accuracy`` or ``ascend_model`` call. pytest's warnings
summary then names the user's file and line, as for a warning the test raises itself (a warning
at ``plugin/accuracy_check.py:273`` said nothing to a user). Where no such frame exists (a YAML
suite's item, the CLI) the warning is issued at the library's caller, as ``warnings.warn``
would. Python's once-per-location rule holds (the frame's ``__warningregistry__``: a review
saw five warnings from five calls at one line), and no module source is asked for (a review:
passing the frame's globals made Python ask ``pytest/__main__``'s loader for the source of
``__main__`` under ``python -m pytest``, an ImportError that failed the check)."""
from __future__ import annotations

import os
import sys
import sysconfig
import warnings

_PACKAGE = os.path.realpath(os.path.dirname(os.path.dirname(__file__)))


def _installed_roots():
    roots = {_PACKAGE}
    for key in ("stdlib", "platstdlib", "purelib", "platlib", "scripts"):
        try:
            roots.add(os.path.realpath(sysconfig.get_path(key)))
        except (KeyError, TypeError):
            continue
    for m in (sys.modules.get("_pytest"), sys.modules.get("pluggy")):  # also where not installed
        if getattr(m, "__file__", None):
            roots.add(os.path.realpath(os.path.dirname(m.__file__)))
    return tuple(roots)


def _machinery(filename: str, roots) -> bool:
    """A frame of this package, of installed or standard-library code, or a frozen module."""
    if filename.startswith("<"):
        return True
    path = os.path.realpath(filename)
    return any(path == root or path.startswith(root + os.sep) for root in roots)


def warn_at_caller(warning: Warning) -> None:
    """Issue ``warning`` at the first frame of the user's code (see the module docstring)."""
    roots = _installed_roots()
    frame = sys._getframe(1)
    while frame is not None and _machinery(frame.f_code.co_filename, roots):
        frame = frame.f_back
    if frame is None:
        warnings.warn(warning, stacklevel=3)
        return
    registry = frame.f_globals.setdefault("__warningregistry__", {})
    warnings.warn_explicit(warning, type(warning), frame.f_code.co_filename, frame.f_lineno,
                           module=frame.f_globals.get("__name__"), registry=registry)


__all__ = ["warn_at_caller"]
