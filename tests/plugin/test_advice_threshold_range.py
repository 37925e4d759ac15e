"""A failure whose cosine is 0 or below offers no threshold: the marker and the YAML suite take
cosine thresholds within [0, 1], and "threshold that would pass: -1.000000" of an inverted
tensor, pasted into the YAML entry, was refused ("threshold must be within [0, 1]", a YAML
trial with the PP-OCR cls model). It says no threshold passes, as for NaN, and the lowest one
the suite takes, pasted, still fails."""
import math

import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.thresholds import Threshold
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.failure_text import failure_text

#: the emulated device flips relu2's sign: a cosine of -1 against the golden
FLIPPED = '''
from pytest_ascend_accuracy import backends
from pytest_ascend_accuracy.backends.emulator.faults import Fault

_MAKE = backends.make_backend


def _faulted(*args, **kwargs):
    return _MAKE(*args, faults=[Fault.on_op("relu2", effect="scale", amount=-1.0)], **kwargs)


def pytest_configure(config):
    backends.make_backend = _faulted


def pytest_unconfigure(config):
    backends.make_backend = _MAKE
'''


def _line(text, metric="cosine"):
    line = next(line for line in text.splitlines() if line.strip().startswith(metric + " "))
    return " ".join(line.split())


@pytest.mark.parametrize("golden,actual,said", [
    ([1.0, 2.0, 3.0], [-1.0, -2.0, -3.0],
     "cosine -1.000000 < 0.95 (no threshold within [0, 1] passes it: the tensor points away "
     "from the golden's)"),
    ([1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0],
     "cosine 0.000000 < 0.95 (no threshold above 0 passes it: the tensor is orthogonal to the "
     "golden's)"),
])
def test_no_threshold_is_offered_for_a_cosine_at_or_below_0(golden, actual, said):
    result = compare_dumps(DumpSet.from_arrays({"op": np.array([actual], np.float32)}),
                           DumpSet.from_arrays({"op": np.array([golden], np.float32)}))
    text = failure_text(result, result.judge(0.95))
    assert _line(text) == said and "threshold that would pass" not in text, text


def test_what_may_be_offered():
    cosine = Threshold(0.95)
    assert cosine.advisable(0.5) and cosine.advisable(1e-6)
    assert not cosine.advisable(0.0) and not cosine.advisable(-1.0)
    assert not cosine.advisable(None) and not cosine.advisable(cosine.loosest_passing(math.nan))
    assert Threshold(2.5, "rel_l2").advisable(0.0)  # error metrics: 0 is a real bound


def test_the_yaml_suite_says_no_threshold_passes_and_its_lowest_still_fails(pytester, models_dir):
    pytester.makeconftest(FLIPPED)
    pytester.makefile(".yaml", accuracy_flip="""
models:
  - name: flipped
    model: models/passing_mlp.onnx
  - name: lowest
    model: models/passing_mlp.onnx
    threshold: 0
""")
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=2)
    # the failure blocks only: with CI set, pytest repeats their text in the short test summary
    out = run.stdout.str().split("short test summary")[0]
    assert out.count("cosine         -1.000000 < 0.95 (no threshold within [0, 1] passes it") == 1
    # the lowest threshold the entry takes, pasted: fails still, and says so again
    assert out.count("cosine         -1.000000 < 0 (no threshold within [0, 1] passes it") == 1
    assert "threshold that would pass" not in out
