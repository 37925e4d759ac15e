"""The emulator's bfloat16 modes on a model of opset 12 or older: every emulated run failed in
onnxruntime (a bfloat16 Cast needs opset 13: PP-OCRv4 det and rec are opset 12, the mobile cls
11; H103), a crash with no verdict. Refused at conversion instead, with a command that converts
the model to opset 13; pasted, the converted file is checked in the mode."""
import subprocess
import sys

import pytest

TEST = '''
from pytest_ascend_accuracy import accuracy, Mode


@accuracy(threshold=0.9, modes=[Mode(precision_mode={MODE!r})])
def test_tiny(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs({MODEL!r}, seed=0)
    golden = golden_dump({MODEL!r}, inputs)
    check_accuracy(ascend_model({MODEL!r}).run(inputs), golden)
'''


def _opset12_model(path):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["mm"], name="mm"),
         helper.make_node("Relu", ["mm"], ["y"], name="relu")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], [w])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)]), str(path))


@pytest.mark.parametrize("mode", ["allow_fp32_to_bf16", "allow_mix_precision_bf16"])
def test_a_bf16_mode_on_an_opset_12_model_is_refused_with_a_command_that_converts_it(
        pytester, mode):
    pytester.mkdir("models")
    _opset12_model(pytester.path / "models" / "tiny.onnx")
    pytester.makepyfile(test_bf16=TEST.replace("{MODE!r}", repr(mode))
                        .replace("{MODEL!r}", repr("models/tiny.onnx")))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    text = " ".join(line.strip().lstrip("E").strip() for line in result.outlines)
    assert "INVALID_GRAPH" not in text
    head = (f"precision_mode={mode}: the emulator rounds to bfloat16 with Cast, which takes "
            f"bfloat16 from ONNX opset 13; model 'tiny' is opset 12 (real ATC converts it; the "
            f"emulator cannot): convert it to opset 13 with onnx's version converter and test "
            f"that file: ")
    assert head in text, text
    command = text.split(head, 1)[1].split('"')
    command = f'{command[0]}"{command[1]}"'
    assert command.startswith("python -c ")

    subprocess.run(command.replace("python", sys.executable, 1), shell=True, check=True,
                   cwd=pytester.path)
    pytester.makepyfile(test_bf16=TEST.replace("{MODE!r}", repr(mode))
                        .replace("{MODEL!r}", repr("models/tiny_opset13.onnx")))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
