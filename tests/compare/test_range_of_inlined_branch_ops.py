"""The golden holds the ops of an If branch a conversion inlines as its files spell them
(silero_vad_16k_op15's ``/model/decoder/rnn/LSTM`` as ``_model_decoder_rnn_LSTM``), while the
failing row names the model's op: the float16-range read looked the op up by that name alone,
found nothing, and the hint said "no float16 overflow seen" where the LSTM's golden input
reached 5.67e6 (a review; pasted, the keep list then still failed there)."""
import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.fp16_range import OVERFLOW, failing_ops_past_fp16, \
    golden_inputs_past_fp16
from pytest_ascend_accuracy.dump.layout import op_by_model_name
from pytest_ascend_accuracy.dump.model import DumpSet

BIG = np.linspace(-5.7e6, 5.7e6, 32).astype(np.float32)


def _golden():
    return DumpSet.from_arrays({"_model_rnn_LSTM": [np.tanh(BIG / 1e6)]},
                               inputs={"_model_rnn_LSTM": [BIG]}, op_types={"_model_rnn_LSTM":
                                                                          "LSTM"})


def test_an_op_is_found_by_its_file_spelling_under_the_model_s_name():
    golden = _golden()
    op = op_by_model_name(golden, "/model/rnn/LSTM")
    assert op is not None and op.name == "/model/rnn/LSTM"
    assert op_by_model_name(golden, "/model/rnn/GRU") is None
    assert op_by_model_name(golden, "_model_rnn_LSTM").name == "_model_rnn_LSTM"


def test_its_golden_operand_past_65504_is_found():
    found = golden_inputs_past_fp16(_golden(), ["/model/rnn/LSTM"])
    assert [(f.op, f.slot, f.kind) for f in found] == [("/model/rnn/LSTM", "input:0", OVERFLOW)]


def test_a_failing_row_naming_the_model_s_op_reads_it():
    golden = _golden()
    actual = DumpSet.from_arrays({"/model/rnn/LSTM": [np.zeros(32, np.float16)]})
    result = compare_dumps(actual, golden)
    verdict = result.judge(0.95)
    assert verdict.first.row.op_name == "/model/rnn/LSTM"
    found = failing_ops_past_fp16(golden, verdict, result.rows)
    assert ("/model/rnn/LSTM", "input:0") in [(f.op, f.slot) for f in found]
