"""Loading, before a pytester in-process run can drop them, the modules whose C extensions load
once per process: numpy and onnx, which the plugin's checks import only when they run.

pytester's in-process runs (``pytester.runpytest``) restore ``sys.modules`` afterwards,
dropping what was first imported inside them. A user's test that runs an accuracy suite
in-process twice, from a test module that imports neither itself, imported them again in its
second run: numpy then raises ``ImportError: cannot load module more than once per process``,
and onnx (its nanobind extension) kills the whole process ("Critical nanobind error: refusing
to add duplicate key ...", SIGABRT, exit 134). Imported once pytester is in the session
(about 0.2 s, in sessions that use pytester only), they are in pytester's snapshot and stay.
"""
from __future__ import annotations

#: imported in this order, each only where it is installed
ONCE_ONLY = ("numpy", "onnx")


def preload_extensions() -> None:
    """Import ``ONCE_ONLY`` now (a missing one is left missing: onnx is an optional extra)."""
    import importlib

    for name in ONCE_ONLY:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


__all__ = ["ONCE_ONLY", "preload_extensions"]
