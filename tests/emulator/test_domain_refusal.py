"""Ops of a domain other than ONNX's own, which ATC's ONNX parser has no parser for (it looks
one up by ``<domain>::<opset>::<type>`` and CANN's plugins register ai.onnx types:
``graph/parser_refusals.py`` cites the sources): an audit of the ONNX node tests found the
emulator passing ``ai_onnx_ml_tree_ensemble_set_membership`` (float16 moved 1.2 out of its set,
a leaf of 100 landed in another class, the whole-tensor cosine 0.9975 passed), and an
onnxruntime-optimised model's com.microsoft contrib ops converted as well. Both are refused at
conversion now, as ATC refuses them (E19010); the quantisation ops atc_quant.py warns of are
still only warned of, onnxruntime's QOperator contrib ops too (a review: a quantize_static
QOperator model was refused as an optimised one); the fake ATC stops at them with ATC's words.
The extract_model cut is offered only where ATC parses the part it cuts, and a call of a
model-local function declared in ONNX's domain is refused like one of another domain."""
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

from pytest_ascend_accuracy.backends.emulator.atc_quant import AtcQuantWarning
from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.errors import ConversionError
from pytest_ascend_accuracy.graph.parser_refusals import atc_parse_error

vi = h.make_tensor_value_info


def binarizer_model(path, *, tail=True):
    """Relu -> ai.onnx.ml Binarizer (a classifier's post-processing stage); ``tail=False``:
    the Binarizer reads the graph input, nothing before it."""
    nodes = ([h.make_node("Relu", ["x"], ["r"], name="relu")] if tail else []) + [
        h.make_node("Binarizer", ["r" if tail else "x"], ["y"], name="bin", domain="ai.onnx.ml",
                    threshold=0.5)]
    graph = h.make_graph(nodes, "ml", [vi("x", TP.FLOAT, [2, 4])], [vi("y", TP.FLOAT, [2, 4])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13),
                                               h.make_opsetid("ai.onnx.ml", 1)])
    onnx.save(model, str(path))
    return path


def tree_model(path):
    """One ai.onnx.ml TreeEnsembleRegressor, unnamed (ATC names it TreeEnsembleRegressor_0)."""
    node = h.make_node("TreeEnsembleRegressor", ["x"], ["y"], domain="ai.onnx.ml",
                       n_targets=1, nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2],
                       nodes_featureids=[0, 0, 0], nodes_values=[1.2, 0.0, 0.0],
                       nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"], nodes_truenodeids=[1, 0, 0],
                       nodes_falsenodeids=[2, 0, 0], target_treeids=[0, 0],
                       target_nodeids=[1, 2], target_ids=[0, 0], target_weights=[1.0, 100.0])
    graph = h.make_graph([node], "tree", [vi("x", TP.FLOAT, [21, 1])],
                         [vi("y", TP.FLOAT, [21, 1])])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13),
                                                 h.make_opsetid("ai.onnx.ml", 3)]), str(path))
    return path


def gelu_model(path, *, domain_version=1, op="Gelu"):
    """MatMul -> com.microsoft Gelu, as onnxruntime's optimiser writes it (com.microsoft at 1)."""
    w = onnx.numpy_helper.from_array(np.eye(4, dtype=np.float32), "w")
    nodes = [h.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
             h.make_node(op, ["m"], ["y"], name="gelu", domain="com.microsoft")]
    graph = h.make_graph(nodes, "ort", [vi("x", TP.FLOAT, [1, 4])], [vi("y", TP.FLOAT, [1, 4])],
                         [w])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13),
                                                 h.make_opsetid("com.microsoft",
                                                                domain_version)]), str(path))
    return path


def _refusal(path, tmp_path):
    with pytest.raises(ConversionError) as info:
        EmulatorBackend(Cache(tmp_path / "cache")).convert(path)
    return str(info.value)


