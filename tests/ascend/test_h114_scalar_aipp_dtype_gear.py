"""H114's Ascend backend findings, against the FAKE toolkit and runtimes:

- a scalar (0-d) input was written ``sr:`` in --input_shape, which CANN 6.0's ATC refuses
  (E10002 "can not be empty"; silero_vad's ``sr``): it is left out, and the fake refuses
  ``sr:`` on a toolkit before 8.0 as GE ParseInputShape does;
- an AIPP file with an input that is not 4-D derived --input_format=ND, which ATC refuses beside
  --insert_op_conf: NCHW is derived there, and the fake refuses ND with an AIPP file;
- the runtime checked byte counts only: magika's int32 ``bytes`` fed as float32 ran, int64 was
  told to convert with another input_shape, a 0-d input printed ``[1]``;
- a gear option on the library path reached ATC and was read as an option the toolkit may not
  know: it is refused up front with the plugin's words.
"""
import subprocess

import numpy as np
import pytest

from pytest_ascend_accuracy.core.atc_option_check import GEAR_REFUSAL
from pytest_ascend_accuracy.errors import BackendError, ConfigError, ConversionError

AIPP_CFG = """aipp_op {
  aipp_mode: static
  input_format: RGB888_U8
  src_image_size_w: 16
  src_image_size_h: 16
}
"""


def _save(model, path):
    import onnx

    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def scalar_model(path):
    """x float [N, 4] and a 0-d int64 ``sr`` (silero_vad's layout): y = x * float(sr)."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Cast", ["sr"], ["srf"], name="cast", to=TensorProto.FLOAT),
         helper.make_node("Mul", ["x", "srf"], ["y"], name="mul")], "scalar",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4]),
         helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])])
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def mixed_model(path):
    """A 4-D image ``img`` [1, 3, 16, 16] and a 2-D ``scale`` [1, 3]: y = img * scale."""
    from onnx import TensorProto, helper, numpy_helper

    shape = numpy_helper.from_array(np.array([1, 3, 1, 1], np.int64), "shape")
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["scale", "shape"], ["s4"], name="reshape"),
         helper.make_node("Mul", ["img", "s4"], ["y"], name="mul")], "mixed",
        [helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 3, 16, 16]),
         helper.make_tensor_value_info("scale", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 16, 16])],
        initializer=[shape])
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def int_model(path):
    """magika's input layout: ``bytes`` int32 [1, 8] -> y = float(bytes)."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Cast", ["bytes"], ["y"], name="cast", to=TensorProto.FLOAT)], "ints",
        [helper.make_tensor_value_info("bytes", TensorProto.INT32, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])])
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def backend(monkeypatch, tmp_path, **kw):
    from pytest_ascend_accuracy.backends.ascend import AscendBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.testing.fake_ascend import use_fake_ascend

    runtime = kw.pop("runtime", None)
    fakes = use_fake_ascend(monkeypatch, tmp_path / "fake", **kw)
    return AscendBackend(Cache(tmp_path / "cache"), progress=None, runtime=runtime), fakes


def run_atc(toolkit, cwd, *args):
    return subprocess.run([str(toolkit.atc), "--framework=5", "--output=m",
                           "--soc_version=Ascend310P3", *args], cwd=cwd, capture_output=True,
                          text=True)


# -- 1: a scalar input ----------------------------------------------------------------------------
@pytest.mark.parametrize("version", ["6.0.1", "8.0.RC2"])
def test_a_scalar_input_gets_no_input_shape_entry_and_converts(monkeypatch, tmp_path, version):
    be, _ = backend(monkeypatch, tmp_path, toolkit_version=version)
    model = scalar_model(tmp_path / "scalar.onnx")
    assert be.atc_command(model, input_shape={"x": (1, 4)}).option("input_shape") == "x:1,4"
    converted = be.convert(model, input_shape={"x": (1, 4)})
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    out = be.outputs(converted, {"x": x, "sr": np.array(16000, np.int64)})
    np.testing.assert_array_equal(out["y"], x * 16000)


