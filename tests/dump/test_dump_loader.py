"""load_dump: kind detection, om json ordering and fused names, repeated dumps, laziness."""
import struct

import numpy as np
import pytest

from pytest_ascend_accuracy.dump import AscendDumpWriter, NpyDumpWriter, load_dump, write_om_json
from pytest_ascend_accuracy.dump import ascend_bin
from pytest_ascend_accuracy.dump.om_json import OmOp
from pytest_ascend_accuracy.dump.proto import DumpData, OpOutput, Shape
from pytest_ascend_accuracy.errors import DumpFormatError


def _model_dump(leaf):
    w = AscendDumpWriter(leaf)
    w.write_op("TransData", "trans_TransData_1", [np.ones((1, 3, 4, 4), np.float16)],
               [np.ones((1, 3, 4, 4), np.float16)], output_formats=["NC1HWC0"])
    w.write_op("Conv2D", "conv1conv1_relu", [np.ones((1, 3, 4, 4), np.float16)],
               [np.full((1, 8, 4, 4), 2, np.float16)], output_formats=["NC1HWC0"],
               output_origins=[("conv1_relu", 0)])
    w.write_op("Add", "add1", [np.ones(2, np.float16)], [np.ones(2, np.float16)])
    return w


def test_ascend_leaf_in_timestamp_order_with_dump_origins(tmp_path):
    _model_dump(tmp_path)
    dump = load_dump(tmp_path)
    assert dump.kind == "ascend"
    assert dump.names == ["trans_TransData_1", "conv1conv1_relu", "add1"]
    assert [op.order for op in dump] == [0, 1, 2]
    conv = dump["conv1conv1_relu"]
    assert conv.op_type == "Conv2D" and conv.original_names == ("conv1_relu",)
    assert conv.output().origin == ("conv1_relu", 0)
    assert conv.output().shape == (1, 8, 4, 4) and conv.output().format == "NC1HWC0"
    assert (conv.output().load() == 2).all()


def test_om_json_orders_ops_and_attaches_fused_names(tmp_path):
    _model_dump(tmp_path / "leaf")
    om = tmp_path / "m.json"
    write_om_json(om, "net", [
        OmOp("add1", "Add", 0),
        OmOp("conv1conv1_relu", "Conv2D", 1, ("conv1", "bn1", "conv1_relu"), (("conv1_relu", 0),)),
        OmOp("trans_TransData_1", "TransData", 2, npu_only=True),
    ], {"soc_version": "Ascend310P3"})
    dump = load_dump(tmp_path / "leaf", om_json=om)
    assert dump.names == ["add1", "conv1conv1_relu", "trans_TransData_1"]
    assert dump["conv1conv1_relu"].original_names == ("conv1", "bn1", "conv1_relu")
    assert dump["conv1conv1_relu"].is_fused
    assert dump["trans_TransData_1"].original_names == ()
    assert dump.meta["npu_only_ops"] == ["trans_TransData_1"]
    assert dump.meta["soc_version"] == "Ascend310P3"


def test_om_json_fills_missing_output_origins_and_keeps_unlisted_ops_last(tmp_path):
    w = AscendDumpWriter(tmp_path / "leaf")
    w.write_op("Extra", "extra", outputs=[np.ones(1)])
    w.write_op("MatMul", "mm_add", outputs=[np.ones(2)])
    om = tmp_path / "m.json"
    write_om_json(om, "net", [OmOp("mm_add", "MatMul", 5, ("mm", "add"), (("add", 0),))])
    dump = load_dump(tmp_path / "leaf", om_json=om)
    assert dump.names == ["mm_add", "extra"]
    assert dump["mm_add"].output().origin == ("add", 0)
    assert dump.meta["ops_not_in_om_json"] == ["extra"]


def test_repeated_dumps_of_one_op_last_wins(tmp_path):
    w = AscendDumpWriter(tmp_path)
    w.write_op("Relu", "relu", outputs=[np.zeros(2)])
    w.write_op("Add", "add", outputs=[np.ones(2)])
    w.write_op("Relu", "relu", outputs=[np.full(2, 7.0)])
    dump = load_dump(tmp_path)
    assert dump.names == ["add", "relu"]
    assert dump["relu"].output().load().tolist() == [7.0, 7.0]
    assert dump.meta["repeated"] == {"relu": 2}


def test_distinct_real_names_that_sanitise_alike_stay_distinct(tmp_path):
    w = AscendDumpWriter(tmp_path)
    w.write_op("Add", "a/b", outputs=[np.zeros(1)])
    w.write_op("Add", "a.b", outputs=[np.ones(1)])
    dump = load_dump(tmp_path)
    assert dump.names == ["a/b", "a.b"]


def test_npy_directory_is_detected(tmp_path):
    NpyDumpWriter(tmp_path).write_op("x", [], [np.ones(1)])
    assert load_dump(tmp_path).kind == "npy"


