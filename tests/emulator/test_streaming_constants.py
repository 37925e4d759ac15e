"""A Constant node read by a later segment (graph.stream): PyTorch's ``F.interpolate(size=...)``
export sizes a Resize by ``Concat(Slice(Shape(x), starts, ends, axes), Constant([h, w]))``. Where
a cut put the Constants in an earlier segment, the Slice's constants were that session's inputs,
onnxruntime's shape inference could not size the Slice, and the session was refused ("Number of
elements of input 'sizes' (0) must be same as rank of input 'X' (4)"): IMG.LY's ISNet (audit 35)
could not be checked at all, the golden run failing where the model runs in onnxruntime."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.core.modes import DEFAULT  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.graph import stream  # noqa: E402

from .streaming_helpers import one_run  # noqa: E402

#: the budget that cuts the model below before each Relu and keeps the sizing ops with the last
BUDGET = 1100


def interpolate_export():
    """Four Constants first (as torch lists them), six Relus of 768 bytes, then the sizing
    pattern and a Resize to 4x4."""
    def constant(name, values):
        return helper.make_node("Constant", [], [name], name=f"{name}_const",
                                value=helper.make_tensor(name, TensorProto.INT64, [len(values)],
                                                         values))

    nodes = [constant("starts", [0]), constant("ends", [2]), constant("axes", [0]),
             constant("hw", [4, 4])]
    prev = "x"
    for k in range(6):
        nodes.append(helper.make_node("Relu", [prev], [f"r{k}"], name=f"relu{k}"))
        prev = f"r{k}"
    nodes += [helper.make_node("Shape", [prev], ["shape"], name="shape"),
              helper.make_node("Slice", ["shape", "starts", "ends", "axes"], ["nc"], name="slice"),
              helper.make_node("Concat", ["nc", "hw"], ["sizes"], name="concat", axis=0),
              helper.make_node("Resize", [prev, "", "", "sizes"], ["y"], name="resize",
                               mode="nearest", coordinate_transformation_mode="asymmetric",
                               nearest_mode="floor")]
    graph = helper.make_graph(nodes, "interpolate",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def test_a_constant_read_after_a_cut_is_copied_into_the_reading_segment():
    model = interpolate_export()
    x = {"x": np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)}
    names = [o for n in model.graph.node for o in n.output]
    segmented = stream.SegmentedModel(model, names, segment_bytes=BUDGET)
    last = segmented.segments[-1]
    resize = [n.name for n in model.graph.node].index("resize")
    assert resize in last.nodes and 0 not in last.nodes  # the cut is where the bug was
    assert last.inputs == ["r4"] and sorted(last.consts) == [0, 1, 2, 3]
    run = segmented.run(x)
    run.run_all()
    expected = one_run(model, x)
    assert sorted(run.values) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(run.values[name], value, err_msg=name)
    run.close()


def test_the_golden_and_the_emulated_run_of_such_a_model_run_cut(tmp_path, monkeypatch):
    monkeypatch.setattr(stream, "SEGMENT_BYTES", BUDGET)
    model = interpolate_export()
    x = {"x": np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)}
    cache = Cache(tmp_path / "cache")
    golden = golden_dump(model, x, cache=cache)
    backend = EmulatorBackend(cache)
    dump = backend.run(backend.convert(model, DEFAULT), x, dump_dir=tmp_path / "dump")
    for dumped in (golden, dump):
        resize = next(op for op in dumped.ops if op.name == "resize")
        assert resize.outputs[0].load().shape == (1, 3, 4, 4)


def test_a_big_constant_is_handed_over_not_copied_into_every_reader():
    """A review: a 64 MB Constant read by 12 segments, copied into each, took the golden from
    4.2 s / 661 MB to 13.4 s / 1242 MB. Shape constants are a few int64s."""
    model = interpolate_export()
    big = helper.make_node("Constant", [], ["big"], name="big_const",
                           value=helper.make_tensor("big", TensorProto.FLOAT, [1, 3, 8, 8],
                                                    np.ones(192, np.float32)))
    model.graph.node.insert(0, big)
    model.graph.node.append(helper.make_node("Add", ["r5", "big"], ["z"], name="add_big"))
    model.graph.output.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 3, 8, 8]))
    names = [o for n in model.graph.node for o in n.output]
    previous = stream.COPIED_CONSTANT_BYTES
    try:
        stream.COPIED_CONSTANT_BYTES = 100  # under big's 768 bytes, over the int64 shape ones
        segmented = stream.SegmentedModel(model, names, segment_bytes=BUDGET)
    finally:
        stream.COPIED_CONSTANT_BYTES = previous
    last = segmented.segments[-1]
    assert "big" in last.inputs and 0 not in last.consts
    x = {"x": np.random.default_rng(2).standard_normal((1, 3, 8, 8)).astype(np.float32)}
    run = segmented.run(x)
    run.run_all()
    np.testing.assert_array_equal(run.values["z"], one_run(model, x)["z"])
    run.close()
