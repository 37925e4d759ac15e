"""ONNX ``Max``/``Min``/``Sum``/``CumSum`` as CANN's ONNX parser types them (audit 36 B F2:
openWakeWord's speech embedding holds 19 ``Max(x, const)``; the plugin wrote them to ATC's
keep_dtype file as ``OpType::Max``, which no CANN parser gives a node, and refused
``OpType::MaxN``). The newest plugins found (2025 ``hicann/ops-math``
``max_onnx_plugin.cpp``/``min_onnx_plugin.cpp``) expand Max/Min to ``Maximum``/``Minimum``
before keep_dtype applies; canndev's ``max_plugin.cc`` registered ``MaxN``: that spelling is
refused naming the one written and the op's name, which every version keeps."""
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

from pytest_ascend_accuracy import keep_dtype
from pytest_ascend_accuracy.core.ascend_optypes import parser_type, to_ascend_entry
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph.op_catalogue import check_mode


@pytest.fixture
def path(tmp_path):
    """x [1, 8] -> Max(x, 0.1) 'floor' -> Min(., 0.9) 'ceil' -> Sum(., x) 'total' -> CumSum
    'running' (axis 1)."""
    g = h.make_graph(
        [h.make_node("Max", ["x", "lo"], ["a"], name="floor"),
         h.make_node("Min", ["a", "hi"], ["b"], name="ceil"),
         h.make_node("Sum", ["b", "x"], ["c"], name="total"),
         h.make_node("CumSum", ["c", "axis"], ["y"], name="running")], "g",
        [h.make_tensor_value_info("x", TP.FLOAT, [1, 8])],
        [h.make_tensor_value_info("y", TP.FLOAT, [1, 8])],
        [nh.from_array(np.array(0.1, np.float32), "lo"),
         nh.from_array(np.array(0.9, np.float32), "hi"),
         nh.from_array(np.array(1, np.int64), "axis")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(tmp_path / "clamp.onnx"))
    return tmp_path / "clamp.onnx"


@pytest.mark.parametrize("onnx_type, parsed", [("Max", "Maximum"), ("Min", "Minimum"),
                                               ("Sum", "AccumulateNV2"), ("CumSum", "Cumsum")])
def test_the_onnx_spelling_is_written_as_the_parsers_and_both_are_taken(
        path, onnx_type, parsed):
    assert parser_type(onnx_type) == parsed
    assert to_ascend_entry(f"OpType::{onnx_type}") == f"OpType::{parsed}"
    for entry in (f"OpType::{onnx_type}", f"OpType::{parsed}"):
        mode = keep_dtype([entry])
        check_mode(mode, path, "test")
        assert mode.keep_dtype == (f"OpType::{parsed}",)  # what the keep_dtype file holds


def test_the_kept_op_is_the_one_of_that_type():
    mode = keep_dtype(["OpType::Max"])
    assert [mode.keeps_fp32(n, t) for n, t in (("floor", "Max"), ("ceil", "Min"))] == [True,
                                                                                       False]


def test_an_older_canns_maxn_is_refused_naming_the_type_written_and_the_op(path):
    with pytest.raises(ConfigError) as info:
        check_mode(keep_dtype(["OpType::MaxN"]), path, "test")
    text = str(info.value)
    assert re.search(r"closest: '([^']+)'", text).group(1) == "OpType::Maximum", text
    assert ("CANN versions differ here (an older canndev parser named these nodes MaxN): "
            "naming the op, e.g. 'floor', keeps it in every version") in text, text
    check_mode(keep_dtype(["floor"]), path, "test")  # the op's name, pasted


def _clip_model(tmp_path, low, high):
    """x -> Clip 'clamp' (opset 13) with min ``low`` and max ``high`` given or not ("")."""
    inits = [nh.from_array(np.array(v, np.float32), n) for n, v in (("lo", 0.1), ("hi", 0.9))]
    g = h.make_graph([h.make_node("Clip", ["x", "lo" if low else "", "hi" if high else ""],
                                  ["y"], name="clamp")], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [1, 8])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [1, 8])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(tmp_path / "clip.onnx"))
    return tmp_path / "clip.onnx"


@pytest.mark.parametrize("low, high, parsed", [(True, True, "ClipByValue"),
                                               (True, False, "Maximum"),
                                               (False, True, "Minimum")])
def test_a_clip_is_typed_by_the_bounds_it_has(tmp_path, low, high, parsed):
    """2025 ops-math ``clip_onnx_plugin.cpp``: min and max ``ClipByValue``, max only
    ``Minimum``, min only ``Maximum`` (``torch.clamp(min=eps)``): ``OpType::Clip``, written
    ``OpType::ClipByValue``, would keep no such Clip on ATC; it is refused where none is one,
    offering the parser's type and the op's name, both of which the emulator keeps."""
    from pytest_ascend_accuracy.backends.emulator.optypes import node_parser_type
    from pytest_ascend_accuracy.backends.emulator.rounding import kept_by_parser_type

    path = _clip_model(tmp_path, low, high)
    node = onnx.load(str(path)).graph.node[0]
    assert node_parser_type(node) == parsed
    check_mode(keep_dtype([f"OpType::{parsed}"]), path, "test")
    kept = kept_by_parser_type(keep_dtype([f"OpType::{parsed}"]), [node])
    assert kept("clamp", "Clip")
    if parsed == "ClipByValue":
        check_mode(keep_dtype(["OpType::Clip"]), path, "test")
        return
    with pytest.raises(ConfigError) as info:
        check_mode(keep_dtype(["OpType::Clip"]), path, "test")
    text = str(info.value)
    assert re.search(r"closest: '([^']+)'", text).group(1) == f"OpType::{parsed}", text
    assert ("CANN versions differ here (an older canndev parser named these nodes "
            "ClipByValue): naming the op, e.g. 'clamp', keeps it in every version") in text, text
    assert not kept_by_parser_type(keep_dtype(["OpType::Clip"]), [node])("clamp", "Clip")


