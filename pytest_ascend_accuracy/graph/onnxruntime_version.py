"""The onnxruntime this package's golden and emulated runs can trust: 1.21 or newer.

Measured against older ones (a venv per version, this suite at the oldest declared
dependencies): before 1.17 onnxruntime drops a Cast to float16 and back even with every
optimisation off (onnxruntime#17565, fixed in 1.17), and that round trip is how the emulator
makes a tensor float16, so float16 overflows went unseen; up to 1.20 BatchNormalization with an
infinite variance gives NaN where 1.21 gives the bias; and a model's external-data weights are
not found when the model is passed as bytes with their folder set. ``require_onnxruntime`` is
what every session of this package asks for (``onnx_graph.session_options``, the shared arena).
"""
from __future__ import annotations

#: the oldest onnxruntime whose runs this package's golden and emulator can trust
#: (``require_onnxruntime``)
MIN_ONNXRUNTIME = (1, 21)
_ORT_CHECKED: list = []


def require_onnxruntime():
    """The ``onnxruntime`` module, once its version is checked (``ConfigError`` when older than
    ``MIN_ONNXRUNTIME``; the check runs once per process)."""
    try:
        import onnxruntime as ort
    except ModuleNotFoundError as exc:
        if exc.name != "onnxruntime":
            raise
        raise _not_installed("onnxruntime") from None

    if not _ORT_CHECKED:
        from ..core.versions import version_numbers

        numbers = version_numbers(ort.__version__)
        if numbers and numbers < MIN_ONNXRUNTIME:
            from ..errors import ConfigError

            need = ".".join(map(str, MIN_ONNXRUNTIME))
            raise ConfigError("onnxruntime", (
                f"version {ort.__version__} is installed; the golden and emulated runs need "
                f"{need} or newer: before 1.17 it drops the Cast to float16 and back that "
                f"emulates the NPU's float16 (onnxruntime#17565), so float16 overflows go "
                f"unseen, and before {need} BatchNormalization with an infinite variance gives "
                f"NaN and external-data weights are not found. "
                f"pip install 'onnxruntime>={need}'"))
        _ORT_CHECKED.append(True)
    return ort


def require_onnx():
    """The ``onnx`` module, or a ``ConfigError`` saying what to install (a bare
    ``ModuleNotFoundError`` stopped a session's collection, naming no extra: a trial)."""
    try:
        import onnx
    except ModuleNotFoundError as exc:
        if exc.name != "onnx":
            raise
        raise _not_installed("onnx") from None
    return onnx


def _not_installed(name: str):
    from ..errors import ConfigError

    need = ".".join(map(str, MIN_ONNXRUNTIME))
    return ConfigError(name, f"{name} is not installed; every golden and emulated run needs onnx "
                             f"and onnxruntime {need} or newer: pip install "
                             f"'pytest-ascend-accuracy[onnx]' (from a clone: pip install -e "
                             f"'.[onnx]')")


__all__ = ["MIN_ONNXRUNTIME", "require_onnx", "require_onnxruntime"]
