"""A diagnosis whose budget runs out in the keep_dtype search after high precision passed gives
high precision as its fix (exhausted, with the rerun that searches a smaller change): it said
NOT RESTORED, exit 1, and printed no fix, though its own step 2 passed. The fix passes pasted."""
import re

import pytest

from pytest_ascend_accuracy.cli.app import main
from pytest_ascend_accuracy.testing import models as tiny_models


@pytest.fixture
def model(tmp_path, monkeypatch):
    import onnx

    monkeypatch.chdir(tmp_path)
    onnx.save(tiny_models.overflow_model(), "overflow.onnx")
    return "overflow.onnx"


def test_the_budget_cut_keeps_the_high_precision_fix(model, capsys):
    assert main(["diagnose", model, "--budget", "2", "--cache-dir", "c"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ascend-accuracy diagnosis of overflow: RESTORED\n")
    assert ("high precision passes; convert with --precision_mode=allow_fp32_to_fp16 (the budget "
            "ran out before a keep_dtype set was searched: rerun with --budget 4 to keep fewer "
            "ops in float32 instead)") in out
    fix = re.search(r"in a YAML suite: modes: \[(\w+)\]", out).group(1)
    assert fix == "high_precision"
    assert main(["diagnose", model, "--mode", fix, "--cache-dir", "c"]) == 0  # pasted: passes
    assert "already meets the threshold" in capsys.readouterr().out
    assert main(["diagnose", model, "--budget", "4", "--cache-dir", "c"]) == 0  # the rerun
    assert "keep_dtype {norm} restores" in capsys.readouterr().out