def test_an_ai_onnx_ml_model_is_refused_as_atc_refuses_it(tmp_path):
    text = _refusal(binarizer_model(tmp_path / "ml.onnx"), tmp_path)  # before: converted
    assert text.startswith(
        "model 'ml' has 1 operator of domain ai.onnx.ml, not ONNX's own (ai.onnx): 'bin' "
        "(ai.onnx.ml::1::Binarizer). CANN's ONNX parser has no parser for it (its plugins "
        "register ai.onnx types and, of other domains, only torch_npu's npu ops and "
        "com.microsoft MultiHeadAttention at opsets 11 to 18; ATC stops with E19010 \"No parser "
        "is registered for Op [bin, optype [ai.onnx.ml::1::Binarizer]].\"), so the model cannot "
        "be converted, and the emulator does not compute it as a device would; ai.onnx.ml ops "
        "(classical machine learning: trees, encoders, scalers) have no CANN parser: run that "
        "stage on the host (onnxruntime on the CPU) and convert the rest"), text
    assert text.endswith("; the part before them converts as a model of its own: "
                         "onnx.utils.extract_model(input_path, output_path, ['x'], ['r'])"), text


def test_the_extract_model_call_it_prints_gives_a_model_that_converts(tmp_path):
    path = binarizer_model(tmp_path / "ml.onnx")
    text = _refusal(path, tmp_path)
    call = text[text.index("onnx.utils.extract_model("):]
    call = call.replace("input_path", repr(str(path))).replace(
        "output_path", repr(str(tmp_path / "npu_part.onnx")))
    from onnx import utils  # noqa: F401 (the call as printed)

    eval(call, {"onnx": onnx})
    assert atc_parse_error(onnx.load(str(tmp_path / "npu_part.onnx"))) is None
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    x = np.array([[-1, 0.2, 0.7, 3]] * 2, np.float32)
    out = backend.outputs(backend.convert(tmp_path / "npu_part.onnx"), {"x": x})
    assert list(out) == ["r"] and np.allclose(out["r"], np.maximum(x, 0), rtol=1e-3)


def test_an_unnamed_tree_ensemble_is_named_as_atc_names_it_and_no_cut_is_offered(tmp_path):
    text = _refusal(tree_model(tmp_path / "tree.onnx"), tmp_path)
    assert ("'TreeEnsembleRegressor_0' (ai.onnx.ml::3::TreeEnsembleRegressor)" in text
            and "Op [TreeEnsembleRegressor_0, optype [ai.onnx.ml::3::TreeEnsembleRegressor]]"
            in text), text
    assert "extract_model" not in text  # nothing before it for the NPU


def test_a_com_microsoft_contrib_op_is_refused_naming_onnxruntimes_optimisations(tmp_path):
    text = _refusal(gelu_model(tmp_path / "opt.onnx"), tmp_path)  # before: converted
    assert text.startswith(
        "model 'opt' has 1 operator of domain com.microsoft, not ONNX's own (ai.onnx): 'gelu' "
        "(com.microsoft::1::Gelu)."), text
    assert "ATC stops with E19010 \"No parser is registered for Op [gelu, optype " \
           "[com.microsoft::1::Gelu]].\"" in text
    assert ("com.microsoft ops are onnxruntime's contrib ops, which its optimisations write: "
            "convert the model as exported, not a file onnxruntime saved after optimising it "
            "(SessionOptions.optimized_model_filepath at a graph_optimization_level above "
            "onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL, or "
            "onnxruntime.transformers.optimizer's output)") in text
    assert text.endswith("onnx.utils.extract_model(input_path, output_path, ['x'], ['m'])")


def test_the_optimisation_level_it_names_saves_a_model_without_contrib_ops(tmp_path):
    """The advice applied: onnxruntime at ORT_DISABLE_ALL saves no contrib op where a level
    above it fuses Conv+Relu into com.microsoft's FusedConv."""
    ort = pytest.importorskip("onnxruntime")
    w = onnx.numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w")
    nodes = [h.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c"], ["y"], name="relu")]
    graph = h.make_graph(nodes, "g", [vi("x", TP.FLOAT, [1, 1, 4, 4])],
                         [vi("y", TP.FLOAT, [1, 2, 4, 4])], [w])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), str(tmp_path / "g.onnx"))
    for level, name in [(ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, "fused"),
                        (ort.GraphOptimizationLevel.ORT_DISABLE_ALL, "plain")]:
        opts = ort.SessionOptions()
        opts.graph_optimization_level = level
        opts.optimized_model_filepath = str(tmp_path / f"{name}.onnx")
        ort.InferenceSession(str(tmp_path / "g.onnx"), opts, providers=["CPUExecutionProvider"])
    fused = onnx.load(str(tmp_path / "fused.onnx"))
    assert [(n.domain, n.op_type) for n in fused.graph.node] == [("com.microsoft", "FusedConv")]
    assert atc_parse_error(fused)[1].endswith("optype [com.microsoft::1::FusedConv]].")
    with pytest.raises(ConversionError, match="com.microsoft::1::FusedConv"):
        EmulatorBackend(Cache(tmp_path / "cache")).convert(tmp_path / "fused.onnx")
    plain = onnx.load(str(tmp_path / "plain.onnx"))
    assert [(n.domain, n.op_type) for n in plain.graph.node] == [("", "Conv"), ("", "Relu")]
    assert atc_parse_error(plain) is None
    EmulatorBackend(Cache(tmp_path / "cache")).convert(tmp_path / "plain.onnx")


