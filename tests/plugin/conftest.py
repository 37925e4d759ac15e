"""Shared helpers for the plugin tests.

pytester's in-process runs drop every module first imported during the inner run; numpy (a C
extension) cannot be imported twice in one process, so the heavy modules are imported here once.
"""
import numpy  # noqa: F401
import onnx  # noqa: F401
import onnxruntime  # noqa: F401

import pytest_ascend_accuracy.backends.ascend.runtime  # noqa: F401
import pytest_ascend_accuracy.plugin  # noqa: F401
