"""A read-only cache directory and a full disk: a clear error naming the path and the reason,
nothing half-written in place, no lock held, and everything works again once there is room.

Tests run as root here, and ``chmod`` does not stop root, so "read-only" is produced three
ways: a file where the cache directory should be, a monkeypatched ``mkdir`` failing with EROFS,
and (where the test may mount file systems) a real read-only bind mount. A full disk is a real
1 MiB tmpfs where mounting is allowed, and a write that raises ENOSPC otherwise.
"""
import errno
import os
import subprocess
import uuid
from pathlib import Path

import numpy as np
import pytest

from pytest_ascend_accuracy.core import cache as cache_mod
from pytest_ascend_accuracy.golden import stored as golden_files
from pytest_ascend_accuracy.baseline.check import check_baseline
from pytest_ascend_accuracy.baseline.file import BaselineWriteError, InputSpec
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.dump.layout import AscendDumpWriter
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.core.atomic_files import GoldenWriteError
from pytest_ascend_accuracy.core.regen import Regen
from pytest_ascend_accuracy.errors import CacheError

from .procs import lock_is_free

pytestmark = pytest.mark.reliability
KEY = "ab" + "1" * 62
HEADER = {"backend": "emulator", "toolkit_version": "t", "soc_version": "s", "atc_args": []}
SPEC = InputSpec(seed=0, tensors=())


def _writes(n_bytes):
    def build(tmp):
        (tmp / "model.om").write_bytes(b"\1" * n_bytes)
    return build


def _mount(args, target):
    try:
        r = subprocess.run(["mount", *args, str(target)], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


@pytest.fixture
def tiny_disk(tmp_path):
    """A real 1 MiB file system (tmpfs); skipped where this process may not mount."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if not _mount(["-t", "tmpfs", "-o", "size=1m", "tmpfs"], mnt):
        pytest.skip("cannot mount a tmpfs here (needs root / CAP_SYS_ADMIN)")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=30)


@pytest.fixture
def read_only(tmp_path):
    """A directory that is a real read-only bind mount of ``tmp_path/src``."""
    src, mnt = tmp_path / "src", tmp_path / "ro"
    src.mkdir()
    mnt.mkdir()
    if not (_mount(["--bind", str(src)], mnt) and _mount(["-o", "remount,ro,bind"], mnt)):
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=30)
        pytest.skip("cannot make a read-only bind mount here (needs root / CAP_SYS_ADMIN)")
    yield src, mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=30)


# --------------------------------------------------------------------------- read-only cache
def test_file_where_the_cache_directory_should_be(tmp_path):
    root = tmp_path / "cache"
    root.write_text("not a directory")
    cache = Cache(root)
    assert cache.lookup("om", KEY) is None
    with pytest.raises(CacheError) as info:
        cache.get_or_build("om", KEY, _writes(10))
    assert str(root) in str(info.value) and "cannot create entries" in str(info.value)
    assert root.read_text() == "not a directory"


def test_mkdir_refused_with_erofs(tmp_path, monkeypatch):
    def refuse(self, *a, **k):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
    monkeypatch.setattr(Path, "mkdir", refuse)
    with pytest.raises(CacheError, match="Read-only file system"):
        Cache(tmp_path / "cache").get_or_build("om", KEY, _writes(10))
    assert not (tmp_path / "cache").exists()


def test_real_read_only_mount_serves_entries_and_refuses_builds(read_only):
    src, mnt = read_only
    Cache(src).get_or_build("om", KEY, _writes(100))  # prebuilt while writable
    cache = Cache(mnt)
    calls = []
    entry = cache.get_or_build("om", KEY, lambda tmp: calls.append(tmp))
    assert calls == [] and (entry / "model.om").read_bytes() == b"\1" * 100  # a hit needs no write
    other = "cd" + "2" * 62
    with pytest.raises(CacheError) as info:
        cache.get_or_build("om", other, _writes(10))
    assert "Read-only file system" in str(info.value) and str(mnt) in str(info.value)
    assert cache.lookup("om", other) is None


def test_baseline_in_a_read_only_directory(read_only):
    from test_baseline_helpers import make_result

    src, mnt = read_only
    with pytest.raises(BaselineWriteError, match="Read-only file system") as info:
        check_baseline(make_result(), mnt / "mlp" / "default.yaml", header=HEADER, inputs=SPEC)
    assert info.value.path == str(mnt / "mlp" / "default.yaml")


def test_stored_golden_in_a_read_only_directory(read_only):
    """It named only the hidden temp directory (``OSError: [Errno 30] ... .mlp.tmp-...``)."""
    src, mnt = read_only
    golden_files.store_golden(src / "mlp", DumpSet.from_arrays({"a": [np.ones(3)]}))
    policy = golden_files.GoldenPolicy(Regen.ALL, show=lambda p: "tests/golden/mlp")
    with pytest.raises(GoldenWriteError) as info:
        policy.obtain(mnt / "mlp", lambda: DumpSet.from_arrays({"a": [np.zeros(3)]}))
    assert str(info.value) == ("tests/golden/mlp: cannot write stored golden: Read-only file "
                               "system; the golden in place is unchanged")
    assert info.value.errno == errno.EROFS


@pytest.mark.parametrize("stored", [False, True])
def test_a_baseline_write_error_names_the_file_as_shown(tmp_path, monkeypatch, stored):
    """It named the absolute path where every other message names it relative to where pytest
    ran; the stored inputs' directory is named beside it."""
    from pytest_ascend_accuracy.baseline import inputs as baseline_inputs
    from pytest_ascend_accuracy.baseline.inputs import input_spec
    from test_baseline_helpers import make_result

    def refuse(*args):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), "/elsewhere/.tmp")

    if stored:
        monkeypatch.setattr(baseline_inputs, "write_stored", refuse)
    else:
        monkeypatch.setattr(os, "replace", refuse)  # atomic_write_text's rename into place
    spec = input_spec({"x": np.zeros(3, np.float32)}, stored=True) if stored else SPEC
    with pytest.raises(BaselineWriteError) as info:
        check_baseline(make_result(), tmp_path / "mlp" / "default.yaml", header=HEADER,
                       inputs=spec, shown="accuracy-baselines/mlp/default.yaml")
    named = "default.inputs" if stored else "default.yaml"
    assert info.value.path == f"accuracy-baselines/mlp/{named}" and info.value.errno == errno.EROFS
    assert "Read-only file system" in info.value.problem


