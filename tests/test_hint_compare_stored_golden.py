"""``ascend-accuracy compare <dump> <stored golden>`` prints a diagnose command to paste: it said
``MODEL.onnx`` though the golden's golden.json names the model (relative to the golden), and
nothing about inputs, which diagnose then made up (a PP-OCRv4 trial). The command names that
model from where it runs, and where the golden's inputs are not diagnose's seeded ones (only
their digest is recorded) says what to add; pasted from another directory, it runs."""
import json
import re
import shlex

import pytest

from pytest_ascend_accuracy.cli import main

pytest.importorskip("onnxruntime")


@pytest.fixture
def pair(tmp_path):
    from pytest_ascend_accuracy.testing import models
    from pytest_ascend_accuracy.testing.emulated_pair import emulated_pair

    (tmp_path / "project").mkdir()
    return emulated_pair(tmp_path / "project", models.passing_mlp(), name="mlp")


def _command(capsys, pair, cwd, monkeypatch):
    monkeypatch.chdir(cwd)
    code = main(["compare", pair.dump, pair.golden, "--threshold", "0.9999999"])
    assert code == 1
    out = capsys.readouterr().out
    found = re.search(r"(ascend-accuracy diagnose [^()]*?)(?: \(with [^()]*\))? walks the "
                      r"debugging flow", out)
    return found.group(1), out


def test_the_command_names_the_goldens_model_and_runs_pasted(pair, tmp_path, capsys, monkeypatch):
    work = tmp_path / "elsewhere"
    work.mkdir()
    command, out = _command(capsys, pair, work, monkeypatch)
    assert command.startswith("ascend-accuracy diagnose ../project/mlp.onnx ")
    assert "MODEL.onnx" not in out and "seeded random inputs" not in out  # seed 0: its own
    argv = shlex.split(command)[1:] + ["--cache-dir", str(tmp_path / "cache"), "--budget", "4"]
    assert main(argv) in (0, 1)  # runs (diagnosed, whatever it finds)
    assert "ascend-accuracy diagnosis of mlp" in capsys.readouterr().out


def test_inputs_other_than_the_seeded_ones_are_said_to_be_added(pair, tmp_path, capsys,
                                                                monkeypatch):
    record = json.loads((tmp_path / "project" / "golden" / "golden.json").read_text())
    record["inputs_digest"] = "xxh3_128:" + "0" * 32  # made from other inputs
    (tmp_path / "project" / "golden" / "golden.json").write_text(json.dumps(record))
    command, out = _command(capsys, pair, tmp_path / "project", monkeypatch)
    assert command.startswith("ascend-accuracy diagnose mlp.onnx ")
    assert ("(with the inputs the golden was made from, which it records only the digest of: "
            "add --inputs x=FILE.npy; without them diagnose runs seeded random inputs)") in out
