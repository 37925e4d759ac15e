"""``ascend-accuracy judge compare.json`` of a report the plugin wrote names the model in its
``diagnose`` command: the result records the golden's model file, and the command said
``diagnose MODEL.onnx`` (a paths trial). Pasted, the command runs and names the fix."""
import re
import shlex

import onnx

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.testing import models as tiny_models

TEST = '''
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.95)
def test_overflow(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("overflow.onnx", seed=0)
    check_accuracy(ascend_model("overflow.onnx").run(inputs), golden_dump("overflow.onnx", inputs))
'''


def test_the_judged_results_diagnose_command_names_the_model_and_runs(pytester, capsys):
    onnx.save(tiny_models.overflow_model(), str(pytester.path / "overflow.onnx"))
    pytester.makepyfile(test_o=TEST)
    pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep").assert_outcomes(failed=1)
    (saved,) = pytester.path.glob("rep/*/compare.json")
    capsys.readouterr()
    assert cli.main(["judge", str(saved)]) == 1
    out = capsys.readouterr().out
    command = re.search(r"(ascend-accuracy diagnose \S+)", out).group(1)
    assert command == "ascend-accuracy diagnose overflow.onnx", out
    assert cli.main(shlex.split(command)[1:] + ["--cache-dir", "cache"]) == 0
    assert "keep_dtype" in capsys.readouterr().out  # the fix it names: norm kept in float32
