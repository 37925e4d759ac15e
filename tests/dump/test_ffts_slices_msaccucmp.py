"""Our join of FFTS+ manual-split slices against msaccucmp's own (``dump_parse/dump.py``
``DumpInfo``: grouping and slice order; ``ffts_parser.py`` ``FFTSParser``: the join), run on the
same files. msaccucmp reads a header through CANN's ``libascend_dump_parser.so`` (not on PyPI):
the stand-in decodes it with ``google.protobuf`` from CANN's current ``dump_task.proto``
(``hicann/ge`` ``graph_metadef/proto/dump_task.proto``: attr = 7, space = 8), a decoder
independent of ours; grouping, ordering, reading the bytes and joining are msaccucmp's code.
Skipped without mindstudio-probe or protobuf."""
import os
import struct

import numpy as np
import pytest

from pytest_ascend_accuracy.dump import device_formats as df
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.testing.ffts_slice_dumps import cut_list, sgt_json, write_slices

_PKG = "ffts.peer.dump"


def _dump_data_class():
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    F = descriptor_pb2.FieldDescriptorProto
    fp = descriptor_pb2.FileDescriptorProto(name="ffts_peer_dump_task.proto", package=_PKG,
                                            syntax="proto3")
    O, R = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    I32, U32, U64, STR, BYT, MSG = (F.TYPE_INT32, F.TYPE_UINT32, F.TYPE_UINT64, F.TYPE_STRING,
                                    F.TYPE_BYTES, F.TYPE_MESSAGE)
    schema = {  # hicann/ge graph_metadef/proto/dump_task.proto (enums read as int32)
        "Shape": [("dim", 1, U64, R, None)],
        "OriginalOp": [("name", 1, STR, O, None), ("output_index", 2, U32, O, None),
                       ("data_type", 3, I32, O, None), ("format", 4, I32, O, None)],
        "OpOutput": [("data_type", 1, I32, O, None), ("format", 2, I32, O, None),
                     ("shape", 3, MSG, O, "Shape"), ("original_op", 4, MSG, O, "OriginalOp"),
                     ("data", 5, BYT, O, None), ("size", 6, U64, O, None),
                     ("original_shape", 7, MSG, O, "Shape"), ("sub_format", 8, I32, O, None)],
        "OpInput": [("data_type", 1, I32, O, None), ("format", 2, I32, O, None),
                    ("shape", 3, MSG, O, "Shape"), ("data", 4, BYT, O, None),
                    ("size", 5, U64, O, None), ("original_shape", 6, MSG, O, "Shape"),
                    ("sub_format", 7, I32, O, None)],
        "OpBuffer": [("buffer_type", 1, I32, O, None), ("data", 2, BYT, O, None),
                     ("size", 3, U64, O, None)],
        "OpAttr": [("name", 1, STR, O, None), ("value", 2, STR, O, None)],
        "Workspace": [("type", 1, I32, O, None), ("data", 2, BYT, O, None),
                      ("size", 3, U64, O, None)],
        "DumpData": [("version", 1, STR, O, None), ("dump_time", 2, U64, O, None),
                     ("output", 3, MSG, R, "OpOutput"), ("input", 4, MSG, R, "OpInput"),
                     ("buffer", 5, MSG, R, "OpBuffer"), ("op_name", 6, STR, O, None),
                     ("attr", 7, MSG, R, "OpAttr"), ("space", 8, MSG, R, "Workspace")],
    }
    for name, fields in schema.items():
        m = fp.message_type.add(name=name)
        for fname, num, ftype, label, tname in fields:
            f = m.field.add(name=fname, number=num, type=ftype, label=label)
            if tname:
                f.type_name = f".{_PKG}.{tname}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PKG}.DumpData"))


def _as_dict(message) -> dict:
    out = {}
    for field, value in message.ListFields():
        if field.type == field.TYPE_BYTES:
            continue
        repeated = getattr(field, "is_repeated", None)
        repeated = field.label == field.LABEL_REPEATED if repeated is None else repeated
        if field.type == field.TYPE_MESSAGE:
            out[field.name] = [_as_dict(v) for v in value] if repeated else _as_dict(value)
        else:
            out[field.name] = list(value) if repeated else value
    return out


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

    dump_data = _dump_data_class()

    def parse_dump_to_json(self):
        with open(self.dump_file_path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            self.dump_json_data = _as_dict(dump_data.FromString(f.read(n)))

    monkeypatch.setattr(big_dump_data.BigDumpDataParser, "_parse_dump_to_json",
                        parse_dump_to_json)
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
