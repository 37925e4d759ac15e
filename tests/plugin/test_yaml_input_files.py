"""A YAML entry's ``inputs: {x: frames.npy}`` file is checked against the model's input at
collection (dtype, rank, fixed dims; ``input_shape:``'s where given), and the error names the
key, the file and what to do. A frames file of batch 4 for a batch-1 model failed the item when
it ran with ``inputs of 'mlp': input 'x' has shape [4, 16], the model declares [1, 16]``: no
file, no key, no fix. Each fix printed is applied as printed (the command run where pytest ran,
the YAML line written) and the suite then passes. The suite lives in a folder below where
pytest runs, so the command's paths (from there) and the YAML's (from the suite) differ."""
import re
import shlex
import subprocess
import sys

import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy.testing import models as tiny_models


def _dynamic_mlp():
    """passing_mlp with its batch dimension dynamic ('N')."""
    model = tiny_models.passing_mlp()
    for value in list(model.graph.input) + list(model.graph.output):
        value.type.tensor_type.shape.dim[0].dim_param = "N"
    return model


@pytest.fixture
def suite(pytester):
    folder = pytester.mkdir("suites")
    (folder / "models").mkdir()
    (folder / "data").mkdir()
    onnx.save(tiny_models.passing_mlp(), str(folder / "models" / "mlp.onnx"))  # x: [1, 16]
    onnx.save(_dynamic_mlp(), str(folder / "models" / "dyn.onnx"))  # x: [N, 16]
    rng = np.random.default_rng(0)
    np.save(folder / "data" / "frames.npy", rng.random((4, 16), dtype=np.float32))
    np.save(folder / "data" / "frames_f64.npy", rng.random((1, 16)))
    np.save(folder / "data" / "frames_3d.npy", rng.random((1, 4, 16), dtype=np.float32))

    def write(entry: str):
        (folder / "accuracy_suite.yaml").write_text(f"models:\n  - {entry}\n")
        return pytester.runpytest("-p", "no:cacheprovider")
    return write


def _error(result) -> str:
    lines = [line for line in result.outlines if line.startswith("invalid accuracy suite:")]
    assert lines, result.stdout.str()
    return lines[0]


def _run_command(pytester, error: str) -> None:
    """The ``python -c "..."`` the error prints, run where pytest ran."""
    command = shlex.split(re.search(r'python -c "[^"]+"', error).group(0))
    subprocess.run([sys.executable] + command[1:], cwd=pytester.path, check=True)


def test_a_batch_of_four_for_a_batch_one_model_names_the_file_and_keeps_the_first(
        pytester, suite):
    result = suite("{name: m, model: models/mlp.onnx, inputs: {x: data/frames.npy}}")
    error = _error(result)
    assert error == (
        "invalid accuracy suite: suites/accuracy_suite.yaml: models[0].inputs.x: data/frames.npy "
        "holds an array of shape [4, 16]; model mlp.onnx's input 'x' is [1, 16]: keep the "
        "first 1 of its 4: python -c \"import numpy as np; np.save('suites/data/frames_1.npy', "
        "np.load('suites/data/frames.npy')[:1])\", then write inputs: {x: data/frames_1.npy}")
    assert result.ret == 2  # refused at collection, before anything converts
    _run_command(pytester, error)
    frames = np.load(pytester.path / "suites" / "data" / "frames.npy")
    assert np.array_equal(np.load(pytester.path / "suites" / "data" / "frames_1.npy"),
                          frames[:1])
    fixed = suite("{name: m, model: models/mlp.onnx, inputs: {x: data/frames_1.npy}}")
    fixed.assert_outcomes(passed=1)


def test_float64_values_for_a_float32_input_are_saved_as_float32(pytester, suite):
    error = _error(suite("{name: m, model: models/mlp.onnx, inputs: {x: data/frames_f64.npy}}"))
    assert error.endswith(
        "models[0].inputs.x: data/frames_f64.npy holds float64 values; model mlp.onnx's input "
        "'x' is float32: save it as float32: python -c \"import numpy as np; np.save("
        "'suites/data/frames_f64_float32.npy', np.load('suites/data/frames_f64.npy')"
        ".astype('float32'))\", then write inputs: {x: data/frames_f64_float32.npy}")
    _run_command(pytester, error)
    suite("{name: m, model: models/mlp.onnx, inputs: {x: data/frames_f64_float32.npy}}"
          ).assert_outcomes(passed=1)


