"""The diagnosis said "high precision does not pass (it fails at op /rpn/TopK:output:1 (TopK),
not a Cube op)" (T2 finding 5: a Faster R-CNN), which reads as "float16 is not the cause", while
the Convs computing the scores the TopK ranks still took float16 inputs under high precision.
Where Cube ops lie upstream of the op high precision fails at, the sentence now names them; the
model here: a MatMul (a Cube op) computing scores that a Greater compares with thresholds set
next to them, so float16 inputs flip the flags in high precision too and only keeping the
MatMul in float32 restores them."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
from pytest_ascend_accuracy.triage.flow import diagnose
from pytest_ascend_accuracy.triage.hp_wording import high_precision_fails


def _model(x, chained: bool):
    """x @ w (``mm``, a Cube op; with ``chained`` a second one, ``mm2``, before it) ->
    Greater(scores, thresholds next to the float32 scores) (``gt``) -> Cast to float (``y``)."""
    r = np.random.default_rng(3)
    w = (r.standard_normal((64, 16)) * 0.3).astype(np.float32)
    w0 = (np.eye(64) + r.standard_normal((64, 64)) * 0.01).astype(np.float32)
    feed = (x @ w0).astype(np.float32) if chained else x
    scores = feed @ w
    # each threshold 2e-4 relative below or above its score: float16 inputs move the scores
    # by about 1e-3 of their size, so some flags flip whatever precision the vector ops keep
    sign = np.where(np.arange(16) % 2, 1.0, -1.0).astype(np.float32)
    thr = (scores * (1 + sign * 2e-4)).astype(np.float32)
    inits = {"w": w, "thr": thr}
    nodes = [helper.make_node("MatMul", ["x" if not chained else "h", "w"], ["s"], name="mm"),
             helper.make_node("Greater", ["s", "thr"], ["g"], name="gt"),
             helper.make_node("Cast", ["g"], ["y"], name="to_float", to=TensorProto.FLOAT)]
    if chained:
        inits["w0"] = w0
        nodes.insert(0, helper.make_node("MatMul", ["x", "w0"], ["h"], name="mm2"))
    graph = helper.make_graph(
        nodes, "scores", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])],
        [numpy_helper.from_array(a, n) for n, a in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _diagnose(model, x, tmp_path):
    cache = Cache(tmp_path / "cache")
    return diagnose(model, inputs={"x": x}, backend=EmulatorBackend(cache), cache=cache,
                    threshold=0.99)


def _x():
    return np.random.default_rng(0).uniform(0.5, 1.5, (1, 64)).astype(np.float32)


def test_the_cube_op_computing_what_high_precision_fails_at_is_named(tmp_path):
    d = _diagnose(_model(_x(), chained=False), _x(), tmp_path)
    assert ("high precision does not pass (it fails at op gt (Greater), not a Cube op, but "
            "computed from 1 Cube op that high precision still feeds float16 inputs ('mm')); "
            "keeping every op in float32 does") in d.verdict, d.verdict
    assert "not a Cube op)" not in d.verdict


def test_several_cube_ops_upstream_are_named_nearest_first(tmp_path):
    d = _diagnose(_model(_x(), chained=True), _x(), tmp_path)
    assert ("high precision does not pass (it fails at op gt (Greater), not a Cube op, but "
            "computed from 2 Cube ops that high precision still feeds float16 inputs ('mm', "
            "'mm2')); keeping every op in float32 does") in d.verdict, d.verdict


class _Run:
    def __init__(self, golden, model):
        self.golden, self.model = golden, model


def test_an_op_without_cube_ops_upstream_reads_as_before(tmp_path):
    """x * 3 -> Greater: no Cube op feeds it; the words stay "not a Cube op"."""
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.dump.model import DumpSet
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump

    nodes = [helper.make_node("Mul", ["x", "three"], ["s"], name="scale"),
             helper.make_node("Greater", ["s", "thr"], ["y"], name="gt")]
    graph = helper.make_graph(
        nodes, "plain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.BOOL, [1, 4])],
        [numpy_helper.from_array(np.array([3.0], np.float32), "three"),
         numpy_helper.from_array(np.zeros((1, 4), np.float32), "thr")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = make_inputs(model)
    golden = golden_dump(model, x, cache=Cache(tmp_path / "c"))
    scaled = x["x"] * 3
    actual = DumpSet.from_arrays({"scale": [scaled], "gt": [~(scaled > 0)]},
                                 op_types={"scale": "Mul", "gt": "Greater"})
    verdict = compare_dumps(actual, golden).judge(0.99)
    said = high_precision_fails(verdict, run=_Run(golden, model))
    assert said == "high precision does not pass (it fails at op gt (Greater), not a Cube op)"