def test_ops_inside_an_if_branch_are_refused_too(tmp_path):
    then = h.make_graph([h.make_node("Binarizer", ["x"], ["t"], name="then/bin",
                                     domain="ai.onnx.ml")], "then", [], [vi("t", TP.FLOAT, [2])])
    other = h.make_graph([h.make_node("Identity", ["x"], ["e"], name="else/id")], "else", [],
                         [vi("e", TP.FLOAT, [2])])
    nodes = [h.make_node("ReduceSum", ["x"], ["s"], name="rs", keepdims=0),
             h.make_node("Greater", ["s", "z"], ["c"], name="gt"),
             h.make_node("If", ["c"], ["y"], name="cond", then_branch=then, else_branch=other)]
    z = onnx.numpy_helper.from_array(np.array(0, np.float32), "z")
    graph = h.make_graph(nodes, "br", [vi("x", TP.FLOAT, [2])], [vi("y", TP.FLOAT, [2])], [z])
    path = tmp_path / "br.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13),
                                                 h.make_opsetid("ai.onnx.ml", 1)]), str(path))
    text = _refusal(path, tmp_path)
    assert "'then/bin' (ai.onnx.ml::1::Binarizer in the then_branch of 'cond')" in text, text
    assert "extract_model" not in text  # a branch's op: no cut offered
    assert atc_parse_error(onnx.load(str(path))) == (
        "E19010", "No parser is registered for Op [then/bin, optype [ai.onnx.ml::1::Binarizer]].")


@pytest.mark.parametrize("make, said", [
    (binarizer_model, "No parser is registered for Op [bin, optype [ai.onnx.ml::1::Binarizer]]."),
    (gelu_model, "No parser is registered for Op [gelu, optype [com.microsoft::1::Gelu]].")])
def test_the_fake_atc_stops_at_them_with_e19010(tmp_path, capsys, monkeypatch, make, said):
    from pytest_ascend_accuracy.testing import fake_atc

    monkeypatch.chdir(tmp_path)  # ATC writes fusion_result.json where it runs
    path = make(tmp_path / "m.onnx")
    shape = "x:2,4" if make is binarizer_model else "x:1,4"
    rc = fake_atc.main(["--framework=5", f"--model={path}", f"--output={tmp_path / 'out'}",
                        "--soc_version=Ascend310P3", f"--input_shape={shape}"])
    assert rc != 0  # before: converted
    assert f"E19010: {said}" in capsys.readouterr().out


def _apply(advice, path, out):
    """``advice`` (a statement the refusal prints) run as pasted into a fresh Python after
    ``import onnx``, its paths filled in."""
    import subprocess
    import sys

    code = "import onnx\n" + advice.replace("input_path", repr(str(path))).replace(
        "output_path", repr(str(out)))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("domain", ["local", ""])
