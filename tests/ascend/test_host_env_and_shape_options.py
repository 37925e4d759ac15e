"""ATC options a CI trial on the fakes found mishandled: ``--host_env_os``/``--host_env_cpu``
were accepted as numerically neutral, though ATC then names the .om ``<output>_<os>_<cpu>.om``
(CANN's --host_env_os/--host_env_cpu pages) and the backend, expecting ``<output>.om``, failed
("ATC reported success ... but wrote no two_outputs.om"); a test passing on the emulator could
never pass on an NPU. And ``input_shape`` given among the library's ``atc_options``, which the
command builder takes, was refused earlier as "nothing gives its size"."""
import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy.backends.ascend.atc_command import build_atc_command
from pytest_ascend_accuracy.core.modes import DEFAULT
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.testing import models as tiny_models

REFUSAL = ("builds the .om for another host (ATC then names the file <output>_<os>_<cpu>.om, e.g. "
           "model_linux_aarch64.om); a check converts and runs the model on this machine, so "
           "leave it out")


@pytest.mark.parametrize("name", ["host_env_os", "host_env_cpu"])
def test_the_command_builder_refuses_host_env_options(name):
    with pytest.raises(ConfigError) as info:
        build_atc_command("/opt/atc", "/m/tiny.onnx", DEFAULT, output_prefix="tiny",
                          soc_version="Ascend310P3", atc_options={name: "linux"})
    assert str(info.value) == f"atc_options: ATC option {name}=... {REFUSAL}"


@pytest.mark.parametrize("name", ["host_env_os", "host_env_cpu"])
def test_the_plugin_refuses_host_env_options_on_the_emulator_too(pytester, name):
    """Refused where the test is written, on the laptop's emulator, not first on the NPU."""
    onnx.save(tiny_models.passing_mlp(), str(pytester.path / "mlp.onnx"))
    pytester.makepyfile(f"""
        def test_m(ascend_model):
            ascend_model("mlp.onnx", {name}="x86_64")
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"*ATC option {name}=... builds the .om for another host*"])


def test_an_input_shape_among_the_atc_options_gives_the_sizes(tmp_path, monkeypatch):
    from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.testing.fake_ascend import use_fake_ascend

    use_fake_ascend(monkeypatch, tmp_path / "fake", device_count=1)
    model = tiny_models.passing_mlp()
    for value in (model.graph.input[0], model.graph.output[0]):  # batch N
        value.type.tensor_type.shape.dim[0].dim_param = "N"
    path = tmp_path / "dyn.onnx"
    onnx.save(model, str(path))
    backend = AscendBackend(Cache(tmp_path / "cache"), device_id=0, progress=None)
    converted = backend.convert(path, atc_options={"input_shape": "x:3,16"})
    assert "--input_shape=x:3,16" in converted.info["atc_command"]
    out = backend.outputs(converted, {"x": np.ones((3, 16), np.float32)})
    assert next(iter(out.values())).shape[0] == 3


def test_the_emulator_takes_an_input_shape_among_the_atc_options_too(tmp_path):
    """A review: the ascend backend took it (2886651), the emulator said 'nothing gives its
    size': one library call, two behaviours."""
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    model = tiny_models.passing_mlp()
    for value in (model.graph.input[0], model.graph.output[0]):
        value.type.tensor_type.shape.dim[0].dim_param = "N"
    path = tmp_path / "dyn.onnx"
    onnx.save(model, str(path))
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    converted = backend.convert(path, atc_options={"input_shape": "x:3,16"})
    out = backend.outputs(converted, {"x": np.ones((3, 16), np.float32)})
    assert next(iter(out.values())).shape[0] == 3
    with pytest.raises(ConfigError, match="input_shape given twice"):  # as the ascend backend
        backend.convert(path, input_shape="x:3,16", atc_options={"input_shape": "x:5,16"})


@pytest.mark.parametrize("options", [{"input_shape": "x:3,16", "--input_shape": "x:5,16"},
                                     {"--input_shape": "x:5,16", "input_shape": "x:3,16"},
                                     {"log": "error", "--log": "info"}])
@pytest.mark.parametrize("backend_name", ["emulator", "ascend"])
def test_an_option_under_two_spellings_is_refused_by_both_backends(
        tmp_path, monkeypatch, options, backend_name):
    """A review: the emulator converted at one ``input_shape`` and wrote both on its command
    line (ATC would get --input_shape twice); the ascend backend refused, saying "argument and
    atc option" of a call that gave no argument. Now both refuse, naming the two spellings."""
    from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.testing.fake_ascend import use_fake_ascend

    model = tiny_models.passing_mlp()
    for value in (model.graph.input[0], model.graph.output[0]):
        value.type.tensor_type.shape.dim[0].dim_param = "N"
    path = tmp_path / "dyn.onnx"
    onnx.save(model, str(path))
    if backend_name == "ascend":
        use_fake_ascend(monkeypatch, tmp_path / "fake", device_count=1)
        backend = AscendBackend(Cache(tmp_path / "cache"), device_id=0, progress=None)
    else:
        backend = EmulatorBackend(Cache(tmp_path / "cache"))
    first, second = list(options)
    name = first.lstrip("-")
    with pytest.raises(ConfigError) as info:
        backend.convert(path, input_shape=None if name == "input_shape" else "x:3,16",
                        atc_options=dict(options))
    assert str(info.value) == (f"atc_options: --{name} given twice (as {first!r} and "
                               f"{second!r}); keep one")