def test_the_fake_atc_refuses_an_empty_entry_before_8_0_as_ge_does(monkeypatch, tmp_path):
    """CANN 6.0's GE ParseInputShape: E10002 with reason "can not be empty" (its 6.0.1 error
    page's text); 8.0.RC2's pages take ``sr:`` for a scalar."""
    _, old = backend(monkeypatch, tmp_path / "old", toolkit_version="6.0.1")
    model = scalar_model(tmp_path / "scalar.onnx")
    done = run_atc(old.toolkit, tmp_path, f"--model={model}", "--input_shape=x:1,4;sr:")
    assert done.returncode == 255
    assert ('E10002: Value [sr:] for parameter [--input_shape] is invalid. Reason: can not be '
            'empty. The value must be formatted as ["input_name1:n1,c1,h1,w1"].') in done.stdout
    assert "Solution: The valid format is [input_name1:n1,c1,h1,w1;" in done.stdout
    done = run_atc(old.toolkit, tmp_path, f"--model={model}", "--input_shape=x:1,4")
    assert done.returncode == 0, done.stdout
    _, new = backend(monkeypatch, tmp_path / "new", toolkit_version="8.0.RC2")
    done = run_atc(new.toolkit, tmp_path, f"--model={model}", "--input_shape=x:1,4;sr:")
    assert done.returncode == 0, done.stdout


# -- 3: --input_format with an AIPP file -----------------------------------------------------
def test_an_aipp_conversion_with_a_2d_input_declares_nchw(monkeypatch, tmp_path):
    be, fakes = backend(monkeypatch, tmp_path)
    model = mixed_model(tmp_path / "mixed.onnx")
    cfg = tmp_path / "aipp.cfg"
    cfg.write_text(AIPP_CFG)
    command = be.atc_command(model, atc_options={"insert_op_conf": str(cfg)})
    assert command.option("input_format") == "NCHW"
    be.convert(model, atc_options={"insert_op_conf": str(cfg)})  # the fake takes it
    assert be.atc_command(model).option("input_format") == "ND"  # without AIPP: as before
    done = run_atc(fakes.toolkit, tmp_path, f"--model={model}", "--input_format=ND",
                   f"--insert_op_conf={cfg}")
    assert done.returncode == 255
    assert "E10001: Value [ND] for parameter [--input_format] is invalid." in done.stdout


# -- 4: dtypes at run time ---------------------------------------------------------------------
@pytest.mark.parametrize("flavor", ["acl", "ais_bench"])
def test_a_wrong_dtype_is_refused_naming_both_and_the_advice_works(monkeypatch, tmp_path, flavor):
    runtime = "ais_bench" if flavor == "ais_bench" else None
    be, _ = backend(monkeypatch, tmp_path, flavor=flavor, runtime=runtime)
    be._soc = "Ascend310P3"  # (ais_bench reports no chip)
    converted = be.convert(int_model(tmp_path / "ints.onnx"))
    data = np.arange(8).reshape(1, 8)
    for given in (data.astype(np.float32), data.astype(np.int64)):  # same bytes; twice as many
        with pytest.raises(BackendError) as info:
            be.outputs(converted, {"bytes": given})
        text = str(info.value)
        assert text.startswith(f"input 'bytes': {given.dtype.name} [1, 8] given, but the "
                               f"converted model takes int32 [1, 8]: pass it as int32, e.g. "
                               f"numpy.asarray(x, dtype=\"int32\")"), text
        assert "input_shape" not in text
        x = given  # the advice, pasted
        fixed = eval(text.split("e.g. ", 1)[1], {"numpy": np, "x": x})
        np.testing.assert_array_equal(be.outputs(converted, {"bytes": fixed})["y"], data)


def test_a_0d_input_is_printed_as_a_scalar(monkeypatch, tmp_path):
    be, _ = backend(monkeypatch, tmp_path)
    converted = be.convert(scalar_model(tmp_path / "scalar.onnx"), input_shape={"x": (1, 4)})
    x = np.zeros((1, 4), np.float32)
    with pytest.raises(BackendError, match=r"^input 'sr': int32 \[\] given, but the converted "
                                           r"model takes int64 \[\]: pass it as int64"):
        be.outputs(converted, {"x": x, "sr": np.array(16000, np.int32)})
    with pytest.raises(BackendError, match=r"^input 'x': float32 \[1, 2\] given \(8 bytes\), but "
                                           r"the converted model takes float32 \[1, 4\] \(16 "
                                           r"bytes\): convert with input_shape matching the data"):
        be.outputs(converted, {"x": x[:, :2], "sr": np.array(16000)})


# -- 6a: gear options on the library path ------------------------------------------------------
def test_a_gear_option_is_refused_before_atc_runs(monkeypatch, tmp_path):
    be, fakes = backend(monkeypatch, tmp_path)
    model = int_model(tmp_path / "ints.onnx")
    with pytest.raises(ConfigError) as info:
        be.convert(model, input_shape={"bytes": (1, 8)},
                   atc_options={"dynamic_batch_size": "1,2,4"})
    assert str(info.value) == "atc_options: " + GEAR_REFUSAL.format(
        name="dynamic_batch_size", value="1,2,4")
    assert not isinstance(info.value, ConversionError)
    assert not fakes.atc_calls.exists()  # ATC never ran
