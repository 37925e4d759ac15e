"""The README's opening snippet runs as printed (it used ``inputs`` without defining it)."""
import re
from pathlib import Path

import onnx

from pytest_ascend_accuracy.testing import models as tiny_models

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_opening_snippet_runs_pasted(pytester):
    snippet = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    assert "def test_resnet" in snippet
    pytester.mkdir("models")
    onnx.save(tiny_models.passing_mlp(), str(pytester.path / "models" / "resnet50.onnx"))
    pytester.makepyfile(test_readme=snippet)
    pytester.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)
