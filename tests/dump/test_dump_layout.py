"""File names, mapping.csv, run_dir and the streaming AscendDumpWriter."""
import csv
import os
from datetime import datetime

import numpy as np
import pytest

from pytest_ascend_accuracy.dump.layout import (
    MSACCUCMP_PATTERN, AscendDumpWriter, DumpFileName, build_file_name, parse_file_name,
    read_mapping, run_dir, sanitize, strip_partition)
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.errors import DumpFormatError


def test_sanitize_replaces_the_four_characters():
    assert sanitize("a.b/c\\d e-f_g:0") == "a_b_c_d_e-f_g:0"
    assert sanitize("../..") == "_____"


def test_build_and_parse_normal_name():
    name = build_file_name("Conv2D", "layer1/conv.1", 5, 1, 1682067845380164)
    assert name == "Conv2D.layer1_conv_1.5.1.1682067845380164"
    assert MSACCUCMP_PATTERN.match(name).group(1) == "layer1_conv_1"
    assert parse_file_name(name) == DumpFileName("Conv2D", "layer1_conv_1", 5, 1, 1682067845380164)


def test_parse_ffts_plus_name():
    name = "Conv2D.partition0_rank2_new_sub_graph15_sgt_graph_0_fp32_vars_conv2d_39_Conv2D_lxslice0" \
           ".2.9.1670205071724946.4.487.0.0"
    f = parse_file_name(name)
    assert MSACCUCMP_PATTERN.match(name)
    assert (f.task_id, f.stream_id, f.timestamp) == (2, 9, 1670205071724946)
    assert (f.task_type, f.context_id, f.thread_id, f.device_id) == (4, 487, 0, 0)
    assert f.base_op_name == "fp32_vars_conv2d_39_Conv2D_lxslice0"  # slices stay distinct
    assert f.build() == name


@pytest.mark.parametrize("name,expected", [
    ("Add.add1.3.1682067845380164", (3, 0, 1682067845380164, None)),       # no stream id
    ("Add.add1.3.2.1682067845380164", (3, 2, 1682067845380164, None)),
    ("Add.add1.3.2.1682067845380164.1", (3, 2, 1682067845380164, 1)),     # device id
])
def test_parse_optional_parts(name, expected):
    f = parse_file_name(name)
    assert (f.task_id, f.stream_id, f.timestamp, f.device_id) == expected


@pytest.mark.parametrize("name", ["mapping.csv", "x.npy", "Conv2D.c.1.0.1.output.0.npy",
                                  "README", "a.b.c.d", "1234", "Add..1.2"])
def test_non_dump_names(name):
    assert parse_file_name(name) is None


@pytest.mark.parametrize("raw,expected", [
    ("partition0_rank2_new_sub_graph15_sgt_graph_0_fp32_vars_conv2d_18_Conv2D_lxslice0",
     "fp32_vars_conv2d_18_Conv2D"),
    ("partition0_rank2_new_sub_graph15_sgt_graph_0_L2Loss_6", "L2Loss_6"),
    ("plain_name", "plain_name"),
])
def test_strip_partition_matches_msaccucmp(raw, expected):
    assert strip_partition(raw) == expected


def test_run_dir_layout(tmp_path):
    d = run_dir(tmp_path, device_id=3, model_name="my.model", model_id=2, step=4,
                when=datetime(2024, 5, 6, 7, 8, 9))
    assert d == tmp_path / "20240506070809" / "3" / "my_model" / "2" / "4"
    assert not d.exists()


def test_writer_streams_one_file_per_op_with_increasing_ids(tmp_path):
    with AscendDumpWriter(tmp_path / "leaf") as w:
        paths = [w.write_op("Relu", f"r{i}", [np.ones(2)], [np.ones(2)]) for i in range(5)]
    fields = [parse_file_name(p.name) for p in paths]
    assert [f.op_name for f in fields] == [f"r{i}" for i in range(5)]
    assert [f.task_id for f in fields] == [1, 2, 3, 4, 5]
    stamps = [f.timestamp for f in fields]
    assert stamps == sorted(set(stamps)) and all(len(str(s)) == 16 for s in stamps)
    assert sorted(os.listdir(tmp_path / "leaf")) == sorted(p.name for p in paths)


def test_writer_explicit_ids_and_timestamps(tmp_path):
    w = AscendDumpWriter(tmp_path)
    p = w.write_op("Add", "a", outputs=[np.ones(1)], task_id=42, stream_id=7,
                   timestamp_us=1700000000000001)
    assert p.name == "Add.a.42.7.1700000000000001"
    assert parse_file_name(w.write_op("Add", "b", outputs=[np.ones(1)]).name).timestamp \
        > 1700000000000001


def test_unsafe_op_names_never_leave_the_directory(tmp_path):
    leaf = tmp_path / "a" / "leaf"
    w = AscendDumpWriter(leaf)
    p = w.write_op("../Type", "../../escape/x y", outputs=[np.ones(1)])
    assert p.parent == leaf
    assert p.name.startswith("___Type.______escape_x_y.")
    assert sorted(os.listdir(tmp_path)) == ["a"] and os.listdir(tmp_path / "a") == ["leaf"]
    op = load_dump(leaf).ops[0]
    assert op.name == "../../escape/x y"  # the real name, from the header


def test_over_long_names_go_through_mapping_csv(tmp_path):
    long_name = "block/" * 60 + "conv"
    w = AscendDumpWriter(tmp_path)
    p = w.write_op("Conv2D", long_name, outputs=[np.arange(3.0)])
    q = w.write_op("Conv2D", long_name + "2", outputs=[np.arange(2.0)])
    w.close()
    assert p.name.isdigit() and q.name.isdigit() and p.name != q.name
    rows = list(csv.reader(open(tmp_path / "mapping.csv", newline="")))
    assert [r[0] for r in rows] == [p.name, q.name]
    ts = parse_file_name(rows[0][1]).timestamp
    assert rows[0][1] == build_file_name("Conv2D", long_name, 1, 0, ts)
    assert len(rows[0][1]) > 255 and p.name.startswith(str(ts))
    mapping = read_mapping(tmp_path)
    assert parse_file_name(mapping[p.name]).op_name == sanitize(long_name)
    dump = load_dump(tmp_path)
    assert dump.names == [long_name, long_name + "2"]
    assert np.array_equal(dump[long_name].output().load(), np.arange(3.0))


def test_bad_mapping_csv_names_the_file(tmp_path):
    (tmp_path / "mapping.csv").write_text("12345\n")
    with pytest.raises(DumpFormatError) as info:
        read_mapping(tmp_path)
    assert str(info.value) == (f"{tmp_path / 'mapping.csv'}: line 1: expected "
                               "'stored_name,real_name', got ['12345']")


def test_writer_rejects_a_bare_origin_tuple(tmp_path):
    w = AscendDumpWriter(tmp_path)
    with pytest.raises(TypeError, match="output origin must be"):
        w.write_op("Add", "a", outputs=[np.ones(1)], output_origins=["relu"])