def test_single_dump_file(tmp_path):
    p = AscendDumpWriter(tmp_path).write_op("Add", "add", outputs=[np.ones(3)])
    dump = load_dump(p)
    assert dump.names == ["add"] and dump.ops[0].op_type == "Add"


def test_bad_file_in_a_leaf_names_that_file(tmp_path):
    _model_dump(tmp_path)
    bad = tmp_path / "Add.broken.9.0.1999999999999999"
    bad.write_bytes(b"\x05\x00")
    with pytest.raises(DumpFormatError) as info:
        load_dump(tmp_path)
    assert info.value.path == str(bad)
    assert "truncated file" in str(info.value)


def test_unmapped_all_digit_file_is_skipped_and_reported(tmp_path):
    _model_dump(tmp_path)
    (tmp_path / "123456").write_bytes(b"")
    dump = load_dump(tmp_path)
    assert len(dump) == 3
    assert dump.meta["skipped_files"] == [("123456", "all-digit name not listed in mapping.csv")]


def test_single_npy_file_is_not_a_dump(tmp_path):
    np.save(tmp_path / "a.npy", np.ones(1))
    with pytest.raises(DumpFormatError, match="a single .npy file is not a dump"):
        load_dump(tmp_path / "a.npy")


def test_loading_a_dump_set_reads_headers_only(tmp_path, monkeypatch):
    # 3 ops, each declaring 32 MB of float32 in a sparse file: building the DumpSet maps nothing
    n = 8 * 1024 * 1024
    for i in range(3):
        header = DumpData(version="2.0", op_name=f"big{i}",
                          output=(OpOutput(data_type=1, shape=Shape((8, 1024, 1024)), size=4 * n),))
        raw = header.encode()
        with open(tmp_path / f"Big.big{i}.{i + 1}.0.100000000000000{i}", "wb") as f:
            f.write(struct.pack("<Q", len(raw)) + raw)
            f.truncate(8 + len(raw) + 4 * n)
    calls = []
    real = ascend_bin.map_tensor
    monkeypatch.setattr(ascend_bin, "map_tensor", lambda *a: calls.append(a[1:]) or real(*a))
    dump = load_dump(tmp_path)
    assert dump.names == ["big0", "big1", "big2"] and calls == []
    assert dump.nbytes == 3 * 4 * n
    dump["big1"].output().load()
    assert len(calls) == 1


def _nhwc_dump(tmp_path, x, header_format=None):
    """One dump file holding NHWC ``x`` (H == W == C) as NC1HWC0; the header names the original
    op, with ``header_format`` as its format when given (proto3 omits 0)."""
    import struct

    from pytest_ascend_accuracy.dump import device_formats as df
    from pytest_ascend_accuracy.dump.proto import DumpData, OpOutput, OriginalOp, Shape

    dev = df.to_device(x.transpose(0, 3, 1, 2), "NC1HWC0")
    origin = OriginalOp(name="conv1/BiasAdd", output_index=0, data_type=1,
                        format=header_format or 0)
    out = OpOutput(data_type=1, format=3, shape=Shape(dev.shape), size=dev.nbytes,
                   original_shape=Shape(x.shape), original_op=origin)
    raw = DumpData(version="2.0", op_name="conv1", output=(out,)).encode()
    leaf = tmp_path / "20261205000000" / "0" / "net" / "1" / "0"
    leaf.mkdir(parents=True)
    (leaf / "Conv2D.conv1.3.0.1733350000000001").write_bytes(
        struct.pack("<Q", len(raw)) + raw + dev.tobytes())
    return leaf


def test_an_ambiguous_nc1hwc0_output_follows_the_om_json_or_the_headers_format(tmp_path):
    """An NHWC (1, 8, 8, 8) output: the om json's origin_format (msaccucmp's source) or the
    dump header's original op format reads it as NHWC; neither said, it is read as NCHW."""
    from pytest_ascend_accuracy.dump.om_json import OmTensorDesc

    x = np.random.default_rng(1).standard_normal((1, 8, 8, 8)).astype(np.float32)
    leaf = _nhwc_dump(tmp_path / "plain", x)
    assert not np.array_equal(load_dump(leaf).get("conv1").outputs[0].load(), x)
    leaf = _nhwc_dump(tmp_path / "header", x, header_format=1)  # FORMAT_NHWC
    assert np.array_equal(load_dump(leaf).get("conv1").outputs[0].load(), x)
    leaf = _nhwc_dump(tmp_path / "om", x)
    om = tmp_path / "net.json"
    write_om_json(om, "net", [OmOp("conv1", "Conv2D", 3, ("conv1/BiasAdd",),
                                   (("conv1/BiasAdd", 0),),
                                   output_descs=(OmTensorDesc("DT_FLOAT", "NC1HWC0",
                                                              (1, 1, 8, 8, 16), (1, 8, 8, 8),
                                                              "NHWC"),))])
    ref = load_dump(leaf, om_json=om).get("conv1").outputs[0]
    assert np.array_equal(ref.load(), x) and ref.origin == ("conv1/BiasAdd", 0)
