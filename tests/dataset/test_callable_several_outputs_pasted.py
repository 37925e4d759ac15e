"""The ``output=`` a callable check of several outputs prints, pasted as printed: in a test
(pytester) and as the ``ascend-accuracy dataset`` command it prints, it tracks the flips and
traces the first flipped sample to its operator, as the failure promised (audit 34 C, finding
2: "0 flipped" / "no sample's top-1 changed" on rnet, whose top-1 did flip)."""
from __future__ import annotations

import json
import re
import shlex

import numpy as np

from pytest_ascend_accuracy.cli import main

from .conftest import spiky_samples
from .test_callable_several_outputs import two_output_spiky

TEST_FILE = '''
import numpy as np
from pytest_ascend_accuracy import accuracy

LABELS = {labels!r}


def top1_of_logits(outputs, labels):
    logits = np.concatenate([o["logits"] for o in outputs])
    return float(np.mean(logits.argmax(axis=1) == np.asarray(labels)))


@accuracy(threshold=0.95)
def test_two(ascend_model, check_dataset):
    check_dataset(ascend_model("models/two.onnx"), "samples", labels=LABELS,
                  metric=top1_of_logits)
'''

METRICS = '''
import numpy as np


def top1_of_logits(outputs, labels):
    logits = np.concatenate([o["logits"] for o in outputs])
    return float(np.mean(logits.argmax(axis=1) == np.asarray(labels)))
'''


def _project(root):
    (root / "models").mkdir()
    two_output_spiky(root / "models" / "two.onnx")
    samples, labels = spiky_samples()
    (root / "samples").mkdir()
    for i, s in enumerate(samples):
        np.savez(root / "samples" / f"{i:03d}.npz", **s)
    by_id = {f"{i:03d}": v for i, v in enumerate(labels)}
    (root / "labels.json").write_text(json.dumps(by_id))
    return by_id


def test_the_printed_output_option_pasted_in_the_test_traces_the_flipped_sample(pytester):
    labels = _project(pytester.path)
    pytester.makepyfile(test_two=TEST_FILE.format(labels=labels))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "flipped top-1: not tracked (the model has 2 outputs, logits, scaled, and a callable "
        "metric may read any of them)",
        "to track the top-1 of one output of class scores (the top-1 of boxes or other values "
        "tells nothing), and trace the first sample it flips to an operator, name it:",
        "  output='logits'",
        "  output='scaled'",
        "NaN/Inf in the device outputs logits, scaled (NaN, or an Inf the reference lacks there) "
        "of 2 samples: 003, 011",
        "first NaN/Inf sample 003: first operator below the threshold: amplify2 (Mul) *",
    ])
    text = result.stdout.str()
    assert "no sample's top-1 changed" not in text
    # the session's summary line says the same: not "0 flipped"
    result.stdout.fnmatch_lines(["*two [[]default[]] top1_of_logits 0.4000 device vs 0.5000 "
                                 "reference (drop 0.1000 > 0.01), 20 samples, flips not tracked"])
    pasted = re.search(r"^  (output='logits')$", text, re.M).group(1)
    source = (pytester.path / "test_two.py").read_text()
    pytester.makepyfile(test_two=source.replace("metric=top1_of_logits)",
                                                f"metric=top1_of_logits, {pasted})"))
    again = pytester.runpytest("-p", "no:cacheprovider")
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines([
        "flipped top-1 (2 of 20): 003, 011",
        "first flipped sample 003: first operator below the threshold: amplify2 (Mul) *",
        "*two [[]default[]] top1_of_logits 0.4000 device vs 0.5000 reference (drop 0.1000 > "
        "0.01), 20 samples, 2 flipped",
    ])
    assert "not tracked" not in again.stdout.str()


def test_the_printed_output_command_pasted_traces_the_flipped_sample(tmp_path, monkeypatch,
                                                                     capsys):
    monkeypatch.chdir(tmp_path)
    _project(tmp_path)
    (tmp_path / "metrics.py").write_text(METRICS)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["dataset", "models/two.onnx", "samples", "--labels", "labels.json",
                 "--metric", "metrics:top1_of_logits"]) == 1
    out = capsys.readouterr().out
    assert "output='" not in out, out
    commands = re.findall(r"^  (ascend-accuracy dataset .* --output \S+)$", out, re.M)
    assert commands == [
        "ascend-accuracy dataset models/two.onnx samples --metric metrics:top1_of_logits "
        f"--labels labels.json --output {name}" for name in ("logits", "scaled")], out
    assert main(shlex.split(commands[0])[1:]) == 1
    again = capsys.readouterr().out
    assert "flipped top-1 (2 of 20): 003, 011" in again, again
    assert "first flipped sample 003: first operator below the threshold: amplify2 (Mul)" in again
    assert "not tracked" not in again
