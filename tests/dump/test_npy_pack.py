"""``NpyDumpWriter(pack=...)``: every tensor appended to one file as the ``.npy`` record it would
have been, read back through the index into the DumpSet a directory of those files gives."""
import numpy as np
import pytest

from pytest_ascend_accuracy.core.cache import new_hasher
from pytest_ascend_accuracy.dump.file_span import span_of
from pytest_ascend_accuracy.dump.npy_dir import read_npy_dir
from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter
from pytest_ascend_accuracy.dump.npy_index import read_indexed_dir, write_index
from pytest_ascend_accuracy.errors import DumpFormatError

TENSORS = {
    "scalar": np.array(3.5, np.float32),
    "empty": np.zeros((0, 4), np.float16),
    "fortran": np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4)),
    "ints": np.arange(7, dtype=np.int64),
    "flags": np.array([True, False, True]),
    "big": np.random.default_rng(0).standard_normal((64, 300)).astype(np.float32),
}


def _write(directory, **kwargs):
    with NpyDumpWriter(directory, private=True, **kwargs) as w:
        first = w.write_op("first", [], [TENSORS["scalar"], TENSORS["empty"]], timestamp_us=1)
        w.write_op("second", [first[0], TENSORS["fortran"]], [TENSORS["ints"]], timestamp_us=2)
        w.write_op("third", [TENSORS["flags"]], [TENSORS["big"]], timestamp_us=3)
    write_index(directory.parent / f"{directory.name}.index.json", w.index())
    return w


def test_a_pack_reads_back_as_the_directory_of_files(tmp_path):
    packed = _write(tmp_path / "packed", pack="tensors.pack", hasher=new_hasher)
    _write(tmp_path / "files")
    assert sorted(p.name for p in (tmp_path / "packed").iterdir()) == ["tensors.pack"]
    ours = read_indexed_dir(tmp_path / "packed", tmp_path / "packed.index.json")
    theirs = read_npy_dir(tmp_path / "files")
    assert ours.names == theirs.names == ["first", "second", "third"]
    for a, b in zip(ours.ops, theirs.ops):
        assert [(t.kind, t.index, t.dtype, t.shape) for t in a.inputs + a.outputs] == \
               [(t.kind, t.index, t.dtype, t.shape) for t in b.inputs + b.outputs]
        for t, u in zip(a.inputs + a.outputs, b.inputs + b.outputs):
            got, want = t.load(), u.load()
            np.testing.assert_array_equal(got, want)
            assert not got.flags.writeable and got.flags.aligned
            assert (got.dtype, got.flags.f_contiguous) == (want.dtype, want.flags.f_contiguous)
    pack = tmp_path / "packed" / "tensors.pack"
    size, digest = packed.digests["tensors.pack"]
    assert size == pack.stat().st_size
    h = new_hasher()
    h.update(pack.read_bytes())
    assert digest == h.hexdigest()


def test_every_span_reads_the_logical_values_from_the_pack(tmp_path):
    """The compare reads a span straight into its buffer (``TensorReader``): each span must
    name the pack and hold exactly the tensor's values in C order."""
    _write(tmp_path / "packed", pack="tensors.pack")
    dump = read_indexed_dir(tmp_path / "packed", tmp_path / "packed.index.json")
    spans = 0
    for op in dump.ops:
        for t in op.inputs + op.outputs:
            span = span_of(t.loader)
            if span is None:  # a Fortran-order tensor of more than one dimension
                assert t.load().flags.f_contiguous and len(t.shape) > 1
                continue
            assert span.path == str(tmp_path / "packed" / "tensors.pack")
            assert span.offset % 64 == 0
            values = span.read_into(np.empty(max(span.nbytes, 1), np.uint8))
            np.testing.assert_array_equal(values.reshape(t.shape), t.load())
            spans += 1
    assert spans == 6


@pytest.mark.parametrize("kwargs", [dict(private=False, pack="p"), dict(private=True, pack="a/b"),
                                    dict(private=True, pack=".hidden"),
                                    dict(private=True, pack="x.npy")])
def test_a_pack_is_a_plain_file_name_in_a_private_directory(tmp_path, kwargs):
    with pytest.raises(ValueError, match="pack"):
        NpyDumpWriter(tmp_path / "d", **kwargs)


