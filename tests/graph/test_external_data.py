"""Models whose weights live in ONNX external data (graph.external): the weights stay in their
file through the golden run, the conversion and the emulated run (segments refer to them and
onnxruntime reads them itself; a converted model's weights are written to its data file as they
are made), with the same values as a model held in memory, and clear errors for a bad data file."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from pytest_ascend_accuracy.backends.emulator.backend import MODEL_FILE, EmulatorBackend  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.core.modes import DEFAULT, FUSION_OFF, HIGH_PRECISION  # noqa: E402
from pytest_ascend_accuracy.errors import AscendAccuracyError, ConfigError  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.graph import external, onnx_graph, stream  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402

#: external tensors above this stay in their file in these tests (the weight matrices and
#: biases of transformer_block; its shape constants and scalars are loaded)
SMALL = 100


@pytest.fixture
def by_reference(monkeypatch):
    monkeypatch.setattr(external, "LOAD_BELOW", SMALL)


def _save_external(model, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    saved = onnx.ModelProto()
    saved.CopyFrom(model)  # save_model moves the weights out of the proto it is given
    onnx.save_model(saved, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=path.name + ".data", size_threshold=0)
    return path


def _weight_bytes(model):
    return sum(len(t.raw_data) for t in model.graph.initializer if len(t.raw_data) > SMALL)


def _same_dumps(a, b):
    assert [op.name for op in a.ops] == [op.name for op in b.ops]
    for x, y in zip(a.ops, b.ops):
        assert len(x.inputs) == len(y.inputs) and len(x.outputs) == len(y.outputs), x.name
        for s, t in zip(x.inputs + x.outputs, y.inputs + y.outputs):
            np.testing.assert_array_equal(s.load(), t.load(), err_msg=f"{x.name} {s.kind} {s.index}")
            assert s.load().dtype == t.load().dtype


@pytest.fixture
def sessions(monkeypatch):
    """The model bytes and config of every onnxruntime session built for a segment."""
    built = []
    real = onnx_graph.ort_session

    def spy(data, **kw):
        built.append((len(data), dict(kw.get("config") or {})))
        return real(data, **kw)

    monkeypatch.setattr(onnx_graph, "ort_session", spy)
    return built


def test_the_golden_run_leaves_the_weights_in_their_file(tmp_path, by_reference, sessions):
    model = models.transformer_block()
    x = make_inputs(model)
    path = _save_external(model, tmp_path / "m" / "block.onnx")
    from_file = golden_dump(path, x, cache=Cache(tmp_path / "c1"))
    assert sessions and all(c.get(external.EXTERNAL_FOLDER_KEY) == str(path.parent)
                            for n, c in sessions if c)
    # the segments refer to the weights: their models together are smaller than the weights
    assert sum(n for n, _ in sessions) < _weight_bytes(model)
    in_memory = golden_dump(model, x, cache=Cache(tmp_path / "c2"))
    _same_dumps(from_file, in_memory)  # weights dumped as op inputs included


@pytest.mark.parametrize("mode", [DEFAULT, HIGH_PRECISION, FUSION_OFF], ids=str)
def test_conversion_and_run_leave_the_weights_in_their_files(tmp_path, by_reference, mode):
    model = models.transformer_block()
    x = make_inputs(model)
    path = _save_external(model, tmp_path / "m" / "block.onnx")
    backend = EmulatorBackend(Cache(tmp_path / "c1"))
    converted = backend.convert(path, mode)
    data = converted.path.parent / (MODEL_FILE + ".data")
    assert data.stat().st_size >= _weight_bytes(model) // 2  # rounded weights may be fp16-exact floats
    assert converted.path.stat().st_size < _weight_bytes(model)
    state = backend._state(converted)
    assert state.folder == str(converted.path.parent) and len(state.inits) > 0
    dump = backend.run(converted, x, dump_dir=tmp_path / "d1")
    other = EmulatorBackend(Cache(tmp_path / "c2"))
    expected = other.run(other.convert(model, mode), x, dump_dir=tmp_path / "d2")
    _same_dumps(dump, expected)
    # the converted model in the cache runs again the same (a new backend: loaded from disk)
    again = EmulatorBackend(Cache(tmp_path / "c1"))
    _same_dumps(again.run(again.convert(path, mode), x, dump_dir=tmp_path / "d3"), expected)


def test_sessions_go_after_running_when_the_weights_outgrow_a_segment():
    model = models.transformer_block()
    names = [o for n in model.graph.node for o in n.output if o]
    assert stream.SegmentedModel(model, names).keep_sessions
    small = stream.SegmentedModel(model, names, weight_bytes=4096)
    assert not small.keep_sessions and len(small.segments) > 3
    run = small.run(make_inputs(model))
    run.run_all()
    assert all(seg.session is None for seg in small.segments)


def test_a_data_file_that_ends_early_is_named(tmp_path, by_reference):
    model = models.transformer_block()
    path = _save_external(model, tmp_path / "m" / "block.onnx")
    data = path.parent / "block.onnx.data"
    data.write_bytes(data.read_bytes()[:-100])
    with pytest.raises(ConfigError) as err:
        golden_dump(path, make_inputs(model), cache=Cache(tmp_path / "c"))
    assert "block.onnx.data" in str(err.value) and "ends early" in str(err.value)
    with pytest.raises(AscendAccuracyError, match="block.onnx.data"):
        EmulatorBackend(Cache(tmp_path / "c")).convert(path, DEFAULT)


def test_a_missing_data_file_is_named(tmp_path, by_reference):
    model = models.transformer_block()
    path = _save_external(model, tmp_path / "m" / "block.onnx")
    (path.parent / "block.onnx.data").unlink()
    with pytest.raises(ConfigError, match="'block.onnx.data'.* not found next to the model"):
        external.load_model_refs(path)
    with pytest.raises(ConfigError, match="'block.onnx.data'.* not found next to the model"):
        golden_dump(path, make_inputs(model), cache=Cache(tmp_path / "c"))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.uint8, np.bool_, "bfloat16"])
def test_an_external_initializer_reads_as_onnx_loads_it(tmp_path, dtype):
    rng = np.random.default_rng(3)
    if dtype == "bfloat16":
        bits = (rng.standard_normal(15).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        tensor = helper.make_tensor("w", TensorProto.BFLOAT16, [3, 5], bits.tobytes(), raw=True)
    else:
        tensor = numpy_helper.from_array((rng.standard_normal((3, 5)) * 10).astype(dtype), "w")
    graph = helper.make_graph([helper.make_node("Identity", ["w"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", tensor.data_type, None)], [tensor])
    path = tmp_path / "m.onnx"
    _save_external(helper.make_model(graph), path)
    loaded = onnx.load(str(path)).graph.initializer[0]
    ref = onnx.load(str(path), load_external_data=False).graph.initializer[0]
    assert external.is_external(ref)
    expected = numpy_helper.to_array(loaded)
    for got in (external.initializer_array(ref, str(tmp_path)), external.mapped_array(ref, str(tmp_path))):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(np.asarray(got), expected)


def test_a_weight_sink_writes_big_weights_and_moves_the_source_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(external, "LOAD_BELOW", 16)
    src = tmp_path / "src"
    w = np.arange(40, dtype=np.float32).reshape(5, 8)
    graph = helper.make_graph([helper.make_node("Add", ["w", "x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, 8])],
                              [numpy_helper.from_array(w, "w")])
    path = _save_external(helper.make_model(graph), src / "m.onnx")
    proto, folder = external.load_model_refs(path)
    assert folder == str(src) and external.is_external(proto.graph.initializer[0])
    out = tmp_path / "out"
    out.mkdir()
    sink = external.WeightSink(out, "conv.onnx.data")
    made = sink.add("v", w * 2)
    assert external.is_external(made)
    assert not external.is_external(sink.add("tiny", np.ones(2, np.float32)))
    proto.graph.initializer.append(made)
    sink.finish(proto, folder)
    for t, value in zip(proto.graph.initializer, (w, w * 2)):
        assert dict((e.key, e.value) for e in t.external_data)["location"] == "conv.onnx.data"
        np.testing.assert_array_equal(external.initializer_array(t, str(out)), value)


def test_seeded_inputs_do_not_read_the_weights(tmp_path):
    """make_inputs needs the graph alone: a 2 GB model's weights are not read (here: they are
    gone, and it still answers)."""
    model = models.transformer_block()
    path = _save_external(model, tmp_path / "m" / "block.onnx")
    (path.parent / "block.onnx.data").unlink()
    np.testing.assert_array_equal(make_inputs(path)["x"], make_inputs(model)["x"])


@pytest.fixture
def inline_by_reference(monkeypatch, by_reference):
    """Every model file is scanned; weights over SMALL bytes become references into it."""
    from pytest_ascend_accuracy.graph import wire

    monkeypatch.setattr(wire, "SCAN_ABOVE", 0)
    monkeypatch.setattr(wire, "REF_ABOVE", SMALL)


def test_a_big_model_file_is_read_without_its_weights(tmp_path, inline_by_reference):
    from pytest_ascend_accuracy.graph.wire import model_with_weight_refs

    model = models.transformer_block()
    model.metadata_props.add(key="k", value="v")
    path = tmp_path / "block.onnx"
    onnx.save_model(model, str(path))
    light = model_with_weight_refs(path)
    assert light.graph.node == model.graph.node and light.graph.input == model.graph.input
    assert light.graph.output == model.graph.output and light.opset_import == model.opset_import
    assert light.ir_version == model.ir_version and light.metadata_props == model.metadata_props
    assert [t.name for t in light.graph.initializer] == [t.name for t in model.graph.initializer]
    refs = [t for t in light.graph.initializer if external.is_external(t)]
    assert len(refs) > 10 and light.ByteSize() < model.ByteSize() // 4
    for t, original in zip(light.graph.initializer, model.graph.initializer):
        np.testing.assert_array_equal(external.initializer_array(t, str(tmp_path)),
                                      numpy_helper.to_array(original))
    small = [t for t in light.graph.initializer if not external.is_external(t)]
    assert small and all(len(t.raw_data) <= SMALL for t in small)


def test_a_check_of_a_big_model_file_leaves_its_weights_in_it(tmp_path, inline_by_reference, sessions):
    model = models.transformer_block()
    x = make_inputs(model)
    path = tmp_path / "m" / "block.onnx"
    path.parent.mkdir()
    onnx.save_model(model, str(path))
    golden = golden_dump(path, x, cache=Cache(tmp_path / "c1"))
    assert sum(n for n, _ in sessions) < _weight_bytes(model)
    assert any(c.get(external.EXTERNAL_FOLDER_KEY) == str(path.parent) for _, c in sessions)
    _same_dumps(golden, golden_dump(model, x, cache=Cache(tmp_path / "c2")))
    backend = EmulatorBackend(Cache(tmp_path / "c1"))
    converted = backend.convert(path, DEFAULT)
    assert (converted.path.parent / (MODEL_FILE + ".data")).is_file()
    other = EmulatorBackend(Cache(tmp_path / "c2"))
    _same_dumps(backend.run(converted, x, dump_dir=tmp_path / "d1"),
                other.run(other.convert(model, DEFAULT), x, dump_dir=tmp_path / "d2"))


def test_a_broken_big_model_file_is_named(tmp_path, inline_by_reference):
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"\x3a\xff\xff\xff\x0f not a model")  # graph field longer than the file
    with pytest.raises(ConfigError, match="broken.onnx.*cannot read ONNX model"):
        golden_dump(path, {}, cache=Cache(tmp_path / "c"))


@pytest.mark.parametrize("inline", [False, True])
def test_the_dataset_reference_leaves_the_weights_in_their_file(tmp_path, by_reference, inline,
                                                                monkeypatch, request):
    """A dataset check's reference run reads a model with external data (or a big file's own
    weights) where they are: the session's model bytes hold no weight (a > 2 GB model cannot be
    serialized whole), and the outputs are those of the model held in memory."""
    from pytest_ascend_accuracy.dataset import reference

    if inline:
        request.getfixturevalue("inline_by_reference")
    built = []
    real = reference._session
    monkeypatch.setattr(reference, "_session", lambda data, folder=None: built.append((len(data), folder))
                        or real(data, folder))
    model = models.transformer_block()
    x = make_inputs(model)
    path = tmp_path / "m" / "block.onnx"
    if inline:
        path.parent.mkdir()
        onnx.save_model(model, str(path))
    else:
        _save_external(model, path)
    got = reference.ReferenceModel(path).outputs(x)
    assert built[0][0] < _weight_bytes(model) and built[0][1] == str(path.parent)
    expected = reference.ReferenceModel(model).outputs(x)
    assert built[1][1] is None and sorted(got) == sorted(expected)
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)


def test_weight_values_convert_an_embedded_weight_when_first_asked(monkeypatch):
    """Embedded weights are converted on first access, once (a run that dumps no op inputs
    converts none), and the mapping behaves as before: membership, order, set and delete."""
    tensors = [numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3) * k, f"w{k}")
               for k in range(3)]
    proto = helper.make_model(helper.make_graph([], "g", [], [], initializer=tensors))
    converted = []
    real = external.initializer_array
    monkeypatch.setattr(external, "initializer_array",
                        lambda t, *a: converted.append(t.name) or real(t, *a))
    values = external.WeightValues(proto, names={"w0", "w1"})
    assert converted == [] and "w1" in values and "w2" not in values and len(values) == 2
    np.testing.assert_array_equal(values["w1"], numpy_helper.to_array(tensors[1]))
    np.testing.assert_array_equal(values["w1"], numpy_helper.to_array(tensors[1]))
    assert converted == ["w1"]  # once
    values["w0"] = np.zeros(1, np.float32)  # set over a pending one: never converted
    del values["w1"]
    assert list(values) == ["w0"] and converted == ["w1"]
    with pytest.raises(KeyError):
        values["w1"]


def test_a_weight_that_cannot_be_converted_fails_at_each_access(monkeypatch):
    """A conversion that fails leaves the weight where it was: asked again, it fails again
    with the same error (not a KeyError), and it is still there."""
    proto = helper.make_model(helper.make_graph([], "g", [], [], initializer=[
        numpy_helper.from_array(np.ones(2, np.float32), "w")]))
    monkeypatch.setattr(external, "initializer_array",
                        lambda t, *a: (_ for _ in ()).throw(ValueError(f"cannot read {t.name}")))
    values = external.WeightValues(proto)
    for _ in range(2):
        with pytest.raises(ValueError, match="cannot read w"):
            values["w"]
    assert "w" in values and list(values) == ["w"]
