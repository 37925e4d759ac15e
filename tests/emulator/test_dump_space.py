"""Issue 13 D9: a full disk while dumps are written is a BackendError naming the file, the bytes
needed and the bytes free (not a bare ``[Errno 28]``), and leaves no partial dump behind.

The full disk is simulated by a byte budget on the dump writer's file writes: a write past the
budget raises ENOSPC, as ``write(2)`` does on a full file system, and ``shutil.disk_usage``
reports what is left of the budget.
"""
import collections
import errno
import os

import numpy as np
import pytest

from pytest_ascend_accuracy.dump import ascend_bin
from pytest_ascend_accuracy.dump import layout as layout_mod
from pytest_ascend_accuracy.dump.layout import AscendDumpWriter
from pytest_ascend_accuracy.errors import BackendError, DumpWriteError

Usage = collections.namedtuple("Usage", "total used free")


class FullDisk:
    """Dump-file writes share ``budget`` bytes; the write that would pass it raises ENOSPC."""

    def __init__(self, monkeypatch, budget: int):
        self.left = budget
        real_open = open

        disk = self

        class _File:
            def __init__(self, f):
                self._f = f

            def write(self, data):
                n = memoryview(data).nbytes
                if n > disk.left:
                    self._f.write(bytes(memoryview(data).cast("B")[:disk.left]))
                    disk.left = 0
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                disk.left -= n
                return self._f.write(data)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self._f.close()

        def fake_open(path, mode="r", *a, **k):
            f = real_open(path, mode, *a, **k)
            return _File(f) if "w" in mode or "x" in mode else f

        monkeypatch.setattr(ascend_bin, "open", fake_open, raising=False)
        monkeypatch.setattr(layout_mod.shutil, "disk_usage", lambda p: Usage(1 << 30, 1 << 30, self.left))


def test_writer_names_the_file_and_the_bytes_needed_and_free(tmp_path, monkeypatch):
    leaf = tmp_path / "dump" / "20240101000000" / "0" / "net" / "1" / "0"
    writer = AscendDumpWriter(leaf)
    FullDisk(monkeypatch, budget=3_000)
    writer.write_op("Add", "small", [], [np.ones(100, np.float32)])
    with pytest.raises(DumpWriteError) as info:
        writer.write_op("Conv2D", "big", [np.ones((1, 3, 8, 8), np.float16)],
                        [np.ones((1, 20, 8, 8), np.float32)], input_formats=["NC1HWC0"])
    err = info.value
    assert isinstance(err, BackendError) and isinstance(err, OSError) and err.errno == errno.ENOSPC
    # tensor bytes as stored: the input padded to C0=16 channels in NC1HWC0, the output as is
    assert err.needed == 1 * 16 * 8 * 8 * 2 + 20 * 8 * 8 * 4
    assert err.free == 0 and err.path == str(leaf / err.path.rsplit("/", 1)[1])
    text = str(err)
    assert str(leaf) in text and "Conv2D.big." in text and "No space left on device" in text
    assert f"it needs {err.needed} bytes" in text and "0 bytes free" in text
    assert sorted(p.name for p in leaf.iterdir() if p.name.startswith(".")) == []  # no temp file


def test_other_write_errors_name_the_file_too(tmp_path, monkeypatch):
    writer = AscendDumpWriter(tmp_path / "leaf")

    def failing(*a, **k):
        raise OSError(errno.EIO, os.strerror(errno.EIO))
    monkeypatch.setattr(ascend_bin, "write_parsed_dump_file", failing)
    with pytest.raises(DumpWriteError, match="cannot write dump file: Input/output error") as info:
        writer.write_op("Add", "a", [], [np.ones(3, np.float32)])
    assert info.value.errno == errno.EIO and str(tmp_path / "leaf") in str(info.value)


def test_emulator_run_on_a_full_disk(cache, tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
    from pytest_ascend_accuracy.testing import models

    model = models.conv_bn_relu()
    backend = EmulatorBackend(cache)
    converted = backend.convert(model)
    whole = backend.run(converted, make_inputs(model), dump_dir=tmp_path / "ok")
    sizes = [os.path.getsize(op.source) for op in whole.ops]
    FullDisk(monkeypatch, budget=sizes[0] + sizes[1] + 100)  # room for two files and a bit
    root = tmp_path / "full"
    with pytest.raises(DumpWriteError) as info:
        backend.run(converted, make_inputs(model), dump_dir=root)
    err = info.value
    assert isinstance(err, BackendError) and err.errno == errno.ENOSPC
    text = str(err)
    assert str(root) in err.path and "No space left on device" in text
    assert "stopped at operator 'gap'" in text  # the third op: two files fitted
    assert f"needs about {err.needed} bytes" in text and "0 bytes free" in text
    # the estimate covers the tensor data of the whole dump: between its data and its file bytes
    data = sum(_stored_bytes(t) for op in whole.ops for t in op.inputs + op.outputs)
    assert data <= err.needed <= sum(sizes)
    assert not any(p.is_file() for p in root.rglob("*"))  # the partial dump was removed


def _stored_bytes(t):
    n = 1
    for d in t.device_shape:
        n *= d
    return n * np.dtype(t.dtype if t.dtype != "bfloat16" else "float16").itemsize


def test_private_writer_creates_files_in_place_and_a_failed_write_leaves_none(tmp_path, monkeypatch):
    """``AscendDumpWriter(private=True)`` (a run's own fresh step directory): no temp file and
    rename per file, the same bytes, and on a full disk the partial file is removed too."""
    leaf = tmp_path / "leaf"
    shared, private = AscendDumpWriter(tmp_path / "shared"), AscendDumpWriter(leaf, private=True)
    renames = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (renames.append(b), real_replace(a, b))[1])
    arrays = [np.arange(40, dtype=np.float16).reshape(1, 40, 1, 1)], [np.ones(7, np.float32)]
    a = shared.write_op("Conv2D", "c", *arrays, input_formats=["NC1HWC0"], timestamp_us=5)
    b = private.write_op("Conv2D", "c", *arrays, input_formats=["NC1HWC0"], timestamp_us=5)
    assert renames == [a] and a.name == b.name and a.read_bytes() == b.read_bytes()
    FullDisk(monkeypatch, budget=200)
    with pytest.raises(DumpWriteError) as info:
        private.write_op("Add", "big", [], [np.ones(1000, np.float32)])
    assert info.value.errno == errno.ENOSPC
    assert sorted(p.name for p in leaf.iterdir()) == [b.name]  # no partial file, no temp file


def test_private_writer_never_replaces_a_file(tmp_path):
    writer = AscendDumpWriter(tmp_path, private=True)
    path = writer.write_op("Add", "a", [], [np.ones(3, np.float32)], timestamp_us=7)
    before = path.read_bytes()
    again = AscendDumpWriter(tmp_path, private=True)  # a second writer in the same directory
    with pytest.raises(DumpWriteError, match="File exists"):
        again.write_op("Add", "a", [], [np.zeros(5, np.float32)], timestamp_us=7, task_id=1)
    assert path.read_bytes() == before


def test_emulator_writes_its_fresh_leaf_without_renames(cache, tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
    from pytest_ascend_accuracy.testing import models

    model = models.conv_bn_relu()
    backend = EmulatorBackend(cache)
    converted = backend.convert(model)
    renames = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (renames.append(b), real_replace(a, b))[1])
    ds = backend.run(converted, make_inputs(model), dump_dir=tmp_path / "d")
    assert len(ds) == 5 and renames == []
