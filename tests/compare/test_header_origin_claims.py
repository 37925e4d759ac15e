"""Without an om json, a TransData/Cast whose header origin a later op claims too is not
compared with that golden tensor.

Real ATC (6.0 tdnn file) names the TransData before ``Conv_232`` after that conv
(``_datadump_origin_name``, which the device copies into the dump header), and the TransData
after the conv too. Where the Pad output the first one holds has the conv output's size (a
512 -> 512 channel conv keeping the length), the size guard cannot tell them apart: the first
was compared with the conv's golden tensor, a false failure on a correct device.
"""
import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump import AscendDumpWriter, load_dump
from pytest_ascend_accuracy.dump.model import DumpSet

RNG = np.random.default_rng(11)
PAD = RNG.standard_normal((1, 16, 10)).astype(np.float32)   # Pad_1 output (ONNX, 1-D conv net)
CONV = RNG.standard_normal((1, 16, 10)).astype(np.float32)  # Conv_2 output: same size
RELU = np.maximum(CONV, 0)


def _golden():
    return DumpSet.from_arrays({"Pad_1": [PAD], "Conv_2": [CONV], "Relu_3": [RELU]}, kind="npy")


def _dump(tmp_path, conv_value=CONV):
    w = AscendDumpWriter(tmp_path / "dump" / "20261203120000" / "0" / "net" / "1" / "0")
    h = lambda a: a.reshape(1, 16, 1, 10).astype(np.float16)  # noqa: E731 (the NPU's 2-D conv)
    w.write_op("PadV3", "Pad_1", outputs=[PAD.astype(np.float16)])
    # NPU-inserted, header origin = its consumer (as real ATC writes it)
    w.write_op("TransData", "trans_TransData_4", outputs=[h(PAD)],
               output_formats=["NC1HWC0"], output_origins=[("Conv_2", 0)])
    w.write_op("Conv2D", "PartitionedCall_Conv_2_Conv2D_1", outputs=[h(conv_value)],
               output_formats=["NC1HWC0"])
    w.write_op("TransData", "trans_TransData_8", outputs=[h(conv_value)],
               output_origins=[("Conv_2", 0)])
    w.write_op("Relu", "Relu_3", outputs=[np.maximum(conv_value, 0).astype(np.float16)])
    return tmp_path / "dump"


def test_a_correct_device_does_not_fail_at_the_transdata_before_the_conv(tmp_path):
    result = compare_dumps(load_dump(_dump(tmp_path)), _golden())
    rows = {r.op_name: r for r in result.rows}
    before = rows["trans_TransData_4"]
    assert "npu_only" in before.flags and before.metrics is None
    assert rows["trans_TransData_8"].golden_name == "Conv_2"
    verdict = result.judge(0.99, ignore=["PartitionedCall_Conv_2_Conv2D_1"])
    assert verdict.passed, verdict.describe()


def test_a_wrong_conv_still_fails_at_the_transdata_after_it(tmp_path):
    result = compare_dumps(load_dump(_dump(tmp_path, conv_value=-CONV)), _golden())
    verdict = result.judge(0.99, ignore=["PartitionedCall_Conv_2_Conv2D_1"])
    assert [f.row.op_name for f in verdict.failures] == ["trans_TransData_8", "Relu_3"]
