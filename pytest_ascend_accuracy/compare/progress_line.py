"""What a long compare shows while it runs, shared by the console script and the plugin: the
line's text and when it may be drawn (not before ``delay`` seconds, so short compares print
nothing; then at most every ``interval`` seconds; the final step always)."""
from __future__ import annotations

import time


class ProgressThrottle:
    """``ready(final)`` says whether to draw now; ``elapsed`` is the time since the start."""

    def __init__(self, delay: float, interval: float):
        self.delay, self.interval = delay, interval
        self.start = time.monotonic()
        self.last = float("-inf")
        self.elapsed = 0.0

    def ready(self, final: bool) -> bool:
        now = time.monotonic() - self.start
        if now < self.delay or (now - self.last < self.interval and not final):
            return False
        self.last = self.elapsed = now
        return True


def compare_progress_text(p, elapsed: float) -> str:
    """``comparing 12/40 tensors (0.31 of 1.02 GB, 2.4 s) conv1`` for a ``CompareProgress``
    (binary GB, 2**30 bytes, as the cache's sizes and ``ascend_accuracy_cache_size`` read)."""
    gb = float(1 << 30)
    name = p.op_name if len(p.op_name) <= 40 else p.op_name[:37] + "..."
    return (f"comparing {p.done}/{p.total} tensors ({p.bytes_done / gb:.2f} of "
            f"{p.bytes_total / gb:.2f} GB, {elapsed:.1f} s) {name}")
