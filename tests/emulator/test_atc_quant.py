"""ONNX quantisation ops, which ATC does not convert (CANN's AMCT guide: a model quantised with
QuantizeLinear/DequantizeLinear must be adapted with convert_qat_model first; no CANN ONNX
parser plugin for them or the QLinear/Integer ops was found): a quantisation trial's QDQ and
QOperator models passed on the emulator without a word. Each conversion warns, a cache hit
too; the fake ATC stops at them with E19010."""
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from pytest_ascend_accuracy.backends.emulator.atc_quant import AtcQuantWarning
from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
from pytest_ascend_accuracy.core.cache import Cache


def _qdq_model(path):
    inits = [nh.from_array(np.array(0.02, np.float32), "s"),
             nh.from_array(np.array(0, np.int8), "zp"),
             nh.from_array(np.eye(4, dtype=np.float32), "w")]
    nodes = [h.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], name="x_quant"),
             h.make_node("DequantizeLinear", ["q", "s", "zp"], ["dq"], name="x_dequant"),
             h.make_node("MatMul", ["dq", "w"], ["y"], name="mm")]
    graph = h.make_graph(nodes, "qdq", [h.make_tensor_value_info("x", TP.FLOAT, [1, 4])],
                         [h.make_tensor_value_info("y", TP.FLOAT, [1, 4])], inits)
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), str(path))
    return path


def test_each_conversion_of_a_qdq_model_warns_a_cache_hit_too(tmp_path):
    path = _qdq_model(tmp_path / "qdq.onnx")
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    for _ in range(2):
        with pytest.warns(AtcQuantWarning) as caught:
            backend.convert(path)
        text = str(caught[0].message)
        assert text.startswith("ONNX quantisation ops no CANN ONNX parser converts, in model "
                               "'qdq': 'x_quant' (QuantizeLinear); 'x_dequant' "
                               "(DequantizeLinear). CANN's AMCT guide")
        assert "amct_onnx.convert_qat_model(model_file, save_path)" in text
        assert "QuantizeLinear-DequantizeLinear pairs" not in text  # what convert_qat_model takes


def test_a_float_model_converts_without_it(tmp_path):
    from pytest_ascend_accuracy.testing import models

    onnx.save(models.passing_mlp(), str(tmp_path / "m.onnx"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", AtcQuantWarning)
        EmulatorBackend(Cache(tmp_path / "cache")).convert(tmp_path / "m.onnx")


def test_the_fake_atc_stops_at_them_with_e19010(tmp_path, capsys, monkeypatch):
    from pytest_ascend_accuracy.testing import fake_atc

    monkeypatch.chdir(tmp_path)
    path = _qdq_model(tmp_path / "qdq.onnx")
    rc = fake_atc.main(["--framework=5", f"--model={path}", f"--output={tmp_path / 'out'}",
                        "--soc_version=Ascend310P3", "--input_shape=x:1,4"])
    assert rc != 0
    assert ("E19010: No parser is registered for Op [x_quant, optype "
            "[ai.onnx::13::QuantizeLinear]].") in capsys.readouterr().out


def _branch_quant_model(path, domain=""):
    """A QuantizeLinear/DequantizeLinear pair inside an If's then branch (``domain``: ONNX's,
    or onnxruntime's com.microsoft contrib ops, at the top)."""
    vi = h.make_tensor_value_info
    inits = [nh.from_array(np.array(0.02, np.float32), "s"),
             nh.from_array(np.array(0, np.int8), "zp"),
             nh.from_array(np.array(0.0, np.float32), "zero")]
    qdq = [h.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], name="x_quant", domain=domain),
           h.make_node("DequantizeLinear", ["q", "s", "zp"], ["t"], name="x_dequant",
                       domain=domain)]
    if domain:
        nodes, outputs = qdq, "t"
    else:
        then = h.make_graph(qdq, "then", [], [vi("t", TP.FLOAT, [1, 4])])
        other = h.make_graph([h.make_node("Identity", ["x"], ["e"], name="else/id")], "else", [],
                             [vi("e", TP.FLOAT, [1, 4])])
        nodes = [h.make_node("ReduceSum", ["x"], ["r"], name="rsum", keepdims=0),
                 h.make_node("Greater", ["r", "zero"], ["c"], name="gt"),
                 h.make_node("If", ["c"], ["y"], name="if", then_branch=then, else_branch=other)]
        outputs = "y"
    graph = h.make_graph(nodes, "qb", [vi("x", TP.FLOAT, [1, 4])],
                         [vi(outputs, TP.FLOAT, [1, 4])], inits)
    opsets = [h.make_opsetid("", 13)] + ([h.make_opsetid(domain, 1)] if domain else [])
    onnx.save(h.make_model(graph, opset_imports=opsets), str(path))
    return path


