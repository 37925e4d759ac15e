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
