"""The ``accuracy`` marker, importable as ``from pytest_ascend_accuracy import accuracy``."""
import pytest

#: ``@accuracy(threshold=0.95, metric="cosine", per_op=None, ignore=(), modes=None,
#: max_drop=None, scale_tolerance=2.0)``
accuracy = pytest.mark.accuracy