def test_a_model_local_function_is_refused_and_inlining_it_as_advised_converts(tmp_path,
                                                                               domain):
    """A node calling one of the model's own functions (torch's export_modules_as_functions,
    onnxscript): onnxruntime expands it, ATC's parser looks it up as local::1::AddB. One
    declared in ONNX's domain (onnx.checker refuses it; the emulator converted it and its run
    failed in onnxruntime's words) is ai.onnx::13::AddB to the parser (a review)."""
    add_b = h.make_function(domain, "AddB", ["p", "q"], ["r"],
                            [h.make_node("Add", ["p", "q"], ["r"])], [h.make_opsetid("", 13)])
    b = onnx.numpy_helper.from_array(np.ones((1, 4), np.float32), "b")
    graph = h.make_graph([h.make_node("AddB", ["x", "b"], ["y"], name="add_b", domain=domain)],
                         "fn", [vi("x", TP.FLOAT, [1, 4])], [vi("y", TP.FLOAT, [1, 4])], [b])
    path = tmp_path / "fn.onnx"
    onnx.save(h.make_model(graph, functions=[add_b], opset_imports=[h.make_opsetid("", 13)] + (
        [h.make_opsetid(domain, 1)] if domain else [])), str(path))
    text = _refusal(path, tmp_path)  # before: converted
    optype = f"{domain or 'ai.onnx'}::{1 if domain else 13}::AddB"
    assert text.startswith(f"model 'fn' has 1 operator calling the model's own function "
                           f"(model.functions): 'add_b' ({optype}). "), text
    assert f"E19010 \"No parser is registered for Op [add_b, optype [{optype}]].\"" in text
    advice = ("import onnx.inliner; onnx.save(onnx.inliner.inline_local_functions("
              "onnx.load(input_path)), output_path)")
    assert text.endswith(advice) and "OriginOpType" not in text, text
    assert atc_parse_error(onnx.load(str(path))) == (
        "E19010", f"No parser is registered for Op [add_b, optype [{optype}]].")
    _apply(advice, path, tmp_path / "inlined.onnx")
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    out = backend.outputs(backend.convert(tmp_path / "inlined.onnx"), {"x": x})
    assert np.allclose(out["y"], x + 1)


def test_a_custom_domain_is_told_the_optype_a_plugin_would_register(tmp_path):
    from pytest_ascend_accuracy.graph.parser_refusals import domain_refusal

    node = h.make_node("TRTBatchedNMS", ["x"], ["y"], name="nms", domain="mmdeploy")
    model = h.make_model(h.make_graph([node], "g", [vi("x", TP.FLOAT, [1, 4])],
                                      [vi("y", TP.FLOAT, [1, 4])]),
                         opset_imports=[h.make_opsetid("", 13), h.make_opsetid("mmdeploy", 1)])
    text = domain_refusal("g", model)
    assert text.endswith("export the model with standard ONNX (ai.onnx) ops only, or give ATC "
                         "a parser for the op: a custom operator's ONNX plugin registering "
                         "OriginOpType(\"mmdeploy::1::TRTBatchedNMS\")"), text


def test_the_types_a_cann_plugin_registers_are_not_refused(tmp_path):
    """com.microsoft MultiHeadAttention at opsets 11 to 18 (the ops-transformer plugin's
    OriginOpType), torch_npu's npu::1:: exports: ATC parses them, so no E19010 is claimed."""
    from pytest_ascend_accuracy.graph.parser_refusals import domain_refusal

    for version in (11, 18):
        mha = onnx.load(str(gelu_model(tmp_path / "mha.onnx", domain_version=version,
                                       op="MultiHeadAttention")))
        assert domain_refusal("mha", mha) == "" and atc_parse_error(mha) is None
    mha1 = onnx.load(str(gelu_model(tmp_path / "mha.onnx", op="MultiHeadAttention")))
    assert atc_parse_error(mha1)[1].endswith("[com.microsoft::1::MultiHeadAttention]].")
    npu = h.make_model(h.make_graph(
        [h.make_node("NPURmsNorm", ["x", "g"], ["y", "r"], name="rms", domain="npu")], "n",
        [vi("x", TP.FLOAT, [1, 4]), vi("g", TP.FLOAT, [4])], [vi("y", TP.FLOAT, [1, 4])]),
        opset_imports=[h.make_opsetid("", 13), h.make_opsetid("npu", 1)])
    assert domain_refusal("n", npu) == "" and atc_parse_error(npu) is None


