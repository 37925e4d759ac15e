"""keep_dtype ``OpType::`` entries for recurrent ops, as ATC's ONNX parser types them. A trial
(a CRNN with an LSTM): ``keep_dtype(["OpType::CommonLSTM"])``, the type CANN's ONNX parser gives
an LSTM (``lstm_plugin.cc``: ``REGISTER_CUSTOM_OP("CommonLSTM")`` for ``ai.onnx::8..18::LSTM``;
``gru_plugin.cc``: ``CommonGRU``), was refused ("no op of type 'CommonLSTM' ... closest:
'OpType::LSTM'"), and ``OpType::LSTM`` went to ATC's keep_dtype file as is, where it matches
nothing. Now the ONNX spelling is written as the parser's, as ``OpType::BatchNormalization``
is, and the finished graph's ``DynamicRNN`` / ``DynamicGRUV2`` (the fusion passes' types, which
the emulator's dumps carry) are refused naming the parser's type, pasteable."""
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy import keep_dtype
from pytest_ascend_accuracy.core.ascend_optypes import (ascend_type, finished_types,
                                                        parser_type, to_ascend_entry)
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph.op_catalogue import check_mode

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def rnn_model(kind="LSTM", *, steps=6, batch=2, size=8, hidden=16, layout=0,
              direction="forward", lens_dtype=TensorProto.INT32, declared_steps=None):
    """One ``kind`` op (``rnn/<kind>``) reading graph inputs ``x`` and ``seq_lens`` (input 4),
    weights as initializers; ``x`` is [steps, batch, size], [batch, steps, size] under
    ``layout=1``; ``declared_steps``: the name of a dynamic steps dimension instead."""
    dirs = 2 if direction == "bidirectional" else 1
    gates = GATES[kind]
    rng = np.random.default_rng(1)
    weights = [numpy_helper.from_array(
        (rng.standard_normal(shape) * scale).astype(np.float32), name) for name, shape, scale in (
            ("W", (dirs, gates * hidden, size), 0.3), ("R", (dirs, gates * hidden, hidden), 0.3),
            ("B", (dirs, 2 * gates * hidden), 0.1))]
    t = declared_steps or steps
    x_shape = [t, batch, size] if layout == 0 else [batch, t, size]
    attrs = {"hidden_size": hidden, "direction": direction}
    if layout:
        attrs["layout"] = layout
    node = helper.make_node(kind, ["x", "W", "R", "B", "seq_lens"], ["y", "y_h"],
                            name=f"rnn/{kind.lower()}", **attrs)
    graph = helper.make_graph(
        [node], "rnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape),
                        helper.make_tensor_value_info("seq_lens", lens_dtype, [batch])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("y_h", TensorProto.FLOAT, None)], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    return model


@pytest.fixture
def lstm_path(tmp_path):
    path = tmp_path / "lstm.onnx"
    onnx.save(rnn_model("LSTM"), path)
    return path


@pytest.fixture
def gru_path(tmp_path):
    path = tmp_path / "gru.onnx"
    onnx.save(rnn_model("GRU"), path)
    return path


def test_the_parser_and_finished_types_of_lstm_and_gru():
    assert [parser_type(t) for t in ("LSTM", "GRU")] == ["CommonLSTM", "CommonGRU"]
    assert [ascend_type(t) for t in ("LSTM", "GRU")] == ["DynamicRNN", "DynamicGRUV2"]
    assert finished_types("LSTM") == ("DynamicRNN",)
    # no ONNX plugin registers the plain RNN: it keeps its name
    assert (parser_type("RNN"), ascend_type("RNN")) == ("RNN", "RNN")


@pytest.mark.parametrize("entry", ["OpType::CommonLSTM", "OpType::LSTM"])
def test_the_parsers_type_and_the_onnx_spelling_both_keep_the_lstm(lstm_path, entry):
    mode = keep_dtype([entry])
    check_mode(mode, lstm_path, "test")  # before: 'OpType::CommonLSTM' refused
    assert mode.keep_dtype == ("OpType::CommonLSTM",)  # what ATC's keep_dtype file holds
    assert mode.keeps_fp32("rnn/lstm", "LSTM")


@pytest.mark.parametrize("entry", ["OpType::CommonGRU", "OpType::GRU"])
def test_the_same_for_a_gru(gru_path, entry):
    mode = keep_dtype([entry])
    check_mode(mode, gru_path, "test")
    assert mode.keep_dtype == ("OpType::CommonGRU",)
    assert to_ascend_entry(entry) == "OpType::CommonGRU"


@pytest.mark.parametrize("entry, onnx_type, fixture", [
    ("OpType::DynamicRNN", "LSTM", "lstm_path"), ("OpType::DynamicGRUV2", "GRU", "gru_path")])
def test_the_finished_type_is_refused_with_a_pasteable_parser_type(entry, onnx_type, fixture,
                                                                   request):
    path = request.getfixturevalue(fixture)
    with pytest.raises(ConfigError) as info:
        check_mode(keep_dtype([entry]), path, "test")
    text = str(info.value)
    assert f"a finished graph's name for ONNX {onnx_type}" in text
    closest = re.search(r"closest: '([^']+)'", text).group(1)
    assert closest == "OpType::" + parser_type(onnx_type)
    check_mode(keep_dtype([closest]), path, "test")  # pasted, it is taken


def test_a_misspelt_parser_type_is_refused_with_the_one_atc_matches(lstm_path):
    with pytest.raises(ConfigError) as info:
        check_mode(keep_dtype(["OpType::CommonLstm"]), lstm_path, "test")
    closest = re.search(r"closest: '([^']+)'", str(info.value)).group(1)
    assert closest == "OpType::CommonLSTM"
    check_mode(keep_dtype([closest]), lstm_path, "test")


def test_a_plain_rnn_keeps_its_onnx_type(tmp_path):
    path = tmp_path / "rnn.onnx"
    onnx.save(rnn_model("RNN"), path)
    mode = keep_dtype(["OpType::RNN"])
    check_mode(mode, path, "test")
    assert mode.keep_dtype == ("OpType::RNN",)


def test_the_emulator_dumps_an_lstm_as_dynamicrnn_and_keeps_it_by_the_parsers_type(tmp_path,
                                                                                   lstm_path):
    """The dump file names and om json carry the finished type (``DynamicRNN``);
    ``OpType::LSTM`` still keeps the op in float32 there (its entry is ``CommonLSTM``)."""
    pytest.importorskip("onnxruntime")
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    rng = np.random.default_rng(0)  # the inputs given (the seeded ones: test_sequence_lens_seed)
    inputs = {"x": rng.standard_normal((6, 2, 8)).astype(np.float32),
              "seq_lens": np.array([6, 4], np.int32)}
    dumps = {}
    for label, mode in (("default", None), ("kept", keep_dtype(["OpType::LSTM"]))):
        converted = backend.convert(lstm_path, mode)
        dumps[label] = backend.run(converted, inputs, dump=True, dump_dir=tmp_path / label)
        assert '"type":"DynamicRNN"' in converted.om_json.read_text()
    for dump in dumps.values():
        assert [(op.name, op.op_type) for op in dump.ops] == [("rnn/lstm", "DynamicRNN")]
        assert dump.ops[0].source.split("/")[-1].startswith("DynamicRNN.rnn_lstm.")
    dtypes = {label: d.ops[0].outputs[0].dtype for label, d in dumps.items()}
    assert dtypes == {"default": "float16", "kept": "float32"}
