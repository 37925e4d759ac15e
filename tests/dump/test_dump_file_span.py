"""File spans: readers say where plain tensor values lie; the fast .npy header path agrees
with numpy's parser."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ascend_accuracy.dump.ascend_bin import DumpTensor, read_dump_file, write_dump_file
from pytest_ascend_accuracy.dump.file_span import FileSpan, SpanLoader, span_of
from pytest_ascend_accuracy.dump.npy_dir import read_npy_dir, read_npy_layout
from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter
from pytest_ascend_accuracy.dump.npy_header import _fast_layout


def _read(span):
    buf = np.empty(span.nbytes + 7, np.uint8)
    return span.read_into(buf)


def test_npy_tensor_span_reads_what_load_returns(tmp_path):
    arrays = [np.arange(12, dtype=np.float32).reshape(3, 4), np.array(2.5), np.array([True, False]),
              np.arange(5, dtype=">i4")]
    NpyDumpWriter(tmp_path).write_op("op", [], arrays)
    for a, t in zip(arrays, read_npy_dir(tmp_path)["op"].outputs):
        span = span_of(t.loader)
        assert span is not None and span.count == a.size and span.dtype == a.dtype
        got = _read(span)
        assert got.dtype == a.dtype and got.tobytes() == np.asarray(t.load()).tobytes()


def test_fortran_order_npy_has_no_span_but_loads(tmp_path):
    a = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    NpyDumpWriter(tmp_path).write_op("op", [], [a, np.asfortranarray(np.arange(3.0))])
    t2, t1 = read_npy_dir(tmp_path)["op"].outputs
    assert span_of(t2.loader) is None and np.array_equal(t2.load(), a)
    assert span_of(t1.loader) is not None  # 1-D: both orders are the same bytes


def test_ascend_spans_only_for_plain_layouts(tmp_path):
    x = np.arange(2 * 3 * 4 * 4, dtype=np.float16).reshape(2, 3, 4, 4)
    p = write_dump_file(tmp_path / "Conv.c.1.0.1", "c", [DumpTensor(x, format="NC1HWC0")],
                        [DumpTensor(x), DumpTensor(x.astype(np.float32), dtype="bfloat16"),
                         DumpTensor(x.astype(np.float32), padding=6)])
    op = read_dump_file(p)
    nc1hwc0, plain, bf16, padded = op.inputs + op.outputs
    assert span_of(nc1hwc0.loader) is None and span_of(bf16.loader) is None
    for t in (plain, padded):
        span = span_of(t.loader)
        assert span.count == x.size
        assert _read(span).tobytes() == np.asarray(t.load()).tobytes()


def test_read_stops_at_end_of_file(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(np.arange(4, dtype=np.float32).tobytes())
    assert _read(FileSpan(str(p), 4, np.dtype(np.float32), 3)).tolist() == [1.0, 2.0, 3.0]
    assert _read(FileSpan(str(p), 8, np.dtype(np.float32), 3)) is None  # one value short
    with pytest.raises(OSError):
        _read(FileSpan(str(tmp_path / "missing"), 0, np.dtype(np.float32), 1))


def test_span_loader_is_the_loader():
    loader = SpanLoader(lambda: np.ones(2), None)
    assert loader().tolist() == [1.0, 1.0] and loader.span is None and span_of(lambda: 0) is None


_DTYPES = st.sampled_from(["<f2", "<f4", ">f4", "<f8", "|b1", "|i1", "|u1", "<i8", "<u4", "<c8"])


@settings(max_examples=60, deadline=None)
@given(dtype=_DTYPES, shape=st.lists(st.integers(0, 12), max_size=5), fortran=st.booleans())
def test_fast_header_path_agrees_with_numpy(tmp_path_factory, dtype, shape, fortran):
    d = tmp_path_factory.mktemp("npy")
    a = np.zeros(shape, dtype=dtype, order="F" if fortran else "C")
    p = d / "a.npy"
    np.save(p, a)
    with open(p, "rb") as f:
        fast = _fast_layout(f.read(4096))
        np.lib.format.read_magic(f.seek(0) or f)
        want_shape, want_fortran, want_dtype = np.lib.format.read_array_header_1_0(f)
        offset = f.tell()
    assert fast is not None
    assert (fast.shape, fast.dtype, fast.fortran_order, fast.offset) == (
        want_shape, want_dtype, want_fortran, offset)
    assert read_npy_layout(p) == fast


@pytest.mark.parametrize("header", [
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2), }",  # an int, not a tuple
    "{'descr': '<f4', 'fortran_order': False, 'shape': (01,), }",  # not a Python literal
    "{'descr': '<U1', 'fortran_order': False, 'shape': (2,), }",  # not numeric
    "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }",
    "{'descr': '<f4','fortran_order': False,'shape': (2,)}",  # valid, but not numpy's spelling
])
def test_headers_other_than_numpys_own_take_numpys_parser(header):
    raw = header.encode("latin1")
    raw += b" " * ((64 - (10 + len(raw) + 1) % 64) % 64) + b"\n"
    assert _fast_layout(b"\x93NUMPY\x01\x00" + len(raw).to_bytes(2, "little") + raw) is None


def test_nonstandard_but_valid_header_still_loads(tmp_path):
    raw = b"{'descr': '<f4','fortran_order': False,'shape': (2,)}"
    raw += b" " * ((64 - (10 + len(raw) + 1) % 64) % 64) + b"\n"
    p = tmp_path / "a.0.1700000000000000.npy"
    p.write_bytes(b"\x93NUMPY\x01\x00" + len(raw).to_bytes(2, "little") + raw
                  + np.array([1, 2], np.float32).tobytes())
    layout = read_npy_layout(p)
    assert layout.shape == (2,) and layout.offset == 10 + len(raw)
    t = read_npy_dir(tmp_path)["a"].output()
    assert _read(span_of(t.loader)).tolist() == [1.0, 2.0]
