"""The emulator's bfloat16 modes on a model of opset 12 or older: every emulated run failed in
onnxruntime (a bfloat16 Cast needs opset 13: PP-OCRv4 det and rec are opset 12, the mobile cls
11; H103), a crash with no verdict. Refused at conversion instead, with a command that converts
the model to opset 13; pasted in a shell, whatever the path holds (H106: a quote in it broke
the command), the converted file is checked in the mode."""
import subprocess
import sys

import pytest

from pytest_ascend_accuracy.backends.emulator.bf16_opset import check_bf16_opset
from pytest_ascend_accuracy.core.modes import Mode
from pytest_ascend_accuracy.errors import ConfigError

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
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)]), str(path))
    return path


def _pasted(message: str, cwd) -> None:
    """The message's command, as a user pastes it into a shell."""
    command = message.split("python -c ", 1)[1]
    subprocess.run(f"{sys.executable} -c {command}", shell=True, check=True, cwd=cwd,
                   executable="/bin/sh")


@pytest.mark.parametrize("mode", ["allow_fp32_to_bf16", "allow_mix_precision_bf16"])
def test_a_bf16_mode_on_an_opset_12_model_is_refused_with_a_command_that_converts_it(
        pytester, mode):
    model = _opset12_model(pytester.path / "models" / "tiny.onnx")
    pytester.makepyfile(test_bf16=TEST.replace("{MODE!r}", repr(mode))
                        .replace("{MODEL!r}", repr("models/tiny.onnx")))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    text = " ".join(line.strip().lstrip("E").strip() for line in result.outlines)
    assert "INVALID_GRAPH" not in text
    head = (f"precision_mode={mode}: the emulator rounds to bfloat16 with Cast, which takes "
            f"bfloat16 from ONNX opset 13; model 'tiny' is opset 12 (real ATC converts it; the "
            f"emulator cannot): convert it to opset 13 with onnx's version converter and test "
            f"the file it writes, ")
    assert head in text and "_opset13.onnx': python -c 'import onnx;" in text, text

    with pytest.raises(ConfigError) as info:  # the same message, whole (the terminal wraps it)
        check_bf16_opset(str(model), Mode(precision_mode=mode), "tiny")
    _pasted(str(info.value), pytester.path)
    pytester.makepyfile(test_bf16=TEST.replace("{MODE!r}", repr(mode))
                        .replace("{MODEL!r}", repr("models/tiny_opset13.onnx")))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_command_pastes_whatever_the_path_holds(tmp_path):
    folder = tmp_path / "it's $HOME `x` dir"
    model = _opset12_model(folder / "m.onnx")
    with pytest.raises(ConfigError) as info:
        check_bf16_opset(str(model), Mode(precision_mode="allow_fp32_to_bf16"), "m")
    _pasted(str(info.value), tmp_path)
    assert (folder / "m_opset13.onnx").is_file()
