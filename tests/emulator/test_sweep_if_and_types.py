"""Models of the ONNX conformance sweep that a correct float16 device failed, crashed on or
refused unclearly: an ``If`` decided by input values, a constant only a branch reads, an IR-3
model, sequences, strings, bfloat16 inputs. Each is run as the plugin runs it: the emulator's
conversion and run against the golden, judged by ``assert_accuracy``."""
import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper as h, numpy_helper as nh  # noqa: E402

from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend  # noqa: E402
from pytest_ascend_accuracy.backends.emulator.faults import Fault  # noqa: E402
from pytest_ascend_accuracy.compare.engine import compare_dumps  # noqa: E402
from pytest_ascend_accuracy.errors import BackendError, ConfigError, ConversionError  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy  # noqa: E402

X = {"x": np.array([1, 2, 3], np.float32)}


def _vi(name, elem=TensorProto.FLOAT, shape=(3,)):
    return h.make_tensor_value_info(name, elem, list(shape) if shape is not None else None)


def _model(nodes, inputs, outputs, inits=(), opset=17, **kw):
    g = h.make_graph(nodes, kw.pop("name", "g"), inputs, outputs, initializer=list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], **kw)


def if_on_input_value():
    """Relu, an If on ReduceSum(x) > 0 (known from the input values only), then Mul."""
    then_g = h.make_graph([h.make_node("Add", ["r", "c"], ["t"])], "then", [], [_vi("t")])
    else_g = h.make_graph([h.make_node("Sub", ["r", "c"], ["e"])], "else", [], [_vi("e")])
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"),
             h.make_node("ReduceSum", ["x"], ["s"], keepdims=0, name="sum"),
             h.make_node("Greater", ["s", "zero"], ["cond"], name="gt"),
             h.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g,
                         name="branch"),
             h.make_node("Mul", ["y", "y"], ["z"], name="square")]
    return _model(nodes, [_vi("x")], [_vi("z")],
                  [nh.from_array(np.array(0, np.float32), "zero"),
                   nh.from_array(np.array([1, 2, 3], np.float32), "c")], name="if_on_input")


def check(model, inputs, cache, faults=(), mode=None, **kw):
    """The accuracy check of ``model``: converted, run and judged against its golden."""
    backend = EmulatorBackend(cache, faults=faults)
    actual = backend.run(backend.convert(model, mode, **kw), inputs)
    golden = golden_dump(model, inputs, cache=cache)
    return actual, golden, assert_accuracy(actual, golden, threshold=0.95)


def test_an_if_decided_by_input_values_is_judged_under_its_own_name(cache):
    actual, golden, result = check(if_on_input_value(), X, cache)
    rows = {r.op_name: r for r in result.rows}
    # the device's If operator is compared with the golden's If, over its inlined branch
    assert rows["branch"].golden_name == "branch" and rows["branch"].metrics.cosine > 0.999
    np.testing.assert_allclose(golden["branch"].output(0).load(), [2, 4, 6])
    assert "branch_then_Add_0" in golden.names  # the branch's own tensor, a golden op too
    assert golden.meta["graph"]["kept_ifs"] == ["branch"]
    coverage = compare_dumps(actual, golden).coverage
    # the branch's op is inside the If the device runs as one operator, not "unmatched"
    assert coverage.unmatched_actual == () and coverage.unmatched_golden == ()
    assert coverage.in_ifs == ("branch_then_Add_0",)


def test_an_if_on_a_graph_input_is_compared_not_left_unmatched(cache):
    then_g = h.make_graph([h.make_node("Constant", [], ["a"], value=nh.from_array(
        np.array([1, 2, 3, 4, 5], np.float32)))], "then", [], [_vi("a", shape=(5,))])
    else_g = h.make_graph([h.make_node("Constant", [], ["b"], value=nh.from_array(
        np.array([5, 4, 3, 2, 1], np.float32)))], "else", [], [_vi("b", shape=(5,))])
    model = _model([h.make_node("If", ["cond"], ["res"], then_branch=then_g, else_branch=else_g)],
                   [_vi("cond", TensorProto.BOOL, ())], [_vi("res", shape=(5,))], opset=11)
    result = check(model, {"cond": np.array(True)}, cache)[2]
    assert [r.op_name for r in result.rows] == ["If_0"]


