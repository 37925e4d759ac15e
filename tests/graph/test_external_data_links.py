"""A model file reached through a symbolic link, with its weights in external data (or a big
file's own weights, read as references into it: ``wire``), as the Hugging Face hub cache lays
it out: ``snapshots/<rev>/model.onnx -> ../../blobs/<sha>`` and its data file a link into
``blobs`` too. Plain onnxruntime loads such a path; the golden run refused it on a cold cache
(T2: a 76 MB Faster R-CNN, "External data path escapes model directory", the segments' weights
read from the link's folder; a small one with external data: onnx's "is a symbolic link").
The data is read where onnxruntime reads it (``external.data_folder``); a file onnxruntime
refuses is refused in words that name it, with a fix that works pasted."""
import os
import subprocess

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend  # noqa: E402
from pytest_ascend_accuracy.cli import app as cli  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.core.modes import DEFAULT  # noqa: E402
from pytest_ascend_accuracy.errors import ConfigError  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.graph import external, wire  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import load_model, make_inputs  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402

#: external tensors above this many bytes stay in their file (by reference) where patched
SMALL = 100


def hub_layout(root, model, *, external_data=True):
    """``root/snapshots/rev1/model.onnx`` as huggingface_hub writes it: links into ``blobs``."""
    blobs, snapshot = root / "blobs", root / "snapshots" / "rev1"
    blobs.mkdir(parents=True)
    snapshot.mkdir(parents=True)
    saved = onnx.ModelProto()
    saved.CopyFrom(model)
    if external_data:
        onnx.save_model(saved, str(blobs / "model.onnx"), save_as_external_data=True,
                        all_tensors_to_one_file=True, location="model.onnx_data",
                        size_threshold=SMALL)
        os.rename(blobs / "model.onnx_data", blobs / "2f0c")
        os.symlink("../../blobs/2f0c", snapshot / "model.onnx_data")
    else:
        onnx.save_model(saved, str(blobs / "model.onnx"))
    os.rename(blobs / "model.onnx", blobs / "9f1c")
    os.symlink("../../blobs/9f1c", snapshot / "model.onnx")
    return snapshot / "model.onnx"


def _plain_onnxruntime(path, x):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(None, x)


def _same_dumps(a, b):
    assert [op.name for op in a.ops] == [op.name for op in b.ops]
    for x, y in zip(a.ops, b.ops):
        for s, t in zip(x.inputs + x.outputs, y.inputs + y.outputs):
            np.testing.assert_array_equal(s.load(), t.load(), err_msg=f"{x.name} {s.index}")


@pytest.fixture
def by_reference(monkeypatch):
    monkeypatch.setattr(external, "LOAD_BELOW", SMALL)


@pytest.fixture
def big_file(monkeypatch, by_reference):
    """Every model file is read as a file over ``wire.SCAN_ABOVE`` (4 MB) is: its weights over
    SMALL bytes become references into the file itself."""
    monkeypatch.setattr(wire, "SCAN_ABOVE", 0)
    monkeypatch.setattr(wire, "REF_ABOVE", SMALL)


@pytest.mark.parametrize("weights", ["loaded", "by_reference"])
def test_a_hub_cache_model_with_external_data_runs_its_golden(tmp_path, weights, request):
    if weights == "by_reference":
        request.getfixturevalue("by_reference")
    model = models.transformer_block()
    x = make_inputs(model)
    path = hub_layout(tmp_path / "hub", model)
    _plain_onnxruntime(path, x)  # the path onnxruntime loads
    golden = golden_dump(path, x, cache=Cache(tmp_path / "cold"))
    _same_dumps(golden, golden_dump(model, x, cache=Cache(tmp_path / "c2")))
    assert os.path.islink(path.parent / "model.onnx_data")  # the cache left as it was


def test_a_big_model_file_behind_a_link_runs_its_golden_and_conversion(tmp_path, big_file):
    """T2's case: the file's own weights are references into it, by the link's name."""
    model = models.transformer_block()
    x = make_inputs(model)
    path = hub_layout(tmp_path / "hub", model, external_data=False)
    assert any(external.is_external(t) for t in load_model(path, weights=False).graph.initializer)
    golden = golden_dump(path, x, cache=Cache(tmp_path / "cold"))
    _same_dumps(golden, golden_dump(model, x, cache=Cache(tmp_path / "c2")))
    backend = EmulatorBackend(Cache(tmp_path / "cold"))
    dump = backend.run(backend.convert(path, DEFAULT), x, dump_dir=tmp_path / "d")
    assert dump.ops