def test_quantisation_ops_are_still_only_warned_of(tmp_path):
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(  # (tests/emulator is no package)
        "atc_quant_tests", Path(__file__).with_name("test_atc_quant.py"))
    quant_tests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(quant_tests)
    path = quant_tests._branch_quant_model(tmp_path / "qb.onnx", "com.microsoft")
    with pytest.warns(AtcQuantWarning, match="'x_quant' \\(QuantizeLinear\\)"):
        EmulatorBackend(Cache(tmp_path / "cache")).convert(path)  # no ConversionError
    assert atc_parse_error(onnx.load(str(path))) == (
        "E19010", "No parser is registered for Op [x_quant, optype "
                  "[com.microsoft::1::QuantizeLinear]].")


def qoperator_model(path):
    """Conv -> Add -> Sigmoid quantised by onnxruntime's quantize_static in the QOperator
    format: QuantizeLinear, QLinearConv, com.microsoft's QLinearAdd and QLinearSigmoid,
    DequantizeLinear (a review's reproduction)."""
    quantization = pytest.importorskip("onnxruntime.quantization")
    rng = np.random.default_rng(0)
    w = onnx.numpy_helper.from_array(rng.standard_normal((4, 4, 3, 3)).astype(np.float32) * 0.1,
                                     "w")
    nodes = [h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             h.make_node("Add", ["c", "x"], ["a"], name="add"),
             h.make_node("Sigmoid", ["a"], ["y"], name="sig")]
    graph = h.make_graph(nodes, "g", [vi("x", TP.FLOAT, [1, 4, 8, 8])],
                         [vi("y", TP.FLOAT, [1, 4, 8, 8])], [w])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]),
              str(path.with_suffix(".f32.onnx")))

    class Reader(quantization.CalibrationDataReader):
        def __init__(self):
            self.data = iter([{"x": rng.standard_normal((1, 4, 8, 8)).astype(np.float32)}
                              for _ in range(4)])

        def get_next(self):
            return next(self.data, None)

    quantization.quantize_static(str(path.with_suffix(".f32.onnx")), str(path), Reader(),
                                 quant_format=quantization.QuantFormat.QOperator)
    return path


def test_an_onnxruntime_qoperator_model_is_warned_of_not_refused(tmp_path):
    """Its com.microsoft QLinearAdd/QLinearSigmoid are quantisation ops the quantiser wrote:
    refused as onnxruntime's optimisations' contrib ops before (a review)."""
    path = qoperator_model(tmp_path / "qop.onnx")
    model = onnx.load(str(path))
    assert [(n.domain, n.op_type) for n in model.graph.node] == [
        ("", "QuantizeLinear"), ("", "QLinearConv"), ("com.microsoft", "QLinearAdd"),
        ("com.microsoft", "QLinearSigmoid"), ("", "DequantizeLinear")]
    with pytest.warns(AtcQuantWarning) as caught:
        EmulatorBackend(Cache(tmp_path / "cache")).convert(path)  # before: ConversionError
    text = str(caught[0].message)
    assert ("'conv_quant' (QLinearConv); 'add_quant' (QLinearAdd); 'sig_quant' "
            "(QLinearSigmoid)") in text, text
    assert ("(it adapts QuantizeLinear-DequantizeLinear pairs, not QLinearConv, QLinearAdd, "
            "QLinearSigmoid: quantise the float model in the QDQ format") in text, text
    assert "optimisations" not in text
    assert atc_parse_error(model) == (  # the fake ATC: its first op
        "E19010", "No parser is registered for Op [x_QuantizeLinear, optype "
                  "[ai.onnx::13::QuantizeLinear]].")


def _before_binarizer(path, first):
    """``first`` (nodes reading x, writing p) -> Cast -> ai.onnx.ml Binarizer."""
    nodes = first + [h.make_node("Cast", ["p"], ["f"], name="cast", to=TP.FLOAT),
                     h.make_node("Binarizer", ["f"], ["y"], name="bin", domain="ai.onnx.ml")]
    s = onnx.numpy_helper.from_array(np.array(0.02, np.float32), "s")
    zp = onnx.numpy_helper.from_array(np.array(0, np.int8), "zp")
    graph = h.make_graph(nodes, "cut", [vi("x", TP.FLOAT, [2, 4])], [vi("y", TP.FLOAT, [2, None])],
                         [s, zp])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13),
                                                 h.make_opsetid("ai.onnx.ml", 1)]), str(path))
    return path