@pytest.mark.parametrize("target", ["branch", "branch/then/Add_0"])
def test_a_fault_in_the_taken_branch_fails_the_check_at_the_if(cache, target):
    with pytest.raises(AccuracyFailure, match="first failure in graph order: branch"):
        check(if_on_input_value(), X, cache, faults=[Fault.on_op(target, amount=2.0)])


def test_a_fault_in_the_branch_not_taken_changes_nothing(cache):
    backend = EmulatorBackend(cache, faults=[Fault.on_op("branch/else/Sub_0", amount=2.0)])
    converted = backend.convert(if_on_input_value())
    assert converted.info["emulator"]["faults_active"] == {
        "op fault on 'branch/else/Sub_0': noise (2)": ["branch"]}
    actual = backend.run(converted, X)
    assert_accuracy(actual, golden_dump(if_on_input_value(), X, cache=cache), threshold=0.95)
    with pytest.raises(AccuracyFailure):  # and taken, it shows
        check(if_on_input_value(), {"x": -X["x"]}, cache,
              faults=[Fault.on_op("branch/else/Sub_0", amount=2.0)])


def test_a_folded_constant_only_a_branch_reads_is_kept(cache):
    then_g = h.make_graph([h.make_node("Add", ["x", "c"], ["t"])], "then", [], [_vi("t")])
    else_g = h.make_graph([h.make_node("Sub", ["x", "c"], ["e"])], "else", [], [_vi("e")])
    c = nh.from_array(np.array([1, 2, 3], np.float32))
    nodes = [h.make_node("Constant", [], ["c"], value=c),
             h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             h.make_node("Greater", ["s", "zero"], ["cond"]),
             h.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)]
    model = _model(nodes, [_vi("x")], [_vi("y")], [nh.from_array(np.array(0, np.float32), "zero")],
                   name="outer_const")
    actual = check(model, X, cache)[0]
    assert "Constant_0" in actual.meta["folded_ops"]


def test_an_ir3_model_whose_folded_weight_is_also_a_graph_input(cache):
    w = nh.from_array(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, "w")
    nodes = [h.make_node("Transpose", ["w"], ["wt"], name="wt"),
             h.make_node("MatMul", ["x", "wt"], ["y"], name="fc")]
    model = _model(nodes, [_vi("x", shape=(2, 3)), _vi("w", shape=(4, 3))],
                   [_vi("y", shape=(2, 4))], [w], opset=9, ir_version=3, name="ir3")
    inputs = make_inputs(model)
    assert list(inputs) == ["x"]  # what accuracy_inputs gives
    actual = check(model, inputs, cache)[0]
    assert actual.meta["folded_ops"] == ["wt"]


def _sequence_model():
    nodes = [h.make_node("SequenceConstruct", ["x", "x"], ["seq"], name="pack"),
             h.make_node("SequenceAt", ["seq", "one"], ["y"], name="pick")]
    return _model(nodes, [_vi("x")], [_vi("y")], [nh.from_array(np.array(1, np.int64), "one")],
                  name="seq_model")


def test_a_sequence_model_is_refused_at_conversion_naming_its_ops(cache):
    with pytest.raises(ConversionError) as info:
        EmulatorBackend(cache).convert(_sequence_model())
    text = str(info.value)
    assert text.startswith("model 'seq_model' has sequence values: 2 operators read or write "
                           "them: 'pack' (SequenceConstruct: seq); 'pick' (SequenceAt: seq). "
                           "ATC has no sequence tensors")


