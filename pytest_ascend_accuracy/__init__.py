"""pytest-ascend-accuracy: accuracy regression tests for ONNX models on Ascend NPUs.

Public names (imported lazily, so that ``pytest --help`` does not pay for numpy/onnx; ``help()``
of each shows its signature and docs):

* ``accuracy`` -- the test marker: ``@accuracy(threshold=0.95, metric="cosine", per_op=None,
  ignore=(), modes=None, max_drop=None, scale_tolerance=2.0)``;
* ``assert_accuracy(actual, golden, threshold=0.95, ...)``, ``compare_dumps(actual, golden)``
  -> ``CompareResult`` (``.judge(...)``), ``load_dump(path)`` -> ``DumpSet``,
  ``AccuracyFailure``;
* conversion modes: ``Mode``, ``keep_dtype([...])``, ``DEFAULT``, ``HIGH_PRECISION``,
  ``BUFFER_OFF``, ``FUSION_OFF`` (combine with ``|``);
* dataset metrics: ``topk_accuracy``, ``assert_metric_close``;
* errors: ``ConfigError`` (bad input naming where), ``DumpFormatError`` (a file that cannot be
  read, naming it).

The pytest fixtures (``ascend_model``, ``golden_dump``, ``check_accuracy``, ...) are listed by
``pytest --fixtures``; the command line by ``ascend-accuracy --help`` (docs/cli.md).
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
