"""The compiled NC1HWC0 transpose (dump/_channel_blocks.c via dump.channel_blocks) against the
numpy path it replaces: the same bytes both ways for every item size, shape edge (channels
not a multiple of C0 or of the 8x8 tile, positions not a multiple of 8, empty dims) and bit
pattern (NaN payloads, big-endian), and every case it does not take handed to numpy."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pytest_ascend_accuracy.dump import channel_blocks, device_formats as df


@pytest.fixture(autouse=True, scope="module")
def _every_size_compiled():
    """Small tensors take numpy (``MIN_VALUES``): here every tensor takes the compiled loops."""
    saved, channel_blocks.MIN_VALUES = channel_blocks.MIN_VALUES, 0
    yield
    channel_blocks.MIN_VALUES = saved


needs_extension = pytest.mark.skipif(channel_blocks.channel_blocks_extension() is None,
                                     reason="the _channel_blocks extension is not built here")


def _both(monkeypatch, a, shape):
    """(device, back) through the compiled loops, then through numpy."""
    compiled = df.to_device(a, "NC1HWC0")
    back = df.to_logical(compiled, "NC1HWC0", shape)
    with monkeypatch.context() as m:
        m.setenv(channel_blocks.NUMPY_LAYOUT_ENV, "1")
        assert channel_blocks.channel_blocks_extension() is None
        numpy_dev = df.to_device(a, "NC1HWC0")
        numpy_back = df.to_logical(numpy_dev, "NC1HWC0", shape)
    return compiled, back, numpy_dev, numpy_back


def _same(x, y):
    assert x.shape == y.shape and x.dtype == y.dtype
    assert x.tobytes() == y.tobytes()


DTYPES = [np.float16, np.float32, np.int8, np.uint8, np.float64, np.int64, np.dtype(">f2"),
          np.dtype(">f4")]


@needs_extension
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).str)
@pytest.mark.parametrize("shape", [(1, 16, 8, 8), (2, 24, 5, 7), (1, 3, 7, 9), (1, 17, 1, 1),
                                   (3, 33, 4, 5), (1, 1, 1, 1), (1, 0, 3, 3), (1, 16, 0, 3),
                                   (2, 40, 9, 10), (1, 64, 3, 8), (1, 8, 2, 4)])
def test_compiled_and_numpy_write_and_read_the_same_bytes(monkeypatch, dtype, shape):
    a = (np.random.default_rng(len(shape) + sum(shape)).standard_normal(shape) * 100).astype(dtype)
    compiled, back, numpy_dev, numpy_back = _both(monkeypatch, a, shape)
    _same(compiled, numpy_dev)
    _same(back, numpy_back)
    _same(back, a)  # and the round trip gives the tensor back
    c, c0 = shape[1], df.default_c0(a.dtype)
    if c % c0:  # the padding channels are zero
        assert not compiled[:, -1, ..., c % c0:].any()


@needs_extension
@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 3), c=st.integers(1, 70), h=st.integers(1, 12), w=st.integers(1, 12),
       size=st.sampled_from([1, 2, 4, 8]), seed=st.integers(0, 2 ** 32 - 1))
def test_random_shapes_and_bit_patterns_round_trip_as_numpy_does(n, c, h, w, size, seed):
    """Raw bit patterns (NaNs with payloads, infinities, subnormals among them) moved as they
    are: compared as bytes."""
    raw = np.random.default_rng(seed).integers(0, 256, n * c * h * w * size, dtype=np.uint8)
    kind = {1: np.int8, 2: np.float16, 4: np.float32, 8: np.float64}[size]
    a = raw.view(kind).reshape(n, c, h, w)
    dev = df.to_device(a, "NC1HWC0")
    c0 = df.default_c0(a.dtype)
    view = np.zeros_like(dev)
    channel_blocks.put_channels(view.transpose(0, 1, 4, 2, 3), a, c0)
    assert dev.tobytes() == view.tobytes()
    assert df.to_logical(dev, "NC1HWC0", a.shape).tobytes() == a.tobytes()


def test_what_the_compiled_loops_do_not_take_goes_through_numpy(monkeypatch):
    calls = []
    module = channel_blocks.channel_blocks_extension()
    if module is not None:
        class Counting:
            ABI = module.ABI

            def to_blocks(self, *args):
                calls.append("to")
                return module.to_blocks(*args)

            def from_blocks(self, *args):
                calls.append("from")
                return module.from_blocks(*args)

        monkeypatch.setattr(channel_blocks, "_MODULE", [Counting()])
    monkeypatch.setattr(channel_blocks, "MIN_VALUES", 1000)
    small = np.ones((1, 3, 4, 4), np.float16)  # 48 values, 256 in the device layout
    _same(df.to_logical(df.to_device(small, "NC1HWC0"), "NC1HWC0", small.shape), small)
    assert calls == []
    a = np.arange(2 * 20 * 8 * 8, dtype=np.float32).reshape(2, 20, 8, 8)
    dev = df.to_device(a, "NC1HWC0")
    strided = np.asfortranarray(a)  # not C-contiguous: numpy writes it
    _same(df.to_device(strided, "NC1HWC0"), dev)
    wide = np.zeros(dev.shape[:-1] + (dev.shape[-1] * 2,), dev.dtype)
    wide[..., ::2] = dev  # a device array that is a non-contiguous view: numpy reads it
    _same(df.to_logical(wide[..., ::2], "NC1HWC0", a.shape), a)
    if module is not None:
        assert calls == ["to"]
    complex_values = a.astype(np.complex64)  # item size 8, moved as bytes like any other
    _same(df.to_logical(df.to_device(complex_values, "NC1HWC0"), "NC1HWC0", a.shape),
          complex_values)
    if module is not None:
        assert calls == ["to", "to", "from"]


@needs_extension
@pytest.mark.parametrize("device_shape, original", [
    ((1, 2, 64, 64, 16), (1, 3, 64, 64)),  # a whole padding block past the kept channels
    ((2, 3, 30, 30, 16), (2, 5, 30, 30)),
    ((1, 1, 64, 64, 16), (1, 0, 64, 64)),
    ((1, 300, 1, 1, 16), (1, 4000)),  # one position: numpy, a view as before
])
def test_device_arrays_with_more_blocks_than_their_channels_need_read_back(
        monkeypatch, device_shape, original):
    """A dump's original shape may keep fewer channels than its blocks hold (the reader
    accepts any count up to C1 x C0): the compiled loops are given C1, not ceil(C / C0)."""
    dev = np.random.default_rng(1).standard_normal(device_shape).astype(np.float16)
    compiled = df.to_logical(dev, "NC1HWC0", original)
    with monkeypatch.context() as m:
        m.setenv(channel_blocks.NUMPY_LAYOUT_ENV, "1")
        _same(compiled, df.to_logical(dev, "NC1HWC0", original))


def test_one_position_reads_back_as_a_view_of_the_device_array():
    dev = np.arange(300 * 16, dtype=np.float16).reshape(1, 300, 1, 1, 16)
    dev.flags.writeable = False  # as a memory-mapped dump is
    back = df.to_logical(dev, "NC1HWC0", (1, 4000))
    assert np.shares_memory(back, dev) and not back.flags.writeable


@needs_extension
@pytest.mark.parametrize("size", [2, 4])
def test_buffers_at_odd_addresses_are_moved_as_aligned_ones(size):
    """Tensors mapped from a dump file start where its header ends, at any byte."""
    kind = {2: np.float16, 4: np.float32}[size]
    a = np.random.default_rng(2).standard_normal((2, 37, 9, 11)).astype(kind)
    raw = np.zeros(a.nbytes + 1, np.uint8)
    odd = raw[1:].view(kind).reshape(a.shape)
    odd[...] = a
    assert not odd.flags.aligned
    ext = channel_blocks.channel_blocks_extension()
    dev = np.zeros((2, 3, 9, 11, 16), kind)
    ext.to_blocks(odd, dev, 2, 37, 3, 99, 16, size)
    _same(dev, df.to_device(a, "NC1HWC0"))
    raw2 = np.zeros(dev.nbytes + 1, np.uint8)
    odd_dev = raw2[1:].view(kind).reshape(dev.shape)
    odd_dev[...] = dev
    back = np.empty_like(a)
    ext.from_blocks(odd_dev, back, 2, 37, 3, 99, 16, size)
    _same(back, a)


@needs_extension
def test_buffers_that_do_not_fit_the_shapes_are_refused():
    ext = channel_blocks.channel_blocks_extension()
    a = np.zeros((1, 20, 3, 3), np.float16)
    out = np.zeros((1, 2, 3, 3, 16), np.float16)
    ext.to_blocks(a, out, 1, 20, 2, 9, 16, 2)
    with pytest.raises(ValueError, match="do not match"):
        ext.to_blocks(a, out[:, :1].copy(), 1, 20, 2, 9, 16, 2)
    with pytest.raises(ValueError, match="cannot hold"):
        ext.to_blocks(a, out[:, :1].copy(), 1, 20, 1, 9, 16, 2)
    with pytest.raises(ValueError, match="do not match"):
        ext.from_blocks(out, a, 1, 21, 2, 9, 16, 2)
    with pytest.raises(ValueError, match="item size"):
        ext.to_blocks(a, out, 1, 20, 2, 9, 16, 3)
    with pytest.raises(ValueError, match="too large"):
        ext.to_blocks(a, out, 1 << 40, 1 << 40, 1 << 40, 9, 16, 2)
    with pytest.raises(ValueError, match="not C-contiguous"):
        ext.to_blocks(a, np.zeros((1, 2, 3, 3, 32), np.float16)[..., ::2], 1, 20, 2, 9, 16, 2)
    read_only = a.copy()
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        ext.from_blocks(out, read_only, 1, 20, 2, 9, 16, 2)
    ext.from_blocks(out, a, 1, 20, 2, 9, 16, 2)  # the same call into a writable buffer


@needs_extension
@pytest.mark.parametrize("chunk", [1, 3 * 64, 1 << 20])
@pytest.mark.parametrize("dtype", ["float16", "float32", "int8", ">f2"])
@pytest.mark.parametrize("shape", [(1, 16, 4, 5), (2, 37, 3, 3), (3, 5, 8, 2), (1, 70, 1, 9)])
def test_device_blocks_write_the_bytes_to_device_makes(monkeypatch, shape, dtype, chunk):
    """Written a few channel blocks at a time through one reused buffer (``chunk`` bytes: one
    block at a time, several, all), left dirty by the tensor before: the bytes of the whole
    device array, padding channels zero."""
    import io

    monkeypatch.setattr(channel_blocks, "CHUNK_BYTES", chunk)
    rng = np.random.default_rng(list(shape))
    dirty = rng.integers(1, 255, size=(2, 64, 8, 8), dtype=np.uint8).view(np.int8)
    channel_blocks.DeviceBlocks(dirty, 32).write_to(io.BytesIO())  # the buffer: nonzero bytes
    a = rng.integers(0, 256, size=shape + (np.dtype(dtype).itemsize,), dtype=np.uint8)
    a = a.view(dtype).reshape(shape)
    c0 = df.default_c0(a.dtype)
    blocks = channel_blocks.DeviceBlocks.of(a, c0)
    assert blocks is not None
    f = io.BytesIO()
    blocks.write_to(f)
    whole = df.to_device(a, "NC1HWC0", c0=c0)
    assert blocks.shape == whole.shape and blocks.nbytes == whole.nbytes == len(f.getvalue())
    assert f.getvalue() == whole.tobytes() == blocks.tobytes()


def test_device_blocks_only_where_the_compiled_loops_take_the_tensor(monkeypatch):
    a = np.ones((1, 16, 4, 4), np.float16)
    assert channel_blocks.DeviceBlocks.of(a[:, :, :, ::2], 16) is None  # strided
    assert channel_blocks.DeviceBlocks.of(a.reshape(1, 256), 16) is None  # not 4-D
    assert channel_blocks.DeviceBlocks.of(np.ones((1, 16, 1, 1), np.float16), 16) is None
    monkeypatch.setenv(channel_blocks.NUMPY_LAYOUT_ENV, "1")
    assert channel_blocks.DeviceBlocks.of(a, 16) is None  # extension off


@needs_extension
def test_a_dump_file_written_in_blocks_reads_back_as_written(tmp_path):
    from pytest_ascend_accuracy.dump import ascend_bin
    from pytest_ascend_accuracy.dump.ascend_bin import DumpTensor

    a = np.random.default_rng(3).standard_normal((2, 21, 17, 19)).astype(np.float16)
    path = tmp_path / "Conv2D.c.1.0.1700000000000000"
    ascend_bin.write_dump_file(path, "c", outputs=[DumpTensor(a, "NC1HWC0")], atomic=False)
    record = ascend_bin.read_dump_file(path)
    out = record.outputs[0]
    assert out.format == "NC1HWC0" and out.device_shape == (2, 2, 17, 19, 16)
    np.testing.assert_array_equal(out.load(), a)


@needs_extension
@pytest.mark.parametrize("chunk", [256, 1024])
def test_device_blocks_bigger_than_a_chunk_go_in_runs_of_positions(monkeypatch, chunk):
    """A channel block bigger than ``CHUNK_BYTES`` (det 736: 368 x 368 positions, 4.3 MB, and
    one of 17 MB) is written in runs of its positions (``block_positions``): the same bytes,
    padding zero, and no thread keeps a buffer bigger than a chunk."""
    import io
    import threading

    monkeypatch.setattr(channel_blocks, "CHUNK_BYTES", chunk)
    monkeypatch.setattr(channel_blocks, "_BUFFERS", threading.local())
    for shape in [(2, 20, 10, 10), (1, 1, 7, 9), (1, 16, 3, 11)]:  # 6,400 / 2,016 / 1,056 bytes
        a = np.random.default_rng(list(shape)).standard_normal(shape).astype(np.float32)
        f = io.BytesIO()
        channel_blocks.DeviceBlocks(a, 16).write_to(f)
        assert f.getvalue() == df.to_device(a, "NC1HWC0").tobytes(), shape
        assert channel_blocks._BUFFERS.buffer.nbytes <= chunk


@needs_extension
def test_block_positions_refuses_what_does_not_fit():
    module = channel_blocks.channel_blocks_extension()
    logical = np.zeros((3, 10), np.float16)
    out = np.zeros((4, 16), np.float16)
    module.block_positions(logical, out, 3, 10, 16, 2, 6, 2)
    for args in [(4, 10, 16, 2, 6, 2), (3, 10, 16, 6, 2, 2), (3, 10, 16, 8, 12, 2),
                 (17, 10, 16, 0, 4, 2), (3, 10, 16, 2, 6, 3)]:
        with pytest.raises(ValueError):
            module.block_positions(logical, out, *args)


def test_device_blocks_of_no_values_write_nothing():
    import io

    for shape in [(0, 3, 4, 5), (1, 3, 0, 5)]:
        f = io.BytesIO()
        channel_blocks.DeviceBlocks(np.zeros(shape, np.float16), 16).write_to(f)
        assert f.getvalue() == b""
