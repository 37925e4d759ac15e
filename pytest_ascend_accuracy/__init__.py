"""pytest-ascend-accuracy: accuracy regression tests for ONNX models on Ascend NPUs.

Public names are imported lazily so that ``pytest --help`` does not pay for numpy/onnx.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "accuracy": ("plugin.marker", "accuracy"),
    "assert_accuracy": ("report.assertion", "assert_accuracy"),
    "AccuracyFailure": ("report.assertion", "AccuracyFailure"),
    "compare_dumps": ("compare.engine", "compare_dumps"),
    "CompareResult": ("compare.result", "CompareResult"),
    "load_dump": ("dump.loader", "load_dump"),
    "DumpSet": ("dump.model", "DumpSet"),
    "Mode": ("core.modes", "Mode"),
    "keep_dtype": ("core.modes", "keep_dtype"),
    "DEFAULT": ("core.modes", "DEFAULT"),
    "HIGH_PRECISION": ("core.modes", "HIGH_PRECISION"),
    "BUFFER_OFF": ("core.modes", "BUFFER_OFF"),
    "FUSION_OFF": ("core.modes", "FUSION_OFF"),
    "DumpFormatError": ("errors", "DumpFormatError"),
    "ConfigError": ("errors", "ConfigError"),
    "assert_metric_close": ("dataset.metrics", "assert_metric_close"),
    "topk_accuracy": ("dataset.metrics", "topk_accuracy"),
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name):
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'pytest_ascend_accuracy' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    globals()[name] = value
    return value
