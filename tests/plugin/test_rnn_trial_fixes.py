"""Two defects a trial proved on recurrent models, through real test files (H36):

* ``keep_dtype(["OpType::CommonLSTM"])``, the type ATC's ONNX parser gives an LSTM, was refused
  with "closest: 'OpType::LSTM'", an entry ATC's keep_dtype file would match nothing with. The
  finished graph's ``OpType::DynamicRNN`` (what a dump file name shows) is refused naming
  ``OpType::CommonLSTM`` now, and that line's entry, pasted, passes.
* a seeded LSTM test (``accuracy_inputs(model, seed=0)``, YAML ``inputs: {seed: 0}``) drew its
  ``sequence_lens`` past the sequence length: "no check verdict", onnxruntime's "Invalid
  value/s in sequence_lens". It passes now."""
import re

import onnx

from test_rnn_optypes import rnn_model

TEST = '''
from pytest_ascend_accuracy import accuracy, keep_dtype

M = "models/lstm.onnx"


@accuracy(threshold=0.99, modes=[keep_dtype([{entry!r}])])
def test_keep(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, seed=0)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
'''

SEEDED = '''
from pytest_ascend_accuracy import accuracy

M = "models/lstm.onnx"


@accuracy(threshold=0.99)
def test_lstm_seeded(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, seed=0)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
'''


def _models(pytester):
    directory = pytester.mkdir("models")
    onnx.save(rnn_model("LSTM", steps=6, batch=2, direction="bidirectional"),
              str(directory / "lstm.onnx"))


def test_the_finished_type_is_refused_and_the_pasted_entry_passes(pytester):
    _models(pytester)
    pytester.makepyfile(test_keep=TEST.format(entry="OpType::DynamicRNN"))
    run = pytester.runpytest("-p", "no:cacheprovider")
    text = run.stdout.str()
    line = next(ln for ln in run.stdout.lines
                if ln.startswith("ascend-accuracy configuration error:"))
    assert "a finished graph's name for ONNX LSTM" in line, line
    entry = re.search(r"closest: '([^']+)'", line).group(1)
    assert entry == "OpType::CommonLSTM", text  # before: 'OpType::LSTM'
    pytester.makepyfile(test_keep=TEST.format(entry=entry))  # pasted
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(passed=1)
    run.stdout.fnmatch_lines(["1 accuracy check: 1 passed, 0 failed*"])


def test_the_onnx_spelling_passes_too(pytester):
    _models(pytester)
    pytester.makepyfile(test_keep=TEST.format(entry="OpType::LSTM"))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(passed=1)


def test_a_seeded_lstm_passes(pytester):
    _models(pytester)
    pytester.makepyfile(test_rnn=SEEDED)
    run = pytester.runpytest("-p", "no:cacheprovider")
    assert "sequence_lens" not in run.stdout.str()  # before: Invalid value/s in sequence_lens
    run.assert_outcomes(passed=1)
    run.stdout.fnmatch_lines(["1 accuracy check: 1 passed, 0 failed*"])


def test_a_yaml_seeded_lstm_passes(pytester):
    _models(pytester)
    pytester.makefile(".yaml", accuracy_rnn="models:\n  - model: models/lstm.onnx\n"
                                            "    inputs: {seed: 0}\n    threshold: 0.99\n")
    run = pytester.runpytest("-p", "no:cacheprovider", "accuracy_rnn.yaml")
    assert "sequence_lens" not in run.stdout.str()
    run.assert_outcomes(passed=1)
