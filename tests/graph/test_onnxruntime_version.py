"""graph.onnx_graph.require_onnxruntime: an onnxruntime older than 1.21 is refused before any
run, with the reasons (measured in venvs of older versions, docs/architecture.md) and the
command that installs one that works."""
import pytest

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph import onnx_graph, onnxruntime_version

ort = pytest.importorskip("onnxruntime")


@pytest.mark.parametrize("version", ["1.16.0", "1.17.3", "1.20.1"])
def test_an_older_onnxruntime_is_refused_with_why_and_what_to_install(monkeypatch, version):
    monkeypatch.setattr(onnxruntime_version, "_ORT_CHECKED", [])
    monkeypatch.setattr(ort, "__version__", version)
    with pytest.raises(ConfigError) as info:
        onnx_graph.session_options()
    text = str(info.value)
    assert text.startswith(f"onnxruntime: version {version} is installed")
    assert "onnxruntime#17565" in text and "BatchNormalization" in text
    command = text.rsplit("pip install ", 1)[1]
    assert command == "'onnxruntime>=1.21'"
    from packaging.requirements import Requirement  # the advice, as pip would read it

    requirement = Requirement(command.strip("'"))
    assert not requirement.specifier.contains(version)
    assert requirement.specifier.contains("1.21.0")


def test_the_installed_onnxruntime_passes_and_is_checked_once(monkeypatch):
    monkeypatch.setattr(onnxruntime_version, "_ORT_CHECKED", [])
    assert onnxruntime_version.require_onnxruntime() is ort
    monkeypatch.setattr(ort, "__version__", "1.16.0")  # checked already: not again
    assert onnx_graph.session_options() is not None
