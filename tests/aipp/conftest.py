"""Shared set-up of the AIPP tests (the modules every pytester run needs imported first:
tests/conftest.py, ``_modules_imported_once``)."""
import onnx
import pytest


@pytest.fixture
def aipp_project(pytester):
    """A pytester project with ``models/net.onnx`` (conv_bn_relu, input x 1x3x16x16)."""
    from pytest_ascend_accuracy.testing.models import conv_bn_relu

    (pytester.path / "models").mkdir()
    onnx.save(conv_bn_relu(), str(pytester.path / "models" / "net.onnx"))
    return pytester
