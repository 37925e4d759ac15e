"""A golden run that fails in segments says whether onnxruntime runs the model whole
(graph.whole_run): IMG.LY's ISNet failed in the segmented run at a Resize, the error read as
the model's, and the user's own onnxruntime run of the file worked (audit 35)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.errors import BackendError  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.graph import stream  # noqa: E402

NOTE = "onnxruntime runs this model whole on these inputs"


def _reshape_model():
    """x [1, 6] -> Relu -> Reshape to `shape` (an input) -> y."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Reshape", ["r", "shape"], ["y"], name="reshape")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6]),
                     helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def _inputs(shape):
    return {"x": np.arange(6, dtype=np.float32).reshape(1, 6), "shape": np.array(shape, np.int64)}


def test_a_failure_of_the_segmented_run_alone_says_the_model_runs_whole(tmp_path, monkeypatch):
    def broken(self, s, feeds):
        raise RuntimeError("segment session refused")

    monkeypatch.setattr(stream.SegmentedModel, "_run_segment", broken)
    with pytest.raises(BackendError) as info:
        golden_dump(_reshape_model(), _inputs([2, 3]), cache=Cache(tmp_path))
    text = str(info.value)
    assert "segment session refused" in text and NOTE in text and "report it to" in text


def test_a_model_onnxruntime_refuses_whole_gets_no_such_note(tmp_path):
    with pytest.raises(BackendError) as info:
        golden_dump(_reshape_model(), _inputs([4, 4]), cache=Cache(tmp_path))
    text = str(info.value)
    assert "could not run the golden model" in text and NOTE not in text


def test_a_model_over_the_whole_run_bound_is_not_tried_whole(tmp_path, monkeypatch):
    """A review: on a 1.6 GB model the whole-model retry peaked at 4.9 GB of memory."""
    from pytest_ascend_accuracy.graph import whole_run

    def broken(self, s, feeds):
        raise RuntimeError("segment session refused")

    tried = []
    monkeypatch.setattr(stream.SegmentedModel, "_run_segment", broken)
    monkeypatch.setattr(whole_run, "WHOLE_RUN_BYTES", 10)
    monkeypatch.setattr(whole_run, "ort_session", lambda *a, **k: tried.append(a), raising=False)
    with pytest.raises(BackendError) as info:
        golden_dump(_reshape_model(), _inputs([2, 3]), cache=Cache(tmp_path))
    assert NOTE not in str(info.value) and "segment session refused" in str(info.value)
    assert whole_run.runs_whole(_reshape_model(), _inputs([2, 3])) is whole_run.UNKNOWN
