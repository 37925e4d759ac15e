"""The emulator on models with bfloat16 tensors, which onnxruntime's Python API cannot return:
the run fetches them through an exact Cast to float32 (``graph.stream``), dumps them as DT_BF16
(what the tensor is) and compares them with the golden."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
ml_dtypes = pytest.importorskip("ml_dtypes")

from onnx import TensorProto, helper  # noqa: E402

from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend  # noqa: E402
from pytest_ascend_accuracy.compare.engine import compare_dumps  # noqa: E402
from pytest_ascend_accuracy.core.modes import (  # noqa: E402
    DEFAULT, FUSION_OFF, HIGH_PRECISION, Mode)
from pytest_ascend_accuracy.dump.loader import load_dump  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402

X = np.array([1.3, -2.7, 3.1], np.float32)
BF = X.astype(ml_dtypes.bfloat16).astype(np.float32)


def bf16_model(*, bf16_output=False):
    """x -> Cast(bf16) ``to_bf16`` -> Cast(float) ``to_f32`` -> Relu ``relu``; with
    ``bf16_output`` the bfloat16 tensor is a model output too."""
    nodes = [helper.make_node("Cast", ["x"], ["b"], name="to_bf16", to=TensorProto.BFLOAT16),
             helper.make_node("Cast", ["b"], ["f"], name="to_f32", to=TensorProto.FLOAT),
             helper.make_node("Relu", ["f"], ["y"], name="relu")]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])]
    if bf16_output:
        outputs.append(helper.make_tensor_value_info("b", TensorProto.BFLOAT16, [3]))
    graph = helper.make_graph(nodes, "bf16",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("mode", [DEFAULT, HIGH_PRECISION, FUSION_OFF,
                                  Mode(precision_mode="allow_mix_precision_bf16")],
                         ids=lambda m: m.name)
def test_a_bfloat16_intermediate_is_dumped_as_bf16_and_compares(cache, tmp_path, mode):
    model = bf16_model()
    backend = EmulatorBackend(cache)
    dump = backend.run(backend.convert(model, mode), {"x": X}, dump_dir=tmp_path / "dump")
    out = dump["to_bf16"].output(0)
    assert out.dtype == "bfloat16"
    np.testing.assert_array_equal(out.load(), BF)
    assert dump["to_f32"].inputs[0].dtype == "bfloat16"
    again = load_dump(tmp_path / "dump")  # read back from the files, as a device dump is
    assert again["to_bf16"].output(0).dtype == "bfloat16"
    np.testing.assert_array_equal(again["to_bf16"].output(0).load(), BF)
    result = compare_dumps(dump, golden_dump(model, {"x": X}, cache=cache))
    assert result.judge(threshold=0.99).passed
    assert "to_bf16" in result.coverage.compared


def test_plain_outputs_of_a_bfloat16_model_output(cache):
    backend = EmulatorBackend(cache)
    om = backend.convert(bf16_model(bf16_output=True), HIGH_PRECISION)
    out = backend.outputs(om, {"x": X})
    assert out["b"].dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(out["b"].astype(np.float32), BF)
    np.testing.assert_array_equal(out["y"], np.maximum(BF, 0))
