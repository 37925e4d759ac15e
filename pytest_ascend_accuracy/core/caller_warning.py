"""A library warning at the user's own line: the first frame that is not this package's nor the
machinery's that runs a test (pytest, pluggy, xdist, execnet, runpy, the ``pytest`` script or
``python -m pytest``'s ``__main__``), which is a test's ``check_accuracy`` or ``ascend_model``
call. pytest's warnings summary then names the user's file and line, as for a warning the test
raises itself (a warning at ``plugin/accuracy_check.py:273`` said nothing to a user). Frames are
told by their module's name, not by where the file lies: a test suite installed in
site-packages and run with ``--pyargs`` is the user's code (a review: told by location, such a
suite's warnings named a line of this package). Where no user frame exists (a YAML suite's
item, the CLI) the warning is issued at the library's caller, as ``warnings.warn`` would.
Python's once-per-location rule holds (the frame's ``__warningregistry__``: a review saw five
warnings from five calls at one line), and no module source is asked for (a review: passing
the frame's globals made Python ask ``pytest/__main__``'s loader for the source of
``__main__`` under ``python -m pytest``, an ImportError that failed the check)."""
from __future__ import annotations

import contextlib
import contextvars
import functools
import sys
import warnings
from typing import Dict, Optional, Tuple

#: top-level modules whose frames run tests, not write them
_MACHINERY = frozenset({"pytest_ascend_accuracy", "_pytest", "pytest", "pluggy", "xdist",
                        "execnet", "runpy", "importlib", "unittest", "contextlib",
                        "__channelexec__"})  # (an xdist worker's main loop, run by execnet)


def _machinery(frame) -> bool:
    """A frame of this package or of the machinery that runs tests (see the module docstring);
    ``__main__`` counts as machinery where it is pytest's own (the script, ``-m pytest``)."""
    if frame.f_code.co_filename.startswith("<"):  # frozen importlib, exec'd strings
        return True
    name = str(frame.f_globals.get("__name__") or "")
    if name == "__main__":
        spec = frame.f_globals.get("__spec__")
        parent = getattr(spec, "name", "") or ""
        return parent.split(".")[0] in _MACHINERY or _is_pytest_script(frame)
    top = name.split(".")[0]
    return top in _MACHINERY or top in _plugin_packages()


@functools.lru_cache(maxsize=None)
def _plugin_packages() -> frozenset:
    """Top-level packages of the installed pytest plugins (``pytest11`` entry points): a
    fixture of theirs that calls the test's code (pytest-benchmark's ``benchmark.pedantic``)
    is machinery too (a review: the warning named pytest_benchmark/fixture.py:280)."""
    try:
        from importlib.metadata import entry_points

        return frozenset(ep.value.split(":")[0].split(".")[0]
                         for ep in entry_points(group="pytest11"))
    except Exception:  # (metadata unreadable: the fixed list alone)
        return frozenset()


def _is_pytest_script(frame) -> bool:
    """The console script ``pytest``/``py.test``, whose ``__main__`` calls console_main."""
    import os

    return os.path.basename(frame.f_code.co_filename) in ("pytest", "py.test", "pytest.exe")


#: where a warning with no user frame goes instead (``warnings_at``): (file, line) or None
_AT: "contextvars.ContextVar[Optional[Tuple[str, int]]]" = contextvars.ContextVar(
    "ascend_accuracy_warnings_at", default=None)
_REGISTRIES: Dict[str, dict] = {}  # once-per-location registries of those places


@contextlib.contextmanager
def warnings_at(filename: str, lineno: int = 1):
    """A warning issued inside the block with no user frame on the stack (a YAML suite's item:
    pytest, then this package) goes to ``filename:lineno``, not to this package's line (H101)."""
    token = _AT.set((str(filename), int(lineno)))
    try:
        yield
    finally:
        _AT.reset(token)


def warn_at_caller(warning: Warning) -> None:
    """Issue ``warning`` at the first frame of the user's code (see the module docstring)."""
    frame = sys._getframe(1)
    while frame is not None and _machinery(frame):
        frame = frame.f_back
    if frame is None:
        at = _AT.get()
        if at is None:
            warnings.warn(warning, stacklevel=3)
        else:
            warnings.warn_explicit(warning, type(warning), at[0], at[1],
                                   registry=_REGISTRIES.setdefault(at[0], {}))
        return
    registry = frame.f_globals.setdefault("__warningregistry__", {})
    warnings.warn_explicit(warning, type(warning), frame.f_code.co_filename, frame.f_lineno,
                           module=frame.f_globals.get("__name__"), registry=registry)


__all__ = ["warn_at_caller", "warnings_at"]
