"""``ascend-accuracy dataset MODEL SAMPLES``: exit status, figures, JSON, bad input."""
from __future__ import annotations

import json

import numpy as np

from pytest_ascend_accuracy.cli import main

from .conftest import spiky_samples


def _samples(tmp_path):
    samples, labels = spiky_samples()
    folder = tmp_path / "samples"
    folder.mkdir()
    for i, s in enumerate(samples):
        np.savez(folder / f"{i:03d}.npz", **s)
    (tmp_path / "labels.json").write_text(json.dumps({f"{i:03d}": v for i, v in enumerate(labels)}))
    return folder


def test_dataset_command_fails_default_and_passes_high_precision(spiky, tmp_path, capsys):
    folder = _samples(tmp_path)
    common = [str(spiky), str(folder), "--labels", str(tmp_path / "labels.json"),
              "--cache-dir", str(tmp_path / "cache")]
    assert main(["dataset"] + common + ["--json", str(tmp_path / "out.json")]) == 1
    out = capsys.readouterr().out
    assert "dataset accuracy FAILED: top1 0.4000 on the device vs 0.5000 reference" in out
    assert "first flipped sample 003: first operator below the threshold: amplify2 (Mul)" in out
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["flipped"] == ["003", "011"] and data["dataset_first_failing_op"] == "amplify2"
    assert main(["dataset"] + common + ["--mode", "high_precision"]) == 0
    assert "reference: 0 run, 20 from the cache" in capsys.readouterr().out
    no_labels = [a for a in common if a not in ("--labels", str(tmp_path / "labels.json"))]
    assert main(["dataset"] + no_labels + ["--metric", "agreement", "--max-drop", "0.1"]) == 0


def test_dataset_command_bad_input_exits_2(spiky, tmp_path, capsys):
    folder = _samples(tmp_path)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert main(["dataset", str(spiky), str(folder), "--metric", "top2"] + cache) == 2
    assert "unknown metric 'top2'" in capsys.readouterr().err
    assert main(["dataset", str(spiky), str(tmp_path / "nope")] + cache) == 2
    assert main(["dataset", str(spiky), str(folder), "--metric", "nomodule:fn"] + cache) == 2
    assert "cannot load 'nomodule:fn'" in capsys.readouterr().err
    # top1 without --labels names the option (the error named a 'labels' argument, review helper)
    assert main(["dataset", str(spiky), str(folder), "--metric", "top1"] + cache) == 2
    assert "--labels: metric top1 needs labels: --labels FILE.json" in capsys.readouterr().err
    assert not (tmp_path / "cache").exists()  # refused before converting anything


def test_dataset_command_takes_a_metric_function(spiky, tmp_path, monkeypatch, capsys):
    folder = _samples(tmp_path)
    (tmp_path / "my_metrics.py").write_text(
        "import numpy as np\n"
        "def finite_share(outputs, labels):\n"
        "    return float(np.mean([np.isfinite(o['logits']).all() for o in outputs]))\n")
    monkeypatch.chdir(tmp_path)
    args = ["dataset", str(spiky), str(folder), "--metric", "my_metrics:finite_share",
            "--cache-dir", str(tmp_path / "cache")]
    assert main(args) == 1
    assert "finite_share 0.9000 on the device vs 1.0000 reference" in capsys.readouterr().out
    assert main(args + ["--mode", "high_precision"]) == 0
