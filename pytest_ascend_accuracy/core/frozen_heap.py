"""Garbage collection during a check looks only at what the check made.

CPython's full collection walks every tracked object of the process. After the imports a check
needs (onnx, onnxruntime, numpy, this package) that is ~52,000 objects, ~9-12 ms a walk on the
development VM; a check makes enough lasting objects (a conversion's plan, a golden's 1,100+
tensor records) to set one off, which then took 22-31 ms of a cold PP-OCR cls check of 0.26 s.
Inside ``frozen_heap()`` the objects that existed before it are set aside (``gc.freeze``): a
collection in it walks the check's own objects (1.9 ms for the same one). They return to the
collector when it ends (``gc.unfreeze``), so garbage among them is collected as before, only
later: nothing stays uncollectable once the block has ended.

Nesting is counted (only the outermost block freezes and unfreezes), and a process that froze
objects itself (``gc.get_freeze_count()`` above zero) or runs with the collector disabled is
left exactly as it is.
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

_LOCK = threading.Lock()
_STATE = {"depth": 0, "froze": False}


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Collections inside the block skip the objects that existed when it began."""
    with _LOCK:
        _STATE["depth"] += 1
        if _STATE["depth"] == 1:
            _STATE["froze"] = gc.isenabled() and gc.get_freeze_count() == 0
            if _STATE["froze"]:
                gc.freeze()
    try:
        yield
    finally:
        with _LOCK:
            _STATE["depth"] -= 1
            if _STATE["depth"] == 0 and _STATE["froze"]:
                _STATE["froze"] = False
                gc.unfreeze()


__all__ = ["frozen_heap"]