# --------------------------------------------------------------------------- full disk
def test_cache_build_on_a_full_disk(tiny_disk):
    cache = Cache(tiny_disk / "cache")
    with pytest.raises(CacheError) as info:
        cache.get_or_build("om", KEY, _writes(2 << 20))
    assert "No space left on device" in str(info.value) and KEY in str(info.value)
    final = cache.entry_path("om", KEY)
    assert not final.exists() and list(final.parent.iterdir()) == []  # temp dir removed
    assert lock_is_free(tiny_disk / "cache" / ".locks" / f"om-{KEY}.lock")
    entry = cache.get_or_build("om", KEY, _writes(1000))  # room again: builds fine
    assert (entry / "model.om").stat().st_size == 1000


def test_manifest_write_hits_enospc(tmp_path, monkeypatch):
    real_open = open

    def full_open(path, mode="r", *a, **k):
        if "w" in mode and str(path).endswith(".part"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real_open(path, mode, *a, **k)
    monkeypatch.setattr(cache_mod, "open", full_open, raising=False)
    cache = Cache(tmp_path / "cache")
    with pytest.raises(CacheError, match="No space left on device"):
        cache.get_or_build("om", KEY, _writes(10))
    final = cache.entry_path("om", KEY)
    assert not final.exists() and list(final.parent.iterdir()) == []


def test_golden_build_in_the_cache_hits_enospc(tmp_path, monkeypatch):
    from pytest_ascend_accuracy.dump import npy_writer
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.testing import models

    real_save = npy_writer.write_npy
    saved = []

    def save(f, arr):
        saved.append(1)
        if len(saved) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_save(f, arr)
    monkeypatch.setattr(npy_writer, "write_npy", save)
    cache = Cache(tmp_path / "cache")
    inputs = {"x": np.ones((1, 16), np.float32)}
    with pytest.raises(CacheError, match="No space left on device"):
        golden_dump(models.passing_mlp(), inputs, cache=cache)
    assert [p for p in (tmp_path / "cache" / "golden").rglob("*") if p.is_file()] == []
    monkeypatch.setattr(npy_writer, "write_npy", real_save)
    assert len(golden_dump(models.passing_mlp(), inputs, cache=cache)) == len(models.passing_mlp().graph.node)


def test_baseline_on_a_full_disk_keeps_the_old_file(tiny_disk):
    from test_baseline_helpers import make_result

    path = tiny_disk / "mlp" / "default.yaml"
    check_baseline(make_result(), path, header=HEADER, inputs=SPEC)
    before = path.read_bytes()
    (tiny_disk / "filler").write_bytes(b"\0" * ((1 << 20) - 3 * 4096))
    names = tuple(f"op_{'x' * 200}_{i}" for i in range(200))  # ~60 kB of baseline lines
    with pytest.raises(BaselineWriteError, match="No space left on device"):
        check_baseline(make_result(extra=names), path, header=HEADER, inputs=SPEC, regen="all")
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["default.yaml"]


def test_dump_writer_on_a_full_disk_leaves_only_whole_files(tiny_disk):
    leaf = tiny_disk / "dump" / "20240101000000" / "0" / "net" / "1" / "0"
    writer = AscendDumpWriter(leaf)
    writer.write_op("Add", "small", [], [np.ones(100, np.float32)])
    with pytest.raises(OSError) as info:
        writer.write_op("Add", "huge", [], [np.ones(1 << 19, np.float32)])  # 2 MiB
    assert info.value.errno == errno.ENOSPC
    assert [p.name for p in leaf.iterdir() if p.name.startswith(".")] == []  # temp file removed
    assert load_dump(leaf).names == ["small"]


def test_stored_golden_on_a_full_disk_keeps_the_old_one(tiny_disk):
    """The error names the golden (it was a bare ``OSError`` naming nothing, review finding)."""
    path = tiny_disk / "goldens" / "mlp"
    golden_files.store_golden(path, DumpSet.from_arrays({"a": [np.ones(3)]}))
    with pytest.raises(GoldenWriteError) as info:
        golden_files.store_golden(path, DumpSet.from_arrays({"a": [np.zeros(1 << 18)]}))
    assert info.value.errno == errno.ENOSPC and info.value.path == str(path)
    assert info.value.problem == ("cannot write stored golden: No space left on device; the "
                                  "golden in place is unchanged")
    np.testing.assert_array_equal(golden_files.read_golden(path)["a"].output().load(), 1.0)
    assert sorted(p.name for p in path.parent.iterdir()) == ["mlp"]


def test_enospc_fake_when_no_tmpfs(tmp_path, monkeypatch):
    """The same cache guarantee without a mount: the build's own write fails with ENOSPC."""
    def build(tmp):
        with open(tmp / "model.om", "wb") as f:
            f.write(b"\1" * 1000)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp / "model.om"))
    cache = Cache(tmp_path / f"cache-{uuid.uuid4().hex[:4]}")
    with pytest.raises(CacheError, match="No space left on device"):
        cache.get_or_build("om", KEY, build)
    assert not cache.entry_path("om", KEY).exists()
    assert list(cache.entry_path("om", KEY).parent.iterdir()) == []


def test_npy_writer_reports_enospc_on_a_full_disk(tiny_disk):
    """Found by this suite: ``np.save`` to a real file on a full disk raised
    ``OSError('262144 requested and 130544 written')`` without errno (ndarray.tofile), so the
    cache said neither "No space left on device" nor anything a user could act on."""
    from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter

    with pytest.raises(OSError) as info:
        NpyDumpWriter(tiny_disk / "g").write_op("big", [], [np.zeros(1 << 18)])
    assert info.value.errno == errno.ENOSPC
    assert list((tiny_disk / "g").iterdir()) == []


def test_stored_inputs_on_a_full_disk(tiny_disk):
    from pytest_ascend_accuracy.baseline.inputs import input_spec
    from test_baseline_helpers import make_result

    path = tiny_disk / "mlp" / "default.yaml"
    spec = input_spec({"x": np.zeros((1 << 18,), np.float64)}, stored=True)  # 2 MiB
    with pytest.raises(BaselineWriteError, match="cannot write stored inputs: No space left"):
        check_baseline(make_result(), path, header=HEADER, inputs=spec)
    assert sorted(p.name for p in path.parent.iterdir()) == []
