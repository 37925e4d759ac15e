"""Shared set-up of the AIPP tests: heavy modules imported once before any pytester run.

pytester's in-process runs drop every module first imported during the inner run, and numpy
cannot be imported twice in one process (see tests/plugin/conftest.py, which does the same).
"""
import importlib
import pkgutil

import hypothesis  # noqa: F401
import numpy  # noqa: F401
import onnx  # noqa: F401
import onnxruntime  # noqa: F401
import pytest

import pytest_ascend_accuracy

for _info in pkgutil.walk_packages(pytest_ascend_accuracy.__path__, "pytest_ascend_accuracy."):
    if _info.name.endswith("fake_atc"):
        continue
    try:
        importlib.import_module(_info.name)
    except Exception:  # a module still being written elsewhere: imported on use instead
        pass


@pytest.fixture
def aipp_project(pytester):
    """A pytester project with ``models/net.onnx`` (conv_bn_relu, input x 1x3x16x16)."""
    from pytest_ascend_accuracy.testing.models import conv_bn_relu

    (pytester.path / "models").mkdir()
    onnx.save(conv_bn_relu(), str(pytester.path / "models" / "net.onnx"))
    return pytester
