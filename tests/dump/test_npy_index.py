"""A private NpyDumpWriter (a cache build's temp dir) writes the same files as the atomic one,
hashes them as it writes, and its index reads back as the very DumpSet ``read_npy_dir`` lists."""
import errno
import json

import numpy as np
import pytest

from pytest_ascend_accuracy.core.cache import HASH, file_digest, new_hasher
from pytest_ascend_accuracy.dump import npy_writer
from pytest_ascend_accuracy.dump.npy_dir import INPUT_REFS_FILE, read_npy_dir
from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter
from pytest_ascend_accuracy.dump.npy_index import read_indexed_dir, write_index
from pytest_ascend_accuracy.errors import DumpFormatError


def _write_tricky(directory, **kw):
    """Names msit cannot tell apart, a name over 255 bytes (mapping.csv), input refs, and
    tensors of every shape kind: 0-d, empty, Fortran order, bool, float16, int64."""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    ts = iter(range(1_000_000_000_000_001, 1_000_000_000_000_100))
    with NpyDumpWriter(directory, **kw) as w:
        first = w.write_op("a.b", [a], [a * 2, np.float32(3.5)], timestamp_us=next(ts))
        w.write_op("a_b", [first[0], np.zeros((0, 3), np.int64)], [np.asfortranarray(a.T + 1)],
                   timestamp_us=next(ts))
        w.write_op("input_x", [first[1]], [np.array([True, False])], timestamp_us=next(ts))
        w.write_op("x" * 300, [first[0]], [np.ones((2, 2), np.float16)], timestamp_us=next(ts))
        w.write_op("line\nbreak", [], [np.arange(5, dtype=np.int64)], timestamp_us=next(ts))
        w.write_op("only_inputs", [first[0]], [], timestamp_us=next(ts))
    return w


def test_private_writer_writes_the_same_files_as_the_atomic_one(tmp_path):
    _write_tricky(tmp_path / "atomic")
    _write_tricky(tmp_path / "private", private=True)
    names = sorted(p.name for p in (tmp_path / "atomic").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "private").iterdir())
    assert {"mapping.csv", "op_names.csv", INPUT_REFS_FILE} <= set(names)
    for name in names:
        assert (tmp_path / "atomic" / name).read_bytes() == (tmp_path / "private" / name).read_bytes()


def test_the_index_reads_back_as_read_npy_dir(tmp_path):
    w = _write_tricky(tmp_path / "d", private=True)
    write_index(tmp_path / "index.json", w.index())
    listed = read_npy_dir(tmp_path / "d")
    indexed = read_indexed_dir(tmp_path / "d", tmp_path / "index.json")
    assert indexed == listed  # ops, names, order, every tensor's shape/dtype/source; meta
    assert len(listed) == 6 and "x" * 300 in listed and "line\nbreak" in listed
    for x, y in zip(listed.ops, indexed.ops):
        for t, u in zip(x.inputs + x.outputs, y.inputs + y.outputs):
            np.testing.assert_array_equal(t.load(), u.load())
            assert t.loader.span == u.loader.span  # the compare engine reads the same bytes


def test_written_digests_are_the_files_digests(tmp_path):
    w = _write_tricky(tmp_path / "d", private=True, hasher=new_hasher)
    npy = sorted(p.name for p in (tmp_path / "d").glob("*.npy"))
    assert sorted(w.digests) == npy
    for name, (size, digest) in w.digests.items():
        assert (tmp_path / "d" / name).stat().st_size == size
        assert file_digest(tmp_path / "d" / name, HASH) == digest


def test_a_bad_index_is_an_error_naming_it(tmp_path):
    w = _write_tricky(tmp_path / "d", private=True)
    index = w.index()
    (tmp_path / "v.json").write_text(json.dumps({"version": 99, **index}))
    with pytest.raises(DumpFormatError, match="v.json.*version 99"):
        read_indexed_dir(tmp_path / "d", tmp_path / "v.json")
    index["refs"].append(["input_q.0.1.npy", "gone.npy"])
    write_index(tmp_path / "r.json", index)
    with pytest.raises(DumpFormatError, match="r.json.*gone.npy"):
        read_indexed_dir(tmp_path / "d", tmp_path / "r.json")


@pytest.mark.parametrize("stored", ["sub/a.0.1.npy", "../x.0.1.npy", "sub\\a.0.1.npy", ".."])
def test_an_index_naming_a_file_outside_its_directory_is_refused(tmp_path, stored):
    """Listing a directory finds only its own files; its index may name nothing else (a name
    with a folder in it would be read from beside or below the directory)."""
    w = _write_tricky(tmp_path / "d", private=True)
    index = w.index()
    index["files"][stored] = next(iter(index["files"].values()))
    write_index(tmp_path / "i.json", index)
    with pytest.raises(DumpFormatError, match=r"i\.json.*not a file name of the directory"):
        read_indexed_dir(tmp_path / "d", tmp_path / "i.json")


def test_the_index_applies_the_readers_checks(tmp_path):
    """A header the reader refuses is refused from the index too (same error)."""
    w = _write_tricky(tmp_path / "d", private=True)
    index = w.index()
    stored = sorted(index["files"])[0]
    index["files"][stored][5] = 10  # a size too small for the shape: truncated
    write_index(tmp_path / "i.json", index)
    with pytest.raises(DumpFormatError, match="truncated"):
        read_indexed_dir(tmp_path / "d", tmp_path / "i.json")


def test_private_writer_buffers_refs_until_close_and_drops_a_failed_file(tmp_path, monkeypatch):
    a = np.ones(4, np.float32)
    w = NpyDumpWriter(tmp_path, private=True)
    p = w.write_op("p", [], [a])[0]
    w.write_op("q", [p], [a])
    assert not (tmp_path / INPUT_REFS_FILE).exists()  # one write at close, not one per row
    w.close()
    assert (tmp_path / INPUT_REFS_FILE).read_text().splitlines() == [f"input_q.0.{w._clock.last}.npy,{p.name}"]

    def full(f, arr):
        f.write(b"\x93NUMPY")
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(npy_writer, "write_npy", full)
    d = tmp_path / "full"
    with pytest.raises(OSError) as info, NpyDumpWriter(d, private=True) as w2:
        w2.write_op("r", [], [a])
    assert info.value.errno == errno.ENOSPC
    assert list(d.iterdir()) == []  # no partial file, and no input_refs.csv after a failure