def test_a_structured_dtype_is_refused_naming_the_tensor(tmp_path):
    with NpyDumpWriter(tmp_path / "d", private=True, pack="t.pack") as w:
        with pytest.raises(DumpFormatError, match="cannot be packed") as info:
            w.write_op("rec", [], [np.zeros(2, dtype=[("a", "f4"), ("b", "i4")])])
    assert "rec.0." in str(info.value)


def test_a_failed_write_closes_the_pack_and_leaves_no_digest(tmp_path):
    class Boom(Exception):
        pass

    w = NpyDumpWriter(tmp_path / "d", private=True, pack="t.pack", hasher=new_hasher)
    with pytest.raises(Boom):
        with w:
            w.write_op("a", [], [np.ones(3, np.float32)])
            raise Boom
    assert w._pack_out is None and "t.pack" not in w.digests


def test_after_a_failed_append_the_pack_takes_nothing_and_has_no_index(tmp_path, monkeypatch):
    """A write that fails part way leaves the pack's end unknown: a later tensor would be
    indexed at the wrong offset, so the writer refuses it and gives no index."""
    from pytest_ascend_accuracy.dump import npy_writer

    w = NpyDumpWriter(tmp_path / "d", private=True, pack="t.pack", hasher=new_hasher)
    w.write_op("a", [], [np.ones(3, np.float32)])
    real = npy_writer.write_npy

    def half(f, arr):
        f.write(b"\x93NUMPY")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(npy_writer, "write_npy", half)
    with pytest.raises(OSError, match="No space"):
        w.write_op("b", [], [np.ones(3, np.float32)])
    monkeypatch.setattr(npy_writer, "write_npy", real)
    with pytest.raises(DumpFormatError, match="an earlier write to it failed") as info:
        w.write_op("c", [], [np.ones(3, np.float32)])
    assert "t.pack" in str(info.value)
    assert w.index() is None
    w.close()
    assert "t.pack" not in w.digests


def test_a_closed_pack_takes_nothing(tmp_path):
    with NpyDumpWriter(tmp_path / "d", private=True, pack="t.pack") as w:
        w.write_op("a", [], [np.ones(3, np.float32)])
    with pytest.raises(DumpFormatError, match="closed"):
        w.write_op("b", [], [np.ones(3, np.float32)])
    assert (tmp_path / "d" / "t.pack").stat().st_size < 200  # not truncated, not appended


def test_a_pack_of_no_tensors_is_an_empty_dump_not_a_missing_file(tmp_path):
    with NpyDumpWriter(tmp_path / "d", private=True, pack="t.pack") as w:
        pass
    write_index(tmp_path / "i.json", w.index())
    assert (tmp_path / "d" / "t.pack").is_file()
    with pytest.raises(DumpFormatError, match="empty dump directory"):
        read_indexed_dir(tmp_path / "d", tmp_path / "i.json")


def test_an_index_naming_a_pack_outside_its_directory_is_refused(tmp_path):
    _write(tmp_path / "packed", pack="tensors.pack")
    index = tmp_path / "packed.index.json"
    index.write_text(index.read_text().replace('"pack":"tensors.pack"', '"pack":"../x"'))
    (tmp_path / "x").write_bytes((tmp_path / "packed" / "tensors.pack").read_bytes())  # readable
    with pytest.raises(DumpFormatError, match="not a valid npy dump index.*not a plain file name"):
        read_indexed_dir(tmp_path / "packed", index)


@pytest.mark.parametrize("pack", ["../outside.pack", "sub/t.pack", ".hidden", "x.npy", "", 7])
def test_an_index_naming_a_pack_the_writer_refuses_is_refused_on_read(tmp_path, pack):
    """The reader holds to the writer's rule (``pack_name_problem``): an index cannot make it
    read a file outside the directory, a hidden one, or a .npy file as the pack."""
    import json

    _write(tmp_path / "packed", pack="tensors.pack")
    if isinstance(pack, str) and pack:  # the named file is there, holding the real pack's bytes:
        named = tmp_path / "packed" / pack  # only the rule can refuse it
        named.parent.mkdir(parents=True, exist_ok=True)
        named.write_bytes((tmp_path / "packed" / "tensors.pack").read_bytes())
    index = tmp_path / "packed.index.json"
    data = json.loads(index.read_text())
    data["pack"] = pack
    index.write_text(json.dumps(data))
    with pytest.raises(DumpFormatError, match="not a plain file name|hidden or .npy") as info:
        read_indexed_dir(tmp_path / "packed", index)
    assert "packed.index.json" in str(info.value)
