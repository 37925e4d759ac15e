"""The CPU emulator backend: an honest model of what ATC and the NPU do to numbers.

``EmulatorBackend(cache, faults=(), overflow="inf")`` converts an ONNX model under a ``Mode``
and runs it with onnxruntime, writing dumps in the real Ascend layout. Modules:
``rounding`` (which precision each op runs in per mode; fp16/bf16 rounding), ``fusion`` (the
named fusion rules), ``faults`` (``Fault`` injection for tests and demos), ``rewrite`` (the
graph rewrite), ``plan`` (what is dumped), ``optypes`` (Ascend op type names), ``backend``.
Names are imported lazily so that importing this package costs nothing.
"""
from __future__ import annotations

_EXPORTS = {"EmulatorBackend": "backend", "Fault": "faults"}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value