@pytest.mark.parametrize("apply", ["command", "input_shape"])
def test_a_file_against_the_entrys_input_shape_names_that_key_and_both_fixes(
        pytester, suite, apply):
    entry = "{name: m, model: models/dyn.onnx, inputs: {x: data/frames.npy}, input_shape: %s}"
    error = _error(suite(entry % "{x: [1, 16]}"))
    assert ("models[0].inputs.x: data/frames.npy holds an array of shape [4, 16]; "
            "models[0].input_shape.x says [1, 16]: keep the first 1 of its 4: python -c ") in error
    assert error.endswith("then write inputs: {x: data/frames_1.npy}; or convert at the file's "
                          "shape: input_shape: {x: [4, 16]}")
    if apply == "command":
        _run_command(pytester, error)
        fixed = suite("{name: m, model: models/dyn.onnx, inputs: {x: data/frames_1.npy}, "
                      "input_shape: {x: [1, 16]}}")
    else:
        fixed = suite(entry % re.search(r"input_shape: (\{.*\})$", error).group(1))
    fixed.assert_outcomes(passed=1)


def test_a_file_of_another_rank_says_what_to_save(suite):
    error = _error(suite("{name: m, model: models/mlp.onnx, inputs: {x: data/frames_3d.npy}}"))
    assert error.endswith(
        "models[0].inputs.x: data/frames_3d.npy holds an array of shape [1, 4, 16]; model "
        "mlp.onnx's input 'x' is [1, 16]: save an array of shape [1, 16] and dtype float32 with "
        "numpy.save, then write inputs: {x: <file>.npy}")


def test_a_file_the_dynamic_model_takes_at_its_shape_runs(suite):
    suite("{name: m, model: models/dyn.onnx, inputs: {x: data/frames.npy}}"
          ).assert_outcomes(passed=1)


def test_an_unreadable_file_is_refused_under_its_key(pytester, suite):
    (pytester.path / "suites" / "data" / "broken.npy").write_bytes(b"not an array")
    error = _error(suite("{name: m, model: models/mlp.onnx, inputs: {x: data/broken.npy}}"))
    assert error.startswith("invalid accuracy suite: suites/accuracy_suite.yaml: "
                            "models[0].inputs.x: data/broken.npy: "), error


def _masked_model(mask_type=onnx.TensorProto.BOOL):
    """y = x * float(m): a float32 input x and a mask input m, both [1, 4]."""
    from onnx import helper

    nodes = [helper.make_node("Cast", ["m"], ["mf"], to=onnx.TensorProto.FLOAT, name="cast_m"),
             helper.make_node("Mul", ["x", "mf"], ["y"], name="masked")]
    graph = helper.make_graph(
        nodes, "masked", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4]),
                          helper.make_tensor_value_info("m", mask_type, [1, 4])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _numpy_names(command: str):
    """The ``np.<name>`` attributes the printed ``python -c`` code reads."""
    import ast

    code = shlex.split(command)[2]
    return {node.attr for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id == "np"}


def test_a_uint8_mask_for_a_bool_input_is_cast_by_the_dtype_name(pytester, suite):
    """The cast printed ``.astype(np.bool)``: numpy 1.24 to 1.26 (pyproject allows >= 1.22)
    have no ``np.bool`` (AttributeError). The command reads numpy's save and load only."""
    folder = pytester.path / "suites"
    onnx.save(_masked_model(), str(folder / "models" / "masked.onnx"))
    np.save(folder / "data" / "x.npy", np.arange(4, dtype=np.float32).reshape(1, 4))
    np.save(folder / "data" / "mask.npy", np.array([[1, 0, 1, 0]], np.uint8))
    error = _error(suite("{model: models/masked.onnx, inputs: {x: data/x.npy, m: data/mask.npy}}"))
    command = re.search(r'python -c "[^"]+"', error).group(0)
    assert error.endswith(
        "models[0].inputs.m: data/mask.npy holds uint8 values; model masked.onnx's input 'm' is "
        "bool: save it as bool: python -c \"import numpy as np; np.save('suites/data/"
        "mask_bool.npy', np.load('suites/data/mask.npy').astype('bool'))\", then write inputs: "
        "{x: data/x.npy, m: data/mask_bool.npy}")
    assert _numpy_names(command) == {"save", "load"}
    _run_command(pytester, error)
    assert np.load(folder / "data" / "mask_bool.npy").tolist() == [[True, False, True, False]]
    suite("{model: models/masked.onnx, inputs: {x: data/x.npy, m: data/mask_bool.npy}}"
          ).assert_outcomes(passed=1)


