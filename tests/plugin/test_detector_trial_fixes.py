"""Two defects a trial proved on a detector's tail (H35), through real test files:

* ``keep_dtype(["OpType::NonMaxSuppressionV6"])``, ``OpType::ArgMaxV2`` and ``OpType::GatherNd``
  (the types ATC's ONNX parser gives those ops) were refused ("no op of type ... closest:
  'OpType::NonMaxSuppression'"); they pass now, and a finished name is refused with the
  parser's, which pasted passes. ``OpType::Lstm`` got no closest at all; it gets
  ``OpType::CommonLSTM``, which pasted passes.
* an ArgMax with ``select_last_index=1``, which CANN's ONNX parser refuses, passed in the
  emulator; its conversion fails now, saying why and what to export, and both exports pass."""
import re

import pytest

from test_detector_optypes import detector_model

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy, keep_dtype

M = "models/{model}.onnx"
INPUTS = {{"boxes": np.array({boxes}, np.float32), "scores": np.array({scores}, np.float32)}}


@accuracy(threshold=0.99, modes=[{modes}])
def test_det(ascend_model, golden_dump, check_accuracy):
    check_accuracy(ascend_model(M).run(INPUTS), golden_dump(M, INPUTS))
'''

LSTM_TEST = '''
from pytest_ascend_accuracy import accuracy, keep_dtype

M = "models/lstm.onnx"


@accuracy(threshold=0.99, modes=[keep_dtype([{entry!r}])])
def test_keep(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, seed=0)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
'''


def _test_file(pytester, model="det", modes="keep_dtype([])"):
    from test_detector_optypes import BOXES, SCORES

    pytester.makepyfile(test_det=TEST.format(model=model, modes=modes, boxes=BOXES.tolist(),
                                             scores=SCORES.tolist()))


def _run(pytester):
    return pytester.runpytest("-p", "no:cacheprovider")


def _config_error(run) -> str:
    return next(ln for ln in run.stdout.lines
                if ln.startswith("ascend-accuracy configuration error:"))


@pytest.fixture
def models(pytester):
    return pytester.mkdir("models")


@pytest.mark.parametrize("entry", ["OpType::NonMaxSuppressionV6", "OpType::ArgMaxV2",
                                   "OpType::GatherNd"])
def test_the_parsers_types_pass(pytester, models, entry):
    detector_model(models / "det.onnx")
    _test_file(pytester, modes=f"keep_dtype([{entry!r}])")
    run = _run(pytester)
    assert "configuration error" not in run.stdout.str()  # before: refused
    run.assert_outcomes(passed=1)
    run.stdout.fnmatch_lines(["1 accuracy check: 1 passed, 0 failed*"])


def test_a_finished_name_is_refused_and_the_pasted_entry_passes(pytester, models):
    detector_model(models / "det.onnx")
    _test_file(pytester, modes="keep_dtype(['OpType::NonMaxSuppressionV7'])")
    line = _config_error(_run(pytester))
    assert "a finished graph's name for ONNX NonMaxSuppression" in line, line
    entry = re.search(r"closest: '([^']+)'", line).group(1)
    assert entry == "OpType::NonMaxSuppressionV6"
    _test_file(pytester, modes=f"keep_dtype([{entry!r}])")  # pasted
    _run(pytester).assert_outcomes(passed=1)


def test_an_lstm_spelt_lstm_gets_the_parsers_type_which_passes(pytester, models):
    import onnx

    from test_rnn_optypes import rnn_model

    onnx.save(rnn_model("LSTM", steps=6, batch=2), str(models / "lstm.onnx"))
    pytester.makepyfile(test_keep=LSTM_TEST.format(entry="OpType::Lstm"))
    line = _config_error(_run(pytester))
    entry = re.search(r"closest: '([^']+)'", line)  # before: no closest
    assert entry and entry.group(1) == "OpType::CommonLSTM", line
    pytester.makepyfile(test_keep=LSTM_TEST.format(entry=entry.group(1)))
    _run(pytester).assert_outcomes(passed=1)


def test_select_last_index_is_refused_and_both_advised_exports_pass(pytester, models):
    detector_model(models / "sli.onnx", argmax_sli=1)
    _test_file(pytester, model="sli")
    run = _run(pytester)
    text = run.stdout.str()
    run.assert_outcomes(failed=1)  # before: passed
    line = next(ln for ln in run.stdout.lines if ln.startswith("ascend-accuracy ConversionError"))
    assert line.startswith(
        "ascend-accuracy ConversionError: model 'sli' has 1 operator with select_last_index=1: "
        "'best_cls' (ArgMax). CANN's ONNX parser refuses it (\"Only support select_last_index=0, "
        "but 1 is obtained now\"; ATC stops with E11010 for Op [best_cls], optype "
        "[ai.onnx::13::ArgMax]), so the model cannot be converted; export it with "
        "select_last_index=0 "), text
    # the Slice as the flipped model below writes it (a review: ends=[0] would drop element 0)
    assert ("reverse the axis before it (Slice with starts=[-1], ends=[-2**62], axes=[axis], "
            "steps=[-1]: ends=[0] would drop element 0)") in line
    detector_model(models / "sli.onnx")  # exported with select_last_index=0
    _run(pytester).assert_outcomes(passed=1)
    detector_model(models / "sli.onnx", flipped=True)  # the last index, axis reversed
    _run(pytester).assert_outcomes(passed=1)
