"""A Conv inside an If kept as one operator whose weights a ``Constant`` node of the branch holds
(silero_vad.onnx, audit B finding 2): keep_dtype ``OpType::Conv2D`` changed nothing, bit for bit,
because the branch rounder rounded the Constant's output as an fp16 op's, while the same network
with its weights as outer initializers (silero_vad_op18_ifless) changed as expected. ATC's ONNX
parser makes every initializer a Const node itself, so a device cannot tell the two apart: a
branch's constant follows its consumer's precision, as a main-graph weight does."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from pytest_ascend_accuracy.core.modes import Mode

RNG = np.random.default_rng(3)
W = (RNG.standard_normal((4, 1, 3)) * 0.37).astype(np.float32)  # not float16 values
X = (RNG.standard_normal((1, 1, 16)) * 3.1).astype(np.float32)


def _vi(name, shape, elem=TP.FLOAT):
    return h.make_tensor_value_info(name, elem, shape)


def conv_if_model(path, weights_in: str):
    """x -> If(sum(x) != 0 ... any input-dependent condition): then Conv(x, W) [+ Mul by a
    ConstantOfShape of a constant shape], else a Conv with zero weights. ``weights_in``:
    "constant" (a Constant node of the branch, as silero_vad.onnx) or "initializer" (the outer
    graph's, as silero_vad_op18_ifless)."""
    branch_nodes = []
    if weights_in == "constant":
        branch_nodes.append(h.make_node("Constant", [], ["w"], name="then/w",
                                        value=nh.from_array(W, "w")))
    branch_nodes += [
        h.make_node("Conv", ["x", "w"], ["c"], name="then/Conv", pads=[1, 1]),
        h.make_node("Constant", [], ["shp"], name="then/shp",
                    value=nh.from_array(np.array([1, 4, 16], np.int64), "shp")),
        h.make_node("ConstantOfShape", ["shp"], ["k"], name="then/fill",
                    value=nh.from_array(np.array([1.0 / 3], np.float32), "v")),
        h.make_node("Mul", ["c", "k"], ["t_out"], name="then/Mul")]
    then = h.make_graph(branch_nodes, "then", [], [_vi("t_out", [1, 4, 16])])
    other = h.make_graph([h.make_node("Conv", ["x", "w0"], ["e_out"], name="else/Conv",
                                      pads=[1, 1])], "else", [], [_vi("e_out", [1, 4, 16])])
    inits = [nh.from_array(np.zeros_like(W), "w0"), nh.from_array(np.array(-1e9, np.float32), "lo")]
    if weights_in == "initializer":
        inits.append(nh.from_array(W, "w"))
    nodes = [h.make_node("ReduceSum", ["x"], ["s"], name="rsum", keepdims=0),
             h.make_node("Greater", ["s", "lo"], ["cnd"], name="gt"),
             h.make_node("If", ["cnd"], ["y"], name="branch", then_branch=then, else_branch=other)]
    model = h.make_model(h.make_graph(nodes, "convif", [_vi("x", [1, 1, 16])],
                                      [_vi("y", [1, 4, 16])], inits),
                         opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))
    return path


def _outputs(tmp_path, path, mode):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    return backend.outputs(backend.convert(path, mode=mode), {"x": X})["y"]


def _exact():
    import onnxruntime as ort

    path_model = onnx.helper.make_model(h.make_graph(
        [h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1])], "c", [_vi("x", [1, 1, 16])],
        [_vi("c", [1, 4, 16])], [nh.from_array(W, "w")]), opset_imports=[h.make_opsetid("", 13)])
    sess = ort.InferenceSession(path_model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": X})[0]


@pytest.mark.parametrize("weights_in", ["constant", "initializer"])
def test_keeping_a_branch_conv_keeps_its_weights_float32_wherever_the_export_put_them(
        tmp_path, weights_in):
    path = conv_if_model(tmp_path / f"{weights_in}.onnx", weights_in)
    default = _outputs(tmp_path, path, Mode())
    kept = _outputs(tmp_path, path, Mode(keep_dtype=("OpType::Conv2D",)))
    assert not np.array_equal(kept, default)  # bit for bit the same on the parent (constant)
    # the kept Conv computes on float32 weights: its output is the float32 Conv's, rounded to
    # float16 by the Mul that reads it (an fp16 op) and scaled by the float16 of 1/3
    third = np.float32(np.float16(1.0 / 3))
    expected = (np.float16(_exact()).astype(np.float32) * third).astype(np.float16)
    np.testing.assert_array_equal(kept.astype(np.float16), expected)


def test_the_two_exports_compute_the_same_numbers_in_every_mode(tmp_path):
    const = conv_if_model(tmp_path / "c.onnx", "constant")
    init = conv_if_model(tmp_path / "i.onnx", "initializer")
    for mode in (Mode(), Mode(keep_dtype=("OpType::Conv2D",)),
                 Mode(keep_dtype=("OpType::Mul",)), Mode(precision_mode="allow_fp32_to_fp16")):
        np.testing.assert_array_equal(_outputs(tmp_path / "c", const, mode),
                                      _outputs(tmp_path / "i", init, mode), err_msg=str(mode))


def test_keeping_constants_changes_nothing(tmp_path):
    """OpType::Constant / ConstantOfShape keep nothing a device computes (the diagnosis of
    silero_vad.onnx began its fix with them: an emulator artefact)."""
    path = conv_if_model(tmp_path / "c.onnx", "constant")
    conv = _outputs(tmp_path, path, Mode(keep_dtype=("OpType::Conv2D",)))
    more = _outputs(tmp_path, path, Mode(keep_dtype=(
        "OpType::Conv2D", "OpType::Constant", "OpType::ConstantOfShape")))
    np.testing.assert_array_equal(conv, more)
