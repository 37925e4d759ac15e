"""Names a user takes from the ONNX file rather than the op list (H103 on PP-OCRv4 rec):
an output tensor's name (``softmax_11.tmp_0``) was offered the string-closest op,
``p2o.Softmax.0``, though ``p2o.Softmax.2`` makes it, so pasting it judged or kept another op;
and ``OpType::MatMul`` in ``ignore``/``per_op`` (a keep_dtype form) read as a misspelt op name.
Each is refused naming what to write instead, and what it names passes pasted."""
import onnx
import pytest
from onnx import TensorProto, helper

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph.op_catalogue import check_entry_names, model_ops


@pytest.fixture
def model(tmp_path):
    f = TensorProto.FLOAT
    nodes = [helper.make_node("MatMul", ["x", "w0"], ["matmul_0.tmp_0"], name="p2o.MatMul.0"),
             helper.make_node("Softmax", ["matmul_0.tmp_0"], ["softmax_0.tmp_0"],
                              name="p2o.Softmax.0"),
             helper.make_node("MatMul", ["softmax_0.tmp_0", "w1"], ["matmul_1.tmp_0"],
                              name="p2o.MatMul.1"),
             helper.make_node("Softmax", ["matmul_1.tmp_0"], ["softmax_11.tmp_0"],
                              name="p2o.Softmax.2")]
    graph = helper.make_graph(nodes, "rec", [helper.make_tensor_value_info("x", f, [1, 4])],
                              [helper.make_tensor_value_info("softmax_11.tmp_0", f, [1, 4])],
                              [helper.make_tensor("w0", f, [4, 4], [0.5] * 16),
                               helper.make_tensor("w1", f, [4, 4], [0.25] * 16)])
    path = tmp_path / "rec.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return model_ops(str(path))


@pytest.mark.parametrize("what", ["per_op", "ignore", "keep_dtype"])
def test_a_tensor_name_is_refused_naming_the_op_that_makes_it(model, what):
    def check(entry):
        if what == "keep_dtype":
            model.check_keep_dtype([entry], "t")
        else:
            check_entry_names(model, {entry: 0.5} if what == "per_op" else {},
                              [entry] if what == "ignore" else [], "t")

    with pytest.raises(ConfigError) as info:
        check("softmax_11.tmp_0")
    assert (f"{what} entry 'softmax_11.tmp_0' is a tensor of model 'rec', output 0 of op "
            f"'p2o.Softmax.2': name the op, 'p2o.Softmax.2'") in str(info.value)
    check("p2o.Softmax.2")  # as the error says


@pytest.mark.parametrize("what", ["per_op", "ignore"])
def test_an_optype_entry_outside_keep_dtype_is_refused_with_the_glob_of_its_ops(model, what):
    def check(entry):
        check_entry_names(model, {entry: 0.5} if what == "per_op" else {},
                          [entry] if what == "ignore" else [], "t")

    with pytest.raises(ConfigError) as info:
        check("OpType::MatMul")
    assert (f"{what} entry 'OpType::MatMul': OpType:: entries are keep_dtype's (ATC's "
            f"--keep_dtype file); per_op and ignore take op names or globs of them: the 2 MatMul "
            f"ops are 'p2o.MatMul.*'") in str(info.value)
    check("p2o.MatMul.*")  # as the error says
    with pytest.raises(ConfigError, match="has no op of type 'Conv'"):
        check("OpType::Conv")


def test_an_optype_entry_checked_against_dumps_makes_no_claim_about_types():
    """The compared dumps' catalogue holds names only: it said "model 'passing_mlp' has no op
    of type 'Relu'" of a model with two Relus (H106, through check_accuracy's per_op)."""
    from pytest_ascend_accuracy.graph.op_catalogue import check_setting_names

    with pytest.raises(ConfigError) as info:
        check_setting_names({"OpType::Relu": 0.9}, [], ["fc1", "relu1", "relu2"],
                            "passing_mlp", "t")
    text = str(info.value)
    assert ("per_op entry 'OpType::Relu': OpType:: entries are keep_dtype's (ATC's --keep_dtype "
            "file); per_op and ignore take op names or globs of them; its ops: 'fc1', 'relu1', "
            "'relu2'") in text
    assert "no op of type" not in text
