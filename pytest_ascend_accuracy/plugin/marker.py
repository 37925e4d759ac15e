"""The ``accuracy`` marker, importable as ``from pytest_ascend_accuracy import accuracy``."""
import pytest

#: ``@accuracy(threshold=0.95, metric="cosine", per_op=None, ignore=(), modes=None)``
accuracy = pytest.mark.accuracy
