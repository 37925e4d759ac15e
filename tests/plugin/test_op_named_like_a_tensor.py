"""An entry naming an op that is also the name of a tensor another op makes (keras2onnx's
Dense: MatMul node ``dense_6``, output tensor ``dense_6`` made by the bias node ``Add1``; MTCNN's
onet). An audit's ``per_op={"dense_6": {"max_abs": 4e-4}}`` failed in the default mode (the
fused MatMul+Add, the output) and passed under the printed ``modes=[FUSION_OFF]``, where it
judged the MatMul before its bias while the output, worse, went by the default cosine: a false
pass. Such an entry is refused naming the op that makes the tensor; that op pasted judges the
output in both modes."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph.op_catalogue import check_entry_names, model_ops

TEST = """
import numpy as np
from pytest_ascend_accuracy import FUSION_OFF, accuracy

@accuracy(threshold=0.99, modes=["default", FUSION_OFF], {setting})
def test_dense(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("dense.onnx", seed=0)
    check_accuracy(ascend_model("dense.onnx").run(inputs), golden_dump("dense.onnx", inputs))
"""


def _dense(path):
    """``x [4, 16] -> MatMul 'dense_6' -> dense_60 -> Add 'Add1' (+100) -> dense_6``: the output
    (about 100) loses more to float16 than the MatMul's values (about 4)."""
    rng = np.random.default_rng(3)
    nodes = [h.make_node("MatMul", ["x", "dense_6/kernel:0"], ["dense_60"], name="dense_6"),
             h.make_node("Add", ["dense_60", "dense_6/bias:0"], ["dense_6"], name="Add1")]
    graph = h.make_graph(
        nodes, "onet", [h.make_tensor_value_info("x", TP.FLOAT, [4, 16])],
        [h.make_tensor_value_info("dense_6", TP.FLOAT, [4, 10])],
        [nh.from_array(rng.random((16, 10), dtype=np.float32), "dense_6/kernel:0"),
         nh.from_array(np.full(10, 100.0, np.float32), "dense_6/bias:0")])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), str(path))
    return path


def test_the_entry_is_refused_naming_the_op_making_the_tensor(tmp_path):
    ops = model_ops(str(_dense(tmp_path / "dense.onnx")))
    for what, per_op, ignore in (("per_op", {"dense_6": 0.5}, []), ("ignore", {}, ["dense_6"])):
        with pytest.raises(ConfigError) as info:
            check_entry_names(ops, per_op, ignore, "t")
        assert (f"{what} entry 'dense_6' names op 'dense_6' (MatMul) and is also the name of "
                "tensor 'dense_6', output 0 of op 'Add1': an entry names ops, so it would judge "
                "op 'dense_6', not that tensor, wherever a mode keeps the two apart "
                "(fusion_off); for the tensor name the op that makes it, 'Add1'") in str(info.value)
    check_entry_names(ops, {"Add1": 0.5}, ["dense_*"], "t")  # as it says; a glob alike


def test_the_op_it_names_judges_the_output_in_every_mode(pytester):
    _dense(pytester.path / "dense.onnx")
    pytester.makepyfile(test_dense=TEST.format(setting="per_op={'dense_6': {'max_abs': 0.01}}"))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*per_op entry 'dense_6' names op 'dense_6'* and is also the "
                                 "name of tensor 'dense_6', output 0 of op 'Add1'*"])
    assert "passed" not in result.stdout.str().splitlines()[-1]
    # as the error says: the op making the tensor judges the output, fused (the fused op takes
    # its first member's name) or not: max_abs 0.01 fails in both modes
    pytester.makepyfile(test_dense=TEST.format(setting="per_op={'Add1': {'max_abs': 0.01}}"))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*[[]default[]]*first failing op dense_6 (max_abs *> 0.01)*",
                                 "*[[]fusion_off[]]*first failing op Add1 (max_abs *> 0.01)*"],
                                consecutive=False)


def test_the_outputs_line_names_the_output_the_op_makes(pytester):
    """The failure's "model outputs:" line named the output by its op, ``Add1``, where the user
    knows it as ``dense_6`` (the wheel's own code fetches it so): it gives both."""
    _dense(pytester.path / "dense.onnx")
    only_unfused = TEST.replace('modes=["default", FUSION_OFF]', "modes=[FUSION_OFF]")
    pytester.makepyfile(test_dense=only_unfused
                        .format(setting="per_op={'dense_[6]': {'max_abs': 1e-9}}"))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["model outputs: Add1 (output dense_6: cosine 1.000000; rel_l2 * "
                                 "passes its threshold; the check fails at ops before it"])
