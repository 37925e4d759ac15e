"""``ascend-accuracy dataset``'s errors name its own options and spell their values as it takes
them: they were headed by the Python keyword arguments (``postprocess:``, ``higher_is_better:``,
``max_drop:``, ``output:``) and said ``higher_is_better=False`` or ``postprocess(outputs)``,
which no option of the command takes."""
import json

import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy.cli.app import EXIT_BAD_INPUT, main
from pytest_ascend_accuracy.testing import models as tiny_models


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    onnx.save(tiny_models.passing_mlp(), "m.onnx")
    (tmp_path / "samples").mkdir()
    np.savez("samples/0.npz", x=np.zeros((1, 16), np.float32))
    (tmp_path / "l.json").write_text(json.dumps({"0": 1}))
    boxes = [[{"bbox": [0, 0, 1, 1], "category_id": 1}]]
    (tmp_path / "boxes.json").write_text(json.dumps(boxes))
    return tmp_path


@pytest.mark.parametrize("extra, said", [
    (["--metric", "top1", "--labels", "l.json", "--higher-is-better", "false"],
     "--higher-is-better: metric top1 is better higher (a share of samples or a mean "
     "precision); --higher-is-better false is for a callable metric"),
    (["--metric", "agreement", "--max-drop", "-1"],
     "--max-drop: expected a finite number >= 0, got -1.0"),
    (["--metric", "agreement", "--output", "zz"], "--output: no model output named 'zz'"),
    (["--metric", "map", "--labels", "boxes.json"],
     '--postprocess: metric "map" needs --postprocess MODULE:FUNCTION, a FUNCTION(outputs) -> '),
])
def test_errors_name_the_commands_options(project, capsys, extra, said):
    assert main(["dataset", "m.onnx", "samples", *extra, "--cache-dir", "c"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert f"ascend-accuracy: error: {said}" in err, err
    assert "higher_is_better" not in err and "postprocess(" not in err


def test_a_two_output_model_an_argmax_top5_and_a_missing_folder(project, capsys, monkeypatch):
    """More of the check's spellings: ``with output=...``, ``metric='top1' or 'agreement'``,
    and errors headed ``labels:`` or ``samples:`` (H96)."""
    from onnx import TensorProto as T
    from onnx import helper as h

    from tests.dataset.test_class_rows_and_inf import argmax_model, close_samples

    graph = h.make_graph([h.make_node("Relu", ["x"], ["a"], name="r"),
                          h.make_node("Neg", ["x"], ["b"], name="n")], "two",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, 16])],
                         [h.make_tensor_value_info("a", T.FLOAT, [1, 16]),
                          h.make_tensor_value_info("b", T.FLOAT, [1, 16])])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)], ir_version=8),
              "two.onnx")
    assert main(["dataset", "two.onnx", "samples", "--labels", "l.json", "--cache-dir",
                 "c"]) == EXIT_BAD_INPUT
    assert ("error: --output: the model has 2 outputs (a, b): say which one the metric reads "
            "with --output NAME") in capsys.readouterr().err
    argmax_model(project / "am.onnx")
    (project / "al.json").write_text(json.dumps(close_samples(project / "close")))
    assert main(["dataset", "am.onnx", "close", "--labels", "al.json", "--metric", "top5",
                 "--cache-dir", "c"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "use --metric top1 or --metric agreement, or read the scores output before the " \
           "ArgMax with --output NAME" in err, err
    assert main(["dataset", "two.onnx", "smples", "--labels", "l.json", "--output", "a",
                 "--cache-dir", "c"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "error: smples: " in err and "(closest: samples)" in err, err


def test_a_binary_output_and_an_unknown_metric_name_the_metric_option(project, capsys):
    """"score it with a callable metric(outputs, labels)" and "(or a callable)" (H97)."""
    from tests.dataset.test_class_rows_and_inf import binary_model

    binary_model(project / "bin.onnx")
    assert main(["dataset", "bin.onnx", "samples", "--labels", "l.json", "--metric", "top1",
                 "--cache-dir", "c"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "score it with --metric MODULE:FUNCTION, a FUNCTION(outputs, labels)" in err, err
    assert main(["dataset", "m.onnx", "samples", "--labels", "l.json", "--metric", "top2",
                 "--cache-dir", "c"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "built-in metrics: top1, top5, agreement, map (or MODULE:FUNCTION)" in err, err
    assert "callable" not in err
