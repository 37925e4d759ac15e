"""Our join of FFTS+ manual-split slices against msaccucmp's own (``dump_parse/dump.py``
``DumpInfo``: grouping and slice order; ``ffts_parser.py`` ``FFTSParser``: the join), run on the
same files. msaccucmp reads a header through CANN's ``libascend_dump_parser.so`` (not on PyPI):
the stand-in decodes it with ``google.protobuf`` from CANN's current ``dump_task.proto``
(``hicann/ge`` ``graph_metadef/proto/dump_task.proto``: attr = 7, space = 8), a decoder
independent of ours; grouping, ordering, reading the bytes and joining are msaccucmp's code.
Skipped without mindstudio-probe or protobuf."""
import os

import numpy as np
import pytest

from pytest_ascend_accuracy.dump import device_formats as df
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.testing.dump_task_schema import header_parser
from pytest_ascend_accuracy.testing.ffts_slice_dumps import cut_list, sgt_json, write_slices

_PKG = "ffts.peer.dump"


@pytest.fixture
def msaccucmp_dump_info(monkeypatch):
    """msaccucmp's ``DumpInfo`` class, its header parser given a protobuf decoder."""
    try:
        import msprobe
        import google.protobuf  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"needs mindstudio-probe and protobuf (pip install mindstudio-probe): {exc}")
    root = os.path.join(os.path.dirname(msprobe.__file__), "msaccucmp")
    if not os.path.isfile(os.path.join(root, "dump_parse", "ffts_parser.py")):
        pytest.skip(f"msaccucmp's ffts_parser.py not found under {root}")
    monkeypatch.syspath_prepend(root)  # its modules import each other as top-level packages
    from dump_parse import big_dump_data, dump

    monkeypatch.setattr(big_dump_data.BigDumpDataParser, "_parse_dump_to_json",
                        header_parser(_PKG))
    return dump.DumpInfo


def _theirs(dump_info, leaf, op):
    info = dump_info(str(leaf), 2)
    info.check_arguments_valid()
    _, data = info.get_op_dump_data(op)
    return data


LEAF = ("dump", "20240101000000", "0", "m", "1", "0")


@pytest.mark.parametrize("parts,axis", [(2, 0), (3, 2), (2, 3)])
def test_joined_nd_outputs_equal_msaccucmps(tmp_path, msaccucmp_dump_info, parts, axis):
    x = np.random.default_rng(parts).standard_normal((2, 8, 6, 4)).astype(np.float16)
    y = np.random.default_rng(9).standard_normal((2, 3)).astype(np.float32)
    leaf = tmp_path.joinpath(*LEAF)
    write_slices(leaf, "Conv2D", "conv1", [[p, y] for p in np.array_split(x, parts, axis)],
                 attr=sgt_json(parts, [cut_list(4, axis, parts), cut_list(2, None, parts)]))
    ours = load_dump(tmp_path / "dump")["conv1"]
    theirs = _theirs(msaccucmp_dump_info, leaf, "conv1")
    assert theirs.op_name == ours.name == "conv1"
    for t, mine in zip(theirs.output_data, ours.outputs):
        assert list(mine.shape) == t.shape
        np.testing.assert_array_equal(mine.load(), t.data.reshape(t.shape))
    np.testing.assert_array_equal(ours.outputs[0].load(), x)


def test_joined_5hd_output_equals_msaccucmps_device_join(tmp_path, msaccucmp_dump_info):
    """msaccucmp joins the stored NC1HWC0 arrays; ours joins the slices read back as NCHW along
    the dim the cut one holds (H). Converting msaccucmp's join with the whole tensor's original
    shape gives ours."""
    x = np.random.default_rng(1).standard_normal((1, 20, 6, 4)).astype(np.float16)
    leaf = tmp_path.joinpath(*LEAF)
    write_slices(leaf, "Conv2D", "conv1", [[p] for p in np.array_split(x, 2, 2)],
                 attr=sgt_json(2, [cut_list(5, 2, 2)]), output_formats=["NC1HWC0"])
    ours = load_dump(tmp_path / "dump")["conv1"].outputs[0]
    t = _theirs(msaccucmp_dump_info, leaf, "conv1").output_data[0]
    assert tuple(t.shape) == ours.device_shape == (1, 2, 6, 4, 16)
    device = t.data.reshape(t.shape)
    np.testing.assert_array_equal(df.to_logical(device, "NC1HWC0", x.shape), ours.load())
    np.testing.assert_array_equal(ours.load(), x)


def test_slice_order_is_msaccucmps_whatever_the_timestamps(tmp_path, msaccucmp_dump_info):
    """Slices are joined in slice-number order (msaccucmp sorts by it after the timestamp),
    not in the order they were dumped."""
    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    leaf = tmp_path.joinpath(*LEAF)
    parts = np.array_split(x, 3, 0)
    write_slices(leaf, "MatMul", "mm", [[parts[k]] for k in (2, 0, 1)], numbers=[2, 0, 1],
                 attr=sgt_json(3, [cut_list(2, 0, 3)]))
    ours = load_dump(tmp_path / "dump")["mm"].outputs[0].load()
    t = _theirs(msaccucmp_dump_info, leaf, "mm").output_data[0]
    np.testing.assert_array_equal(ours, t.data.reshape(t.shape))
    np.testing.assert_array_equal(ours, x)
