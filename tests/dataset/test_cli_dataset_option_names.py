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
