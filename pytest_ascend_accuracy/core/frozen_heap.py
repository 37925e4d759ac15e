"""Garbage collection during accuracy checks looks only at what the checks made.

CPython's full collection walks every tracked object of the process. After the imports a check
needs (onnx, onnxruntime, numpy, this package) that is ~52,000 objects, ~9-12 ms a walk on the
development VM, more in a pytest session with its collected items; a check makes enough lasting
objects (a conversion's plan, a golden's 1,100+ tensor records) to set one off, which took
22-31 ms of a cold PP-OCR cls check of 0.26 s. Inside ``frozen_heap()`` the objects that existed
when it began -- after one full collection, so no garbage among them -- are set aside
(``gc.freeze``): a collection in it walks only what was made since (1.9 ms for the same one).
They return to the collector when it ends (``gc.unfreeze``).

Use it once around a long stretch (the plugin: a pytest session's test loop), not around each
check: a block's end hands its garbage to the oldest generation without counting it towards the
next full collection, so a block begun right after would freeze that garbage again, and cycles
made by one check would outlive every later one.

Nesting is counted (only the outermost block collects, freezes and unfreezes), and a process
that froze objects itself (``gc.get_freeze_count()`` above zero; on 3.12, above what it was
when this module was imported) or runs with the collector disabled is left exactly as it is.
CPython 3.12.1 starts with 375 objects counted frozen (``python -S -I`` too, and again after
any full collection that follows a ``gc.unfreeze``; 0 on 3.10, 3.11, 3.13), which read as a
user's freeze and left the block off on that release (a trial on four Pythons): on 3.12 the
count at import is the interpreter's own. While the block lasts, ``gc.get_objects()`` and
``gc.get_referrers()`` do not see the frozen objects, and a ``gc.freeze()`` made inside it is
undone with the block's own.
"""
from __future__ import annotations

import gc
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

_LOCK = threading.Lock()
_STATE = {"depth": 0, "froze": False}
#: the freeze count when this module was imported: the interpreter's own (see the docstring);
#: the plugin imports it as pytest loads it, before any conftest could freeze (a review: a
#: conftest's gc.freeze() was taken for the interpreter's and unfrozen at the session's end)
AT_IMPORT = gc.get_freeze_count() if sys.version_info[:2] == (3, 12) else 0
# (only 3.12 starts with a count of its own: elsewhere one found at import is a freeze of the
# process, e.g. a harness that froze its objects before pytest.main(), left as it is: a review)


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Collections inside the block skip the objects that existed when it began."""
    with _LOCK:
        _STATE["depth"] += 1
        if _STATE["depth"] == 1:
            _STATE["froze"] = gc.isenabled() and gc.get_freeze_count() in (0, AT_IMPORT)
            if _STATE["froze"]:
                gc.collect()  # what is garbage now is freed, not set aside
                gc.freeze()
    try:
        yield
    finally:
        with _LOCK:
            _STATE["depth"] -= 1
            if _STATE["depth"] == 0 and _STATE["froze"]:
                _STATE["froze"] = False
                gc.unfreeze()


def refreeze() -> None:
    """Inside the outermost block, where it froze: give the frozen objects back to the
    collector, collect once, and set aside again what is alive. Objects frozen at the block's
    start that have become garbage since are freed here (their finalizers run, and an
    exception one raises reaches ``sys.unraisablehook`` now), not left frozen for the rest of
    the block. Elsewhere (a nested block, one that froze nothing, no block) it does nothing."""
    with _LOCK:
        if _STATE["depth"] == 1 and _STATE["froze"]:
            gc.unfreeze()
            gc.collect()
            gc.freeze()


__all__ = ["frozen_heap", "refreeze"]