@pytest.mark.parametrize("first, stop", [
    ([h.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], name="x_quant"),
      h.make_node("DequantizeLinear", ["q", "s", "zp"], ["p"], name="x_dequant")],
     ("E19010", "No parser is registered for Op [x_quant, optype "
                "[ai.onnx::13::QuantizeLinear]].")),
    ([h.make_node("ArgMax", ["x"], ["p"], name="am", axis=1, select_last_index=1)],
     ("E11010", "Failed to parse the parameters of Op [am], optype [ai.onnx::13::ArgMax]. "
                "Only support select_last_index=0, but 1 is obtained now."))],
    ids=["quantisation op", "refused attribute"])
def test_no_cut_is_offered_where_atc_refuses_the_part_before_them(tmp_path, first, stop):
    """A review: the part the printed extract_model call cut out held a QuantizeLinear (the
    fake ATC stops at it, E19010) or an ArgMax with select_last_index=1 (E11010)."""
    path = _before_binarizer(tmp_path / "m.onnx", first)
    text = _refusal(path, tmp_path)
    assert "'bin' (ai.onnx.ml::1::Binarizer)" in text and "extract_model" not in text, text
    from onnx import utils

    utils.extract_model(str(path), str(tmp_path / "part.onnx"), ["x"], ["f"])  # the cut it was
    assert atc_parse_error(onnx.load(str(tmp_path / "part.onnx"))) == stop


def test_a_plain_model_converts_without_a_word(tmp_path):
    from pytest_ascend_accuracy.testing import models

    onnx.save(models.passing_mlp(), str(tmp_path / "m.onnx"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        EmulatorBackend(Cache(tmp_path / "cache")).convert(tmp_path / "m.onnx")
    assert atc_parse_error(models.passing_mlp()) is None


def test_a_conversion_cached_before_the_refusal_is_not_served(tmp_path, monkeypatch):
    """A cache filled by the previous format held a converted entry of such a model: the
    format is bumped, so it is not looked up."""
    from pytest_ascend_accuracy.backends.emulator import backend as emulator_backend

    path = binarizer_model(tmp_path / "ml.onnx")
    monkeypatch.setattr(emulator_backend, "EMULATOR_FORMAT", 22)  # the release before
    from pytest_ascend_accuracy.backends.emulator import rewrite
    from pytest_ascend_accuracy.graph import parser_refusals as refusals

    before = lambda label, model: (  # noqa: E731  (the Loop and attribute refusals alone)
        refusals.loop_refusal(label, model) or refusals.attribute_refusal(label, model))
    monkeypatch.setattr(emulator_backend, "parser_refusal", before)
    monkeypatch.setattr(rewrite, "parser_refusal", before)
    EmulatorBackend(Cache(tmp_path / "cache")).convert(path)  # the previous release's entry
    monkeypatch.undo()
    with pytest.raises(ConversionError, match="ai.onnx.ml::1::Binarizer"):
        EmulatorBackend(Cache(tmp_path / "cache")).convert(path)


def test_a_test_of_such_a_model_fails_with_the_refusal(pytester):
    """Through the plugin: it passed (float16 puts 1.2 past the split at 1.2, so sample 0
    scores 100 where onnxruntime gives 1; the other 20 samples' 100s carry the cosine, 0.976,
    as the node test's 1000s carried its 0.9975)."""
    tree_model(pytester.path / "tree.onnx")
    pytester.makepyfile(test_tree="""
        import numpy as np
        from pytest_ascend_accuracy import accuracy

        @accuracy(threshold=0.95)
        def test_tree(ascend_model, golden_dump, check_accuracy):
            inputs = {"x": np.array([[1.2]] + [[3.0]] * 20, np.float32)}
            check_accuracy(ascend_model("tree.onnx").run(inputs, dump=True),
                           golden_dump("tree.onnx", inputs))
    """)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    line = next(ln for ln in run.stdout.lines if ln.startswith("ascend-accuracy ConversionError"))
    assert line.startswith("ascend-accuracy ConversionError: model 'tree' has 1 operator of "
                           "domain ai.onnx.ml, not ONNX's own (ai.onnx): "
                           "'TreeEnsembleRegressor_0' (ai.onnx.ml::3::TreeEnsembleRegressor)")