def _cast_relu(elem_type):
    """y = relu(float(x)), x [1, 16] of ``elem_type``."""
    from onnx import helper

    nodes = [helper.make_node("Cast", ["x"], ["xf"], to=onnx.TensorProto.FLOAT, name="cast_x"),
             helper.make_node("Relu", ["xf"], ["y"], name="relu")]
    graph = helper.make_graph(
        nodes, "bf", [helper.make_tensor_value_info("x", elem_type, [1, 16])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 16])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_a_bfloat16_input_is_refused_saying_no_file_feeds_it_and_what_to_export(pytester, suite):
    """The error said "save it as bfloat16: ... .astype(np.bfloat16)": numpy has no bfloat16
    (AttributeError), and a bfloat16 file (raw bytes, '<V2') is refused, as onnxruntime takes no
    bfloat16 array. What it says now is applied: the model exported in float32, the float32 file
    kept, and the mode the device computes bfloat16 in written as printed."""
    folder = pytester.path / "suites"
    onnx.save(_cast_relu(onnx.TensorProto.BFLOAT16), str(folder / "models" / "bf.onnx"))
    np.save(folder / "data" / "x.npy", np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 16))
    error = _error(suite("{model: models/bf.onnx, inputs: {x: data/x.npy}}"))
    assert error.startswith(
        "invalid accuracy suite: suites/accuracy_suite.yaml: models[0].inputs.x: data/x.npy: "
        "model input 'x' is bfloat16: onnxruntime, which runs the golden model and the emulator, "
        "takes no bfloat16 array as an input"), error
    assert "export the model in float32 and pass float32 arrays" in error
    assert "np.bfloat16" not in error
    modes = re.search(r"YAML: (modes: \[\{precision_mode: \w+\}\])\)$", error).group(1)
    onnx.save(_cast_relu(onnx.TensorProto.FLOAT), str(folder / "models" / "bf.onnx"))
    suite("{model: models/bf.onnx, inputs: {x: data/x.npy}, %s}" % modes).assert_outcomes(
        passed=1)


def test_values_past_the_inputs_dtype_get_no_cast_to_paste(pytester, suite):
    # a trial: a float32 file with 1e5 for a float16 input was offered .astype('float16');
    # pasted, 1e5 became inf, and the test passed with every output +Inf on both sides
    big = np.full((1, 16), 1e300)  # float64 past float32's range
    np.save(pytester.path / "suites" / "data" / "big.npy", big)
    error = _error(suite("{name: m, model: models/mlp.onnx, inputs: {x: data/big.npy}}"))
    assert error.endswith(
        "models[0].inputs.x: data/big.npy holds float64 values; model mlp.onnx's input 'x' is "
        "float32: its values do not fit float32: values up to 1e+300, past float32's largest "
        "3.40282e+38; the model's input cannot hold them (the device would see other values), "
        "so save values float32 holds"), error
    assert "astype" not in error


def test_cast_losses_of_each_kind():
    from pytest_ascend_accuracy.plugin.yaml_inputs import _cast_loses

    import tempfile
    from pathlib import Path

    def loses(values, want):
        with tempfile.TemporaryDirectory() as tmp:
            np.save(Path(tmp) / "v.npy", np.asarray(values))
            return _cast_loses(Path(tmp) / "v.npy", np.asarray(values).dtype, np.dtype(want))

    assert loses([1.0, 1e5], "float16").startswith("values up to 100000, past float16's")
    assert loses([1.0, 6e4], "float16") == ""
    assert loses(np.array([1, 2**40], np.int64), "int32").startswith("values from 1 to")
    assert loses(np.array([0, 5], np.int64), "int32") == ""
    assert loses([0.5, 1.0], "int64") == "NaN, infinite or fractional values for an integer input"
    assert loses(np.array([0, 2], np.int64), "bool") == "1 value(s) other than 0 and 1"


def test_no_cast_check_for_a_string_or_complex_input():
    # a review: np.iinfo refused 'O' and 'c' and the suite's collection crashed
    from pytest_ascend_accuracy.plugin.yaml_inputs import _cast_loses

    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        np.save(Path(tmp) / "v.npy", np.arange(4))
        for want in ("complex64", "object"):
            assert _cast_loses(Path(tmp) / "v.npy", np.dtype("int64"), np.dtype(want)) == ""
