"""Finding the leaf dump directory from any level of the layout; runs, models, empty dirs."""
from datetime import datetime

import numpy as np
import pytest

from pytest_ascend_accuracy.dump.discovery import choose_leaf, describe_leaf
from pytest_ascend_accuracy.dump.layout import AscendDumpWriter, run_dir
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.errors import DumpFormatError

T1 = datetime(2024, 1, 1, 10, 0, 0)
T2 = datetime(2024, 1, 1, 11, 0, 0)


def _run(root, *, model="net", when=T1, device=0, step=0, value=1.0):
    d = run_dir(root, device_id=device, model_name=model, step=step, when=when)
    w = AscendDumpWriter(d)
    w.write_op("Relu", "relu1", outputs=[np.full(2, value, np.float32)])
    return d


@pytest.mark.parametrize("level", range(6))
def test_any_level_of_the_layout_finds_the_leaf(tmp_path, level):
    leaf = _run(tmp_path)
    start = leaf.parents[4 - level] if level < 5 else leaf
    start = tmp_path if level == 0 else start
    assert choose_leaf(start).path == leaf
    dump = load_dump(start)
    assert dump.names == ["relu1"] and dump.root == str(leaf) and dump.model_name == "net"


def test_describe_leaf_reads_the_layout(tmp_path):
    info = describe_leaf(_run(tmp_path, device=2, step=3))
    assert (info.timestamp, info.device_id, info.model_name, info.model_id, info.step) == (
        "20240101100000", "2", "net", 1, 3)


def test_several_runs_pick_the_newest(tmp_path):
    _run(tmp_path, when=T1, value=1.0)
    newest = _run(tmp_path, when=T2, value=2.0)
    assert choose_leaf(tmp_path).path == newest
    dump = load_dump(tmp_path)
    assert dump["relu1"].output().load().tolist() == [2.0, 2.0]
    assert dump.meta["older_runs_ignored"] == [str(tmp_path / "20240101100000" / "0" / "net" / "1" / "0")]


def test_several_steps_pick_the_last(tmp_path):
    _run(tmp_path, step=0)
    last = _run(tmp_path, step=1)
    assert choose_leaf(tmp_path).path == last


def test_model_name_selects_among_models(tmp_path):
    _run(tmp_path, model="net")
    other = _run(tmp_path, model="net_subgraph")
    assert choose_leaf(tmp_path, "net_subgraph").path == other
    assert load_dump(tmp_path, model_name="net_subgraph").model_name == "net_subgraph"


def test_different_models_without_model_name_is_ambiguous(tmp_path):
    _run(tmp_path, model="a")
    _run(tmp_path, model="b")
    with pytest.raises(DumpFormatError) as info:
        choose_leaf(tmp_path)
    msg = str(info.value)
    assert msg.startswith(f"{tmp_path}: 2 dump directories for different devices or models, "
                          "cannot choose (pass model_name=... or point at one of them): ")
    assert "20240101100000/0/a/1/0" in msg and "20240101100000/0/b/1/0" in msg


def test_model_name_that_does_not_match_lists_what_is_there(tmp_path):
    _run(tmp_path, model="a")
    with pytest.raises(DumpFormatError) as info:
        load_dump(tmp_path, model_name="resnet")
    assert str(info.value) == f"{tmp_path}: no dump of model 'resnet'; found: 20240101100000/0/a/1/0"


def test_empty_dump_directory(tmp_path):
    (tmp_path / "20240101100000" / "0").mkdir(parents=True)
    (tmp_path / "notes.txt").write_text("not a dump")
    with pytest.raises(DumpFormatError) as info:
        load_dump(tmp_path)
    assert str(info.value).startswith(f"{tmp_path}: empty dump directory: no dump files found")


def test_stats_only_dump_says_so(tmp_path):
    leaf = tmp_path / "20240101100000" / "0" / "net" / "1" / "0"
    leaf.mkdir(parents=True)
    (leaf / "Conv2D.conv1.1.0.1682067845380164.csv").write_text("Input/Output,Index\n")
    with pytest.raises(DumpFormatError) as info:
        load_dump(tmp_path)
    assert str(info.value) == (f"{tmp_path}: holds only statistics CSV files (acl.json dump_data: "
                               "stats); tensor dumps (dump_data: tensor) are needed")


def test_missing_path(tmp_path):
    with pytest.raises(DumpFormatError, match="no such file or directory"):
        load_dump(tmp_path / "nope")


def test_aclnn_kernel_only_directories_are_ignored(tmp_path):
    leaf = _run(tmp_path)
    kernel = tmp_path / "kernel"
    kernel.mkdir()
    (kernel / "aclnnAdd.add.1.0.1682067845380164").write_bytes(b"x")
    assert choose_leaf(tmp_path).path == leaf


def test_non_standard_layout_single_leaf(tmp_path):
    leaf = tmp_path / "my" / "dumps"
    AscendDumpWriter(leaf).write_op("Add", "a", outputs=[np.ones(1)])
    assert choose_leaf(tmp_path).path == leaf
    assert load_dump(tmp_path).model_name is None
