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
def test_the_onnx_spelling_is_written_as_the_parsers_and_both_are_taken(path, onnx_type,
                                                                         parsed):
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


def test_a_split_given_no_sizes_is_split_and_one_given_sizes_split_v():
    from pytest_ascend_accuracy.core.ascend_optypes import node_parser_type

    even = h.make_node("Split", ["x"], ["a", "b"], name="halves", axis=1)
    sized = h.make_node("Split", ["x", "sizes"], ["a", "b"], name="parts", axis=1)
    counted = h.make_node("Split", ["x"], ["a", "b"], name="n", axis=1, num_outputs=2)
    assert [node_parser_type(n) for n in (even, sized, counted)] == ["Split", "SplitV", "SplitV"]