@pytest.mark.parametrize("domain", ["", "com.microsoft"])
def test_ops_inside_a_branch_and_contrib_ops_warn_too(tmp_path, domain):
    """A review (H47): both converted without a word and the fake ATC took them."""
    from pytest_ascend_accuracy.graph.parser_refusals import atc_parse_error

    path = _branch_quant_model(tmp_path / "qb.onnx", domain)
    with pytest.warns(AtcQuantWarning, match="'x_quant' \\(QuantizeLinear\\); 'x_dequant'"):
        EmulatorBackend(Cache(tmp_path / "cache")).convert(path)
    assert atc_parse_error(onnx.load(str(path)))[0] == "E19010"


@pytest.mark.parametrize("how", [["-W", "ignore:ONNX quantisation ops"],
                                 ["-o", "filterwarnings=error\nignore:ONNX quantisation ops"]])
def test_the_readme_s_message_filter_silences_it_under_filterwarnings_error(pytester, how):
    """An upgrade trial: a filterwarnings = error project failed on it, and a filter by class
    stops an earlier version at start-up; the README's filter by message, pasted."""
    _qdq_model(pytester.path / "qdq.onnx")
    pytester.makeini("[pytest]\nfilterwarnings =\n    error\n")
    pytester.makepyfile(test_q="""
        import numpy as np
        from pytest_ascend_accuracy import accuracy

        @accuracy(threshold=0.95)
        def test_q(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("qdq.onnx", inputs={"x": np.ones((1, 4), np.float32)})
            check_accuracy(ascend_model("qdq.onnx").run(inputs), golden_dump("qdq.onnx", inputs))
    """)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)
    pytester.runpytest("-p", "no:cacheprovider", *how).assert_outcomes(passed=1)


def test_ops_are_named_as_atc_names_them_and_their_domain_is_in_the_optype():
    """A review (H49): an unnamed QuantizeLinear was called 'QuantizeLinear' (ATC and the om
    json: QuantizeLinear_0), a com.microsoft one 'ai.onnx::13::QuantizeLinear' (ATC builds
    domain::version::type), and a com.microsoft MatMulNBits (onnxruntime's 4-bit weight-only
    quantiser) converted without a word."""
    from pytest_ascend_accuracy.graph.op_domains import quant_nodes
    from pytest_ascend_accuracy.graph.parser_refusals import atc_parse_error

    model = onnx.load(str(_qdq_model(_tmp() / "qdq.onnx")))
    for node in model.graph.node:
        node.name = ""
    assert [n for n, _, _ in quant_nodes(model.graph)] == ["QuantizeLinear_0",
                                                           "DequantizeLinear_1"]
    contrib = onnx.load(str(_branch_quant_model(_tmp() / "c.onnx", "com.microsoft")))
    assert atc_parse_error(contrib) == ("E19010", "No parser is registered for Op [x_quant, "
                                                  "optype [com.microsoft::1::QuantizeLinear]].")
    nbits = h.make_node("MatMulNBits", ["x", "wq", "sc"], ["y"], name="mm_q4",
                        domain="com.microsoft", K=4, N=4, bits=4, block_size=16)
    assert quant_nodes(h.make_graph([nbits], "g", [], [])) == [
        ("mm_q4", "MatMulNBits", "com.microsoft")]


