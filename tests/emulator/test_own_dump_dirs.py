"""Runs given no dump_dir dump into a temporary root the emulator owns and deletes (close(),
collection, exit): a library user's runs leave nothing behind in the temp directory."""
import gc
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.core.modes import DEFAULT  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402


def _roots():
    return set(Path(tempfile.gettempdir()).glob("ascend-accuracy-emulator-*"))


def test_close_and_collection_remove_the_runs(tmp_path):
    model = models.passing_mlp()
    before = _roots()
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    converted = backend.convert(model, DEFAULT)
    first = backend.run(converted, make_inputs(model))
    second = backend.run(converted, make_inputs(model))
    assert first.root != second.root
    made = _roots() - before
    assert len(made) == 1 and Path(first.root).is_relative_to(next(iter(made)))
    backend.close()
    assert not (_roots() - before)
    third = EmulatorBackend(Cache(tmp_path / "cache"))
    third.run(third.convert(model, DEFAULT), make_inputs(model))
    assert _roots() - before
    del third
    gc.collect()
    assert not (_roots() - before)


def test_a_process_that_exits_leaves_nothing(tmp_path):
    code = """
import sys
from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.core.modes import DEFAULT
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
from pytest_ascend_accuracy.testing import models
m = models.passing_mlp()
b = EmulatorBackend(Cache(sys.argv[1]))
d = b.run(b.convert(m, DEFAULT), make_inputs(m))
print(d.root)
"""
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "cache")],
                         capture_output=True, text=True, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().startswith(str(tmp_path))  # it did dump there
    assert not list(tmp_path.glob("ascend-accuracy-emulator-*"))
