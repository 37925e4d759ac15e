"""``ascend-accuracy compare`` of a run whose value-sized op (NonMaxSuppression) kept another
count names the diagnose command with the golden's own model, as its other hints do: it printed
the placeholder ``ascend-accuracy diagnose MODEL.onnx``, which pasted failed with "no such model
file" though the stored golden's record names the model."""
import re

import numpy as np

from pytest_ascend_accuracy.cli.app import main

from tests.plugin.test_value_dependent_counts import _nms_model

SCORES = np.array([[[2.0, 1e-4, 3.0, 2e-4, -1.0, 1.0, 3e-4, 0.5]]], np.float32)


def test_the_diagnose_command_names_the_goldens_model(tmp_path, capsys, monkeypatch):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.golden.stored import store_golden

    monkeypatch.chdir(tmp_path)
    _nms_model(tmp_path / "nms.onnx")
    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache)
    inputs = {"s": SCORES}
    dump = backend.run(backend.convert("nms.onnx", None), inputs, dump_dir=tmp_path / "dump")
    store_golden(tmp_path / "golden", golden_dump("nms.onnx", inputs, cache=cache))
    assert main(["compare", str(dump.root), "golden"]) == 1
    out = capsys.readouterr().out
    assert "an op whose output size depends on values" in out
    assert "MODEL.onnx" not in out
    command = re.search(r"(ascend-accuracy diagnose \S+)", out).group(1)
    assert command == "ascend-accuracy diagnose nms.onnx"
    # pasted with the inputs the note asks for, it finds a mode that passes
    assert "add --inputs s=FILE.npy" in out
    np.save(tmp_path / "s.npy", SCORES)
    argv = [*command.split()[1:], "--inputs", "s=s.npy", "--cache-dir", "dcache"]
    assert main(argv) == 0
    assert "diagnosis of nms: RESTORED\n  default fails at op nms; high precision passes" in (
        capsys.readouterr().out)