def _tmp():
    import tempfile
    from pathlib import Path

    return Path(tempfile.mkdtemp())


def test_the_fake_s_optype_takes_the_default_opset_however_it_is_spelled():
    """A review (H50): a model declaring its default opset as 'ai.onnx' read version 0, and a
    Loop inside an If branch read its location text as its domain."""
    from pytest_ascend_accuracy.graph.parser_refusals import atc_parse_error

    model = onnx.load(str(_qdq_model(_tmp() / "qdq.onnx")))
    model.opset_import[0].domain = "ai.onnx"
    assert atc_parse_error(model) == ("E19010", "No parser is registered for Op [x_quant, "
                                                "optype [ai.onnx::13::QuantizeLinear]].")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_control_flow import loop_model

    loop = onnx.load(str(loop_model(_tmp() / "loop.onnx")))
    wrapped = h.make_graph([h.make_node("If", ["c"], ["y"], name="if",
                                        then_branch=loop.graph, else_branch=loop.graph)],
                           "w", [h.make_tensor_value_info("c", TP.BOOL, [])],
                           [h.make_tensor_value_info("y", TP.FLOAT, [1, 8])])
    inner = h.make_model(wrapped, opset_imports=[h.make_opsetid("", 13)])
    assert atc_parse_error(inner) == ("E19010", "No parser is registered for Op [loop, optype "
                                                "[ai.onnx::13::Loop]].")


def test_onnxruntime_s_quantisation_contrib_ops_are_its_schemas_or_onnx_s_ops():
    """QUANT_OP_TYPES was checked against onnxruntime 1.32.0 (graph/op_domains.py): each name
    is one of its com.microsoft schemas or an ONNX op, and the QOperator ops its quantiser
    writes (QLinearOpsRegistry: quantization/operators/*.py) are all in it."""
    ort = pytest.importorskip("onnxruntime")
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_c

    from pytest_ascend_accuracy.graph.op_domains import QUANT_OP_TYPES

    contrib = {s.name for s in ort_c.get_all_operator_schema() if s.domain == "com.microsoft"}
    release = tuple(int(p) for p in ort.__version__.split("+")[0].split(".")[:2])
    if "QLinearAdd" not in contrib or release < (1, 32):  # (older ones lack newer ops)
        pytest.skip(f"onnxruntime {ort.__version__}: not the 1.32 the list was checked with")
    standard = {s.name for s in onnx.defs.get_all_schemas() if s.domain == ""}
    assert QUANT_OP_TYPES <= contrib | standard, sorted(QUANT_OP_TYPES - contrib - standard)
    written = {"QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu",
               "QLinearConcat", "QLinearAveragePool", "QLinearGlobalAveragePool",
               "QLinearSoftmax", "QLinearWhere", "QGemm", "QAttention",
               "QEmbedLayerNormalization", "DynamicQuantizeLSTM", "MatMulNBits",
               "GatherBlockQuantized", "MatMulBnb4"}
    assert written <= QUANT_OP_TYPES and written <= contrib


def test_a_qoperator_model_is_told_to_be_quantised_in_qdq_format():
    """convert_qat_model adapts QuantizeLinear-DequantizeLinear pairs (the AMCT guide's
    table), not QLinearConv and onnxruntime's QOperator ops: the warning said to adapt it so."""
    from pytest_ascend_accuracy.backends.emulator.atc_quant import quant_warning

    text = quant_warning("qop", [["x_q", "QuantizeLinear"], ["conv_quant", "QLinearConv"],
                                 ["add_quant", "QLinearAdd"], ["add2_quant", "QLinearAdd"]])
    assert ("check that on an NPU (it adapts QuantizeLinear-DequantizeLinear pairs, not "
            "QLinearConv, QLinearAdd: quantise the float model in the QDQ format, "
            "onnxruntime.quantization.quantize_static with quant_format=QuantFormat.QDQ); the "
            "emulator computes") in text, text