def _split_model(tmp_path, sized):
    inputs = ["x", "sizes"] if sized else ["x"]
    g = h.make_graph([h.make_node("Split", inputs, ["a", "b"], name="halves", axis=1),
                      h.make_node("Add", ["a", "b"], ["y"], name="add")], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [1, 8])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [1, 4])],
                     [nh.from_array(np.array([4, 4], np.int64), "sizes")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(tmp_path / "split.onnx"))
    return tmp_path / "split.onnx"


@pytest.mark.parametrize("sized, parsed, other", [(False, "Split", "SplitV"),
                                                  (True, "SplitV", "Split")])
def test_a_split_is_typed_by_whether_it_is_given_sizes(tmp_path, sized, parsed, other):
    """ops-math ``split_onnx_plugin.cpp``: a Split given sizes (or num_outputs) is SplitV, one
    given neither keeps its name. Review RM: ``OpType::Split`` was written ``SplitV`` and the
    refusal offered ``OpType::Split`` again, so no entry kept an equal Split; and the emulator
    kept an equal Split under ``OpType::SplitV``, which ATC (and the fake om) do not."""
    from pytest_ascend_accuracy.backends.emulator.optypes import node_parser_type
    from pytest_ascend_accuracy.backends.emulator.rounding import kept_by_parser_type

    path = _split_model(tmp_path, sized)
    node = onnx.load(str(path)).graph.node[0]
    assert node_parser_type(node) == parsed
    mode = keep_dtype([f"OpType::{parsed}"])
    check_mode(mode, path, "test")
    assert mode.keep_dtype == (f"OpType::{parsed}",)  # written as it is
    assert kept_by_parser_type(mode, [node])("halves", "Split")
    assert not kept_by_parser_type(keep_dtype([f"OpType::{other}"]), [node])("halves", "Split")
    with pytest.raises(ConfigError) as info:
        check_mode(keep_dtype([f"OpType::{other}"]), path, "test")
    closest = re.search(r"closest: '([^']+)'", str(info.value)).group(1)
    assert closest == f"OpType::{parsed}"
    check_mode(keep_dtype([closest]), path, "test")  # pasted: taken


def test_split_v_keeps_what_the_fake_atcs_om_keeps(tmp_path):
    from pytest_ascend_accuracy.backends.emulator.rounding import kept_by_parser_type

    for sized in (False, True):
        node = onnx.load(str(_split_model(tmp_path, sized))).graph.node[0]
        assert kept_by_parser_type(keep_dtype(["OpType::SplitV"]), [node])(
            "halves", "Split") is sized


def test_mean_which_the_parser_expands_into_two_types_is_refused_naming_the_op(tmp_path):
    """ops-math ``mean_onnx_plugin.cpp``: Mean becomes AccumulateNV2 and Muls before keep_dtype
    applies; ``OpType::Mean`` keeps nothing on ATC (review RM). Naming the op keeps both."""
    g = h.make_graph([h.make_node("Mean", ["x", "x2"], ["y"], name="avg")], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [1, 4]),
                      h.make_tensor_value_info("x2", TP.FLOAT, [1, 4])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [1, 4])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(tmp_path / "mean.onnx"))
    with pytest.raises(ConfigError) as info:
        check_mode(keep_dtype(["OpType::Mean"]), tmp_path / "mean.onnx", "test")
    assert ("keep_dtype entry 'OpType::Mean': ATC's ONNX parser expands each ONNX Mean into "
            "AccumulateNV2 and Muls before keep_dtype applies, so no OpType:: entry keeps it "
            "whole: name the op, e.g. 'avg', which keeps every node it becomes") in str(info.value)
    check_mode(keep_dtype(["avg"]), tmp_path / "mean.onnx", "test")


def test_the_2025_scatter_nd_type_is_refused_as_another_versions_not_as_a_finished_name(
        tmp_path):
    """Review RM: ``OpType::TensorScatterUpdate`` (the 2025 ops-math parser's type for ScatterND)
    was refused as "a finished graph's name"."""
    g = h.make_graph([h.make_node("ScatterND", ["x", "idx", "upd"], ["y"], name="put")], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [4])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [4])],
                     [nh.from_array(np.array([[1]], np.int64), "idx"),
                      nh.from_array(np.array([1.0], np.float32), "upd")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(tmp_path / "sc.onnx"))
    with pytest.raises(ConfigError) as info:
        check_mode(keep_dtype(["OpType::TensorScatterUpdate"]), tmp_path / "sc.onnx", "test")
    text = str(info.value)
    assert ("'OpType::TensorScatterUpdate' (older CANN parsers' type for ONNX ScatterND, which "
            "the newest found types ScatterNdUpdate)") in text, text
    assert "finished graph" not in text
    assert "naming the op, e.g. 'put', keeps it in every version" in text, text