def test_a_link_to_a_model_in_another_folder_reads_the_target(tmp_path, big_file):
    """An absolute link in the project's models/ to a big file kept elsewhere (T2's
    proj/models/frcnn.onnx): the references into the file go to the file it links to."""
    model = models.transformer_block()
    x = make_inputs(model)
    (tmp_path / "store").mkdir()
    (tmp_path / "proj").mkdir()
    onnx.save_model(model, str(tmp_path / "store" / "block.onnx"))
    os.symlink(tmp_path / "store" / "block.onnx", tmp_path / "proj" / "block.onnx")
    proto, folder = external.load_model_refs(tmp_path / "proj" / "block.onnx")
    assert folder == str(tmp_path / "store")
    assert {external._entry(t)[0] for t in proto.graph.initializer if external.is_external(t)} \
        == {"block.onnx"}
    golden_dump(tmp_path / "proj" / "block.onnx", x, cache=Cache(tmp_path / "cold"))


def test_load_model_reads_a_hub_cache_model_with_its_weights(tmp_path):
    model = models.transformer_block()
    loaded = load_model(hub_layout(tmp_path / "hub", model))
    assert [t.name for t in loaded.graph.initializer] == [t.name for t in model.graph.initializer]
    for t, original in zip(loaded.graph.initializer, model.graph.initializer):
        assert not external.is_external(t)
        np.testing.assert_array_equal(onnx.numpy_helper.to_array(t),
                                      onnx.numpy_helper.to_array(original))


def test_a_model_without_links_keeps_its_folder_and_locations(tmp_path, by_reference):
    model = models.transformer_block()
    path = tmp_path / "m" / "block.onnx"
    path.parent.mkdir()
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="block.onnx.data", size_threshold=SMALL)
    proto, folder = external.load_model_refs(path)
    assert folder == str(path.parent)
    assert {external._entry(t)[0] for t in proto.graph.initializer if external.is_external(t)} \
        == {"block.onnx.data"}


def test_a_data_file_linked_out_of_the_model_folder_is_refused_with_a_fix(tmp_path, by_reference):
    """onnxruntime refuses it too (a model that is no link: only its own folder counts); the
    printed command, pasted, makes the check run."""
    model = models.transformer_block()
    x = make_inputs(model)
    (tmp_path / "m").mkdir()
    (tmp_path / "elsewhere").mkdir()
    path = tmp_path / "m" / "block.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="block.onnx.data", size_threshold=SMALL)
    os.rename(tmp_path / "m" / "block.onnx.data", tmp_path / "elsewhere" / "data")
    os.symlink(tmp_path / "elsewhere" / "data", tmp_path / "m" / "block.onnx.data")
    with pytest.raises(Exception, match="escapes model directory"):
        _plain_onnxruntime(path, x)
    with pytest.raises(ConfigError) as err:
        golden_dump(path, x, cache=Cache(tmp_path / "cold"))
    said = str(err.value)
    assert said.startswith(f"{path}: external data file 'block.onnx.data' of initializer ")
    assert f"resolves to {tmp_path / 'elsewhere' / 'data'}, outside {tmp_path / 'm'}: " \
           "onnxruntime refuses it (External data path escapes model directory); put a copy in " \
           "place of the link: cp --remove-destination " in said
    command = said.split("in place of the link: ")[1]
    subprocess.run(command, shell=True, check=True)
    golden_dump(path, x, cache=Cache(tmp_path / "cold"))
    _plain_onnxruntime(path, x)


def test_the_cli_diagnoses_a_hub_cache_model(tmp_path, capsys):
    model = models.transformer_block()
    path = hub_layout(tmp_path / "hub", model)
    code = cli.main(["diagnose", str(path), "--cache-dir", str(tmp_path / "cold"),
                     "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "ascend-accuracy diagnosis of model: PASSES" in captured.out


def test_the_cli_diagnoses_a_big_model_file_behind_a_link(tmp_path, capsys, big_file):
    model = models.transformer_block()
    path = hub_layout(tmp_path / "hub", model, external_data=False)
    code = cli.main(["diagnose", str(path), "--cache-dir", str(tmp_path / "cold"),
                     "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "ascend-accuracy diagnosis of model: PASSES" in captured.out
