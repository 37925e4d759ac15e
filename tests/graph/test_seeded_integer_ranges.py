"""Seeded integer inputs a transformer can take. User trial (a BERT-like encoder, ids, mask
and token types as int64 inputs): ``accuracy_inputs(model, seed=0, input_shape=...)`` drew
every integer from [0, 10), so ``token_type_ids`` indexed a 2-row table and onnxruntime refused
the run ("indices element out of data bounds, idx=9 must be within the inclusive range
[-2,1]"); and ``attention_mask`` held values up to 9, which the export's ``(1 - mask) * -10000``
makes 80000, past float16's 65504: the check failed a model that passes on every 0/1 mask, in
every mode, with a 60-op keep_dtype hint. Integer inputs now stay below the table they index,
and a mask (its name holds ``mask``) takes 0 and 1."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.graph.integer_ranges import integer_highs
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


def _encoder(types=2, vocab=30, cast_first=False):
    """ids/types index tables; the mask becomes (1 - mask) * -10000, as BERT exports write it."""
    tables = [numpy_helper.from_array(np.ones((vocab, 4), np.float32), "words"),
              numpy_helper.from_array(np.ones((types, 4), np.float32), "types"),
              numpy_helper.from_array(np.array(1.0, np.float32), "one"),
              numpy_helper.from_array(np.array(-10000.0, np.float32), "neg")]
    nodes = [helper.make_node("Gather", ["words", "input_ids"], ["w"], name="word_emb")]
    if cast_first:  # some exports cast the ids first
        nodes.append(helper.make_node("Cast", ["token_type_ids"], ["t32"], name="cast",
                                      to=TensorProto.INT32))
        nodes.append(helper.make_node("Gather", ["types", "t32"], ["t"], name="type_emb"))
    else:
        nodes.append(helper.make_node("Gather", ["types", "token_type_ids"], ["t"],
                                      name="type_emb"))
    nodes += [helper.make_node("Add", ["w", "t"], ["e"], name="emb"),
              helper.make_node("Cast", ["attention_mask"], ["mf"], name="mcast",
                               to=TensorProto.FLOAT),
              helper.make_node("Sub", ["one", "mf"], ["inv"], name="msub"),
              helper.make_node("Mul", ["inv", "neg"], ["ext"], name="mmul")]
    ins = [helper.make_tensor_value_info(n, TensorProto.INT64, [2, 8])
           for n in ("input_ids", "attention_mask", "token_type_ids")]
    outs = [helper.make_tensor_value_info("e", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("ext", TensorProto.FLOAT, None)]
    model = helper.make_model(helper.make_graph(nodes, "enc", ins, outs, initializer=tables),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_an_index_into_a_two_row_table_stays_below_two_and_the_model_runs():
    import onnxruntime as ort

    model = _encoder()
    inputs = make_inputs(model, seed=0)
    assert set(np.unique(inputs["token_type_ids"])) <= {0, 1}
    assert inputs["input_ids"].max() < 10  # a table of 30 keeps the usual [0, 10)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    session.run(None, inputs)  # before: indices element out of data bounds, idx=9


def test_a_mask_takes_0_and_1_and_its_extended_form_stays_within_float16():
    inputs = make_inputs(_encoder(), seed=0)
    mask = inputs["attention_mask"]
    assert set(np.unique(mask)) == {0, 1}
    assert np.abs((1.0 - mask) * -10000.0).max() <= 65504  # before: up to 80000


def test_bounds_follow_a_cast_and_take_the_smallest_table():
    model = _encoder(types=3, cast_first=True)
    assert integer_highs(model, ["input_ids", "attention_mask", "token_type_ids"]) == {
        "input_ids": 30, "attention_mask": 2, "token_type_ids": 3}
    model.graph.node.append(helper.make_node("Gather", ["types", "input_ids"], ["x"], name="g2"))
    assert integer_highs(model, ["input_ids"]) == {"input_ids": 3}


def test_a_mask_named_input_indexing_a_one_row_table_stays_below_it():
    """Its name says mask, its use says index: the smaller bound wins (a review: it drew 1,
    'indices element out of data bounds, idx=1 must be within the inclusive range [-1,0]')."""
    model = _encoder(types=1)
    for node in model.graph.node:  # token_type_ids named like a mask
        node.input[:] = ["mask_type_ids" if i == "token_type_ids" else i for i in node.input]
    model.graph.input[2].name = "mask_type_ids"
    assert integer_highs(model, ["mask_type_ids"]) == {"mask_type_ids": 1}
    assert not make_inputs(model, seed=0)["mask_type_ids"].any()


def test_an_input_indexing_no_table_keeps_the_usual_range():
    model = _encoder()
    assert integer_highs(model, ["nothing"]) == {}
    x = make_inputs(model, seed=3)["input_ids"]
    assert x.min() >= 0 and x.max() <= 9 and len(np.unique(x)) > 2


def test_a_file_model_too(tmp_path):
    path = tmp_path / "enc.onnx"
    onnx.save(_encoder(), str(path))
    assert make_inputs(str(path), seed=0)["token_type_ids"].max() <= 1
