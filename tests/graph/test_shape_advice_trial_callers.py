"""The two callers F10 left with today's unchecked example: the diagnose command the CLI prints
for a golden that tells no sizes (``cli.golden_source``) leaves out 1s onnxruntime refuses, and
the Ascend backend's convert without shapes (``input_shapes_for_atc``) offers the shape that
ran, not 1 where 1 fails."""
import os
from pathlib import Path

import onnx
import pytest

from pytest_ascend_accuracy.graph.shape_advice import DynamicShapeError

from .test_shape_advice_trial import reflect_pad

pytest.importorskip("onnxruntime")


def test_the_printed_diagnose_command_leaves_out_1s_onnxruntime_refuses(tmp_path):
    """1 for each dynamic dimension passes ONNX shape inference for a reflect Pad but not
    onnxruntime ('Pad reflect requires axis length >= 2'): the command leaves them out and
    says the sizes the golden ran at are wanted, as for 1s shape inference refuses."""
    from pytest_ascend_accuracy.cli.golden_source import _shaped

    model = tmp_path / "pad.onnx"
    onnx.save(reflect_pad(), str(model))
    said = _shaped(Path(model), {}, lambda: None, lambda: [])
    assert said["input_shape"] == "" and said["sizes_unfit"] and said["sizes_chosen"] == ["x"]


def test_the_ascend_backends_refusal_offers_the_shape_that_ran(tmp_path):
    from pytest_ascend_accuracy.backends.ascend.backend import input_shapes_for_atc

    model = tmp_path / "pad.onnx"
    onnx.save(reflect_pad(), str(model))
    with pytest.raises(DynamicShapeError) as info:
        input_shapes_for_atc(model, {"x": (-1, -1)}, None)
    assert info.value.pasted is not None and info.value.pasted["x"][1] > 1
    assert "sizes that ran in onnxruntime on seeded inputs where 1 failed" in str(info.value)


def test_a_model_files_trial_is_made_once_per_process(tmp_path, monkeypatch):
    """H115: a model refused at every size cost up to 20 s per error shown, paid again by
    every check of it (3 YAML entries of one model: 46 s)."""
    from pytest_ascend_accuracy.graph import shape_trial
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    from .test_shape_advice_trial import twelve_only

    made = []
    session = shape_trial._session
    monkeypatch.setattr(shape_trial, "_session", lambda *a: made.append(1) or session(*a))
    model = tmp_path / "twelve.onnx"
    onnx.save(twelve_only(), str(model))
    said = []
    for _ in range(3):
        with pytest.raises(DynamicShapeError) as info:
            make_inputs(str(model))
        said.append(str(info.value))
    assert len(made) == 1 and said[0] == said[1] == said[2]
    assert "no example is offered" in said[0]
    os.utime(model, ns=(1, 1))  # touched only: the same content, not tried again
    with pytest.raises(DynamicShapeError) as info:
        make_inputs(str(model))
    str(info.value)
    assert len(made) == 1
    stat = os.stat(model)  # another model of the same size and mtime (cp -p, rsync -a): tried
    changed = twelve_only()
    changed.graph.node[0].name = "reshapf"
    onnx.save(changed, str(model))
    assert os.stat(model).st_size == stat.st_size
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(DynamicShapeError) as info:
        make_inputs(str(model))
    assert "Reshape 'reshapf'" in str(info.value) and len(made) == 2
