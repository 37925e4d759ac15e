"""A converted model's entry keeps its ``tensor_info``: a run of the cached model cuts its
segments by those sizes without shape inference, into the same segments and the same dump."""
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.backends.emulator import backend as backend_mod  # noqa: E402
from pytest_ascend_accuracy.backends.emulator.backend import TENSOR_INFO_FILE, EmulatorBackend  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.core.modes import DEFAULT  # noqa: E402
from pytest_ascend_accuracy.errors import BackendError  # noqa: E402
from pytest_ascend_accuracy.graph import onnx_graph, stream  # noqa: E402
from pytest_ascend_accuracy.graph.external import load_model_refs  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import (  # noqa: E402
    make_inputs, tensor_info, tensor_info_from_json, tensor_info_to_json)
from pytest_ascend_accuracy.testing import models  # noqa: E402


def _cuts(seg):
    return [(s.nodes, s.inputs, s.outputs) for s in seg.segments]


def test_the_saved_info_is_the_converted_models_own(tmp_path):
    model = models.conv_bn_relu()
    converted = EmulatorBackend(Cache(tmp_path / "cache")).convert(model, DEFAULT)
    saved = json.loads((Path(converted.path).parent / TENSOR_INFO_FILE).read_text())
    proto, _ = load_model_refs(converted.path)
    assert tensor_info_from_json(saved) == tensor_info(proto) and len(saved) > 5


def test_a_cached_models_run_infers_no_shapes_and_dumps_the_same(tmp_path, monkeypatch):
    model = models.transformer_block()
    x = make_inputs(model)
    first = EmulatorBackend(Cache(tmp_path / "cache"))
    converted = first.convert(model, DEFAULT)
    expected = first.run(converted, x, dump_dir=tmp_path / "a")
    state = first._state(converted)
    small = dict(segment_bytes=1 << 10)  # many cuts: every size matters
    inferred = stream.SegmentedModel(state.model, state.plan.fetch, **small)

    def refused(model):
        raise AssertionError("shape inference ran for a cached model")

    monkeypatch.setattr(onnx_graph, "tensor_info", refused)
    again = EmulatorBackend(Cache(tmp_path / "cache"))
    converted = again.convert(model, DEFAULT)
    dump = again.run(converted, x, dump_dir=tmp_path / "b")
    state = again._state(converted)
    assert _cuts(stream.SegmentedModel(state.model, state.plan.fetch, info=state.info, **small)) \
        == _cuts(inferred) and len(inferred.segments) > 3
    assert dump.names == expected.names
    for a, b in zip(dump.ops, expected.ops):
        for t, u in zip(a.outputs, b.outputs):
            np.testing.assert_array_equal(t.load(), u.load())


def test_info_round_trips_through_json_with_unknown_dims():
    info = {"x": (1, (2, None, 3)), "s": (7, ()), "u": (1, None)}
    assert tensor_info_from_json(json.loads(json.dumps(tensor_info_to_json(info)))) == info
    with pytest.raises(ValueError, match="not a saved tensor_info"):
        tensor_info_from_json({"x": 3})


def test_a_garbled_info_file_is_an_error_naming_it(tmp_path):
    path = tmp_path / TENSOR_INFO_FILE
    path.write_text('{"x": "no"}')
    with pytest.raises(BackendError, match="not a tensor_info file") as info:
        backend_mod._saved_tensor_info(path)
    assert str(path) in str(info.value)
    assert backend_mod._saved_tensor_info(tmp_path / "absent.json") is None
    path.write_bytes(b"\xff\xfe{")
    with pytest.raises(BackendError, match="cannot read") as info:
        backend_mod._saved_tensor_info(path)
    assert str(path) in str(info.value)