def _string_concat():
    return _model([h.make_node("StringConcat", ["a", "b"], ["y"], name="concat")],
                  [_vi("a", TensorProto.STRING, (2,)), _vi("b", TensorProto.STRING, (2,))],
                  [_vi("y", TensorProto.STRING, (2,))], opset=20, name="str_model")


def test_string_tensors_are_refused_on_both_sides_without_a_traceback_or_a_temp_path(cache):
    model = _string_concat()
    inputs = {"a": np.array(["ab", "c"], object), "b": np.array(["x", "yz"], object)}
    expected = ("model 'str_model' has string tensors: 1 operator reads or writes them: "
                "'concat' (StringConcat: a, b, y). ATC converts no string operator")
    with pytest.raises(ConversionError) as info:
        EmulatorBackend(cache).convert(model)
    assert str(info.value).startswith(expected)
    with pytest.raises(BackendError) as info:  # a golden made first says the same
        golden_dump(model, inputs, cache=cache)
    assert str(info.value).startswith(expected) and ".tmp" not in str(info.value)


def test_a_string_value_the_checks_miss_is_named_by_its_node_on_both_sides(cache, monkeypatch):
    """A string value the up-front check cannot see (an op shape inference cannot type): the
    writers name the model and the node, not the cache's temporary file (which leaked) nor
    with a traceback (UnsupportedDtype, not one of our errors)."""
    from pytest_ascend_accuracy.backends.emulator import rewrite
    from pytest_ascend_accuracy.golden import onnxruntime_golden

    monkeypatch.setattr(rewrite, "refusal_text", lambda *a, **k: "")
    monkeypatch.setattr(onnxruntime_golden, "refusal_text", lambda *a, **k: "")
    model = _string_concat()
    inputs = {"a": np.array(["ab", "c"], object), "b": np.array(["x", "yz"], object)}
    with pytest.raises(BackendError) as info:
        golden_dump(model, inputs, cache=cache)
    assert str(info.value) == ("golden of 'str_model': node 'concat' (StringConcat): object "
                               "arrays cannot be dumped")
    backend = EmulatorBackend(cache)
    with pytest.raises(BackendError) as info:
        backend.run(backend.convert(model), inputs)
    assert str(info.value).startswith("emulator run of 'str_model': op 'concat' (StringConcat): "
                                      "numpy dtype 'object' cannot be stored in an Ascend dump")


def test_a_bfloat16_input_is_refused_naming_model_and_input_and_the_advice_works(cache):
    import ml_dtypes

    bf16 = _model([h.make_node("Celu", ["x"], ["y"], name="celu")],
                  [_vi("x", TensorProto.BFLOAT16)], [_vi("y", TensorProto.BFLOAT16)], opset=22,
                  name="bf16_model")
    x = {"x": np.array([-1, 0, 2], ml_dtypes.bfloat16)}
    backend = EmulatorBackend(cache)
    for make in (lambda: backend.run(backend.convert(bf16), x),
                 lambda: golden_dump(bf16, x, cache=cache)):
        with pytest.raises(ConfigError) as info:
            make()
        text = str(info.value)
        assert text.startswith("inputs of 'bf16_model': model input 'x' is bfloat16: "
                               "onnxruntime, which runs the golden model and the emulator, takes "
                               "no bfloat16 array as an input")
    # the advice, applied: the model in float32, converted with the mode the message names
    assert "export the model in float32 and pass float32 arrays" in text
    spelled = text.split("modes=[")[1].split("] (from")[0]
    from pytest_ascend_accuracy import Mode  # noqa: F401  (as the message says)

    mode = eval(spelled, {"Mode": Mode})
    f32 = _model([h.make_node("Celu", ["x"], ["y"], name="celu")], [_vi("x")], [_vi("y")],
                 opset=22, name="f32_model")
    check(f32, {"x": x["x"].astype(np.float32)}, cache, mode=mode)
