"""``ascend-accuracy dataset`` prints its next step as commands of its own (audit 32, F5: it
printed ``modes=[keep_dtype([...])]`` and a Python import), each of which pasted in a shell runs
and passes; ``--batch-axis`` reads a time-major output (F1) and its words are the command's."""
from __future__ import annotations

import json
import re
import shlex

import numpy as np

from pytest_ascend_accuracy.cli import main

from .conftest import spiky_samples
from .test_time_major_outputs import ctc_model, ctc_samples


def _spiky_project(root):
    import onnx

    from .conftest import spiky_model

    onnx.save(spiky_model(), str(root / "spiky.onnx"))
    samples, labels = spiky_samples()
    (root / "samples").mkdir()
    for i, s in enumerate(samples):
        np.savez(root / "samples" / f"{i:03d}.npz", **s)
    (root / "labels.json").write_text(json.dumps({f"{i:03d}": v for i, v in enumerate(labels)}))


def _ctc_project(root, n=20):
    import onnx

    onnx.save(ctc_model(), str(root / "ctc.onnx"))
    (root / "ctcs").mkdir()
    for i, s in enumerate(ctc_samples(n, flipped=(7,))):
        np.savez(root / "ctcs" / f"{i:03d}.npz", **s)


def _pasted(line: str):
    words = shlex.split(line.strip().removeprefix("or ").strip())
    assert words[0] == "ascend-accuracy", line
    return words[1:]


def test_the_modes_to_try_are_dataset_commands_that_pass_pasted(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _spiky_project(tmp_path)
    assert main(["dataset", "spiky.onnx", "samples", "--labels", "labels.json",
                 "--max-drop", "0.05"]) == 1
    out = capsys.readouterr().out
    assert "modes=[" not in out and "from pytest_ascend_accuracy import" not in out, out
    commands = re.findall(r"^  (?:or )?(ascend-accuracy dataset .*)$", out, re.M)
    assert commands == [
        "ascend-accuracy dataset spiky.onnx samples --labels labels.json --max-drop 0.05 "
        "--mode '{keep_dtype: [\"amplify2\", \"rescale\", \"add_bias\"]}'",
        "ascend-accuracy dataset spiky.onnx samples --labels labels.json --max-drop 0.05 "
        "--mode high_precision"], out
    for command in commands:
        assert main(_pasted(command)) == 0, command
        assert "dataset accuracy PASSED" in capsys.readouterr().out


def test_the_diagnosis_is_the_diagnose_command_on_the_traced_sample(
        tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _ctc_project(tmp_path)
    assert main(["dataset", "ctc.onnx", "ctcs", "--metric", "agreement",
                 "--threshold", "0.9999999999"]) == 1
    out = capsys.readouterr().out
    assert "--accuracy-diagnose" not in out and "modes=[" not in out, out
    assert "(on an Ascend device, --backend ascend --device N, compare with --mode " \
           "buffer_off, and with fusion off: ATC fuses ops of its own)" in out
    assert "the diagnose command, on sample 007 (the one traced):\n  ascend-accuracy diagnose " \
           "ctc.onnx --inputs ctcs/007.npz --threshold 0.9999999999" in out
    line = re.search(r"^  (ascend-accuracy diagnose .*)$", out, re.M).group(1)
    assert main(_pasted(line)) == 0
    assert "step 2 high_precision [high_precision]: PASSED" in capsys.readouterr().out


def test_batch_axis_option(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _ctc_project(tmp_path)
    base = ["dataset", "ctc.onnx", "ctcs", "--metric", "agreement"]
    assert main(base) == 1
    out = capsys.readouterr().out
    assert "agreement 0.9500 on the device" in out
    assert "is not); --batch-axis AXIS says another" in out
    assert main(base + ["--batch-axis", "1"]) == 1
    assert "agreement 0.9500 on the device" in capsys.readouterr().out
    assert main(base + ["--batch-axis", "0"]) == 0  # as asked: time steps as rows
    assert "(490 rows)" in capsys.readouterr().out
    assert main(base + ["--batch-axis", "x"]) == 2
    assert "--batch-axis: expected an axis of the output (0, 1, ..., -1 for the last), " \
           "'none' or 'auto', got 'x'" in capsys.readouterr().err
    assert main(base + ["--batch-axis", "5"]) == 2
    assert "--batch-axis 5 is not an axis of output 'y' of shape [20, 1, 10]" \
        in capsys.readouterr().err
