"""Loading, once and up front, the multiprocessing modules a parallel compare uses
(``compare.parallel``), so that nothing imports them a second time.

A host that drops the modules imported meanwhile and lets them be imported again crashes
CPython 3.11 when ``multiprocessing.synchronize`` comes back: its classes subclass the C type
``_multiprocessing.SemLock``, which is never unloaded, and creating them again segfaults in
``type_ready`` now and then (deleting the new modules from ``sys.modules`` and making a
``Value`` again, 200 times: 2 crashes in 4 runs here; cf. python/cpython#94736). pytester's
in-process runs do exactly that: this project's test of a pasted hint, whose inner run forks
its compare, crashed its process in 2-4 of 24 runs under load. Loaded before such a run (the
plugin does it when pytest starts: about 4 ms), the modules are never dropped.
"""
from __future__ import annotations

import sys


def preload_multiprocessing() -> None:
    """Import what ``compare.parallel`` uses of multiprocessing (Linux, where it forks)."""
    if sys.platform.startswith("linux"):
        import multiprocessing.sharedctypes  # noqa: F401  (ctx.Value)
        import multiprocessing.synchronize  # noqa: F401  (the Value's RLock)


__all__ = ["preload_multiprocessing"]
