"""``ascend-accuracy diagnose``, ``dataset`` and ``compare`` name the closest real files of a
misspelled model or dump path ("no such model file" alone, though the folder held the right
one), and ``core.closest_paths`` picks them."""
import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy.cli.app import EXIT_BAD_INPUT, main
from pytest_ascend_accuracy.core.closest_paths import closest_in_folder
from pytest_ascend_accuracy.testing import models as tiny_models


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    onnx.save(tiny_models.passing_mlp(), "models/passing_mlp.onnx")
    (tmp_path / "samples").mkdir()
    np.savez("samples/0.npz", x=np.zeros((1, 16), np.float32))
    return tmp_path


def _closest(err):
    return err.rsplit("(closest: ", 1)[1].split(")", 1)[0]


@pytest.mark.parametrize("command", [["diagnose"], ["dataset", "--metric", "agreement"]])
def test_a_misspelled_model_names_the_closest_and_it_runs(project, capsys, command):
    args = [*command, "--cache-dir", ".cache"]
    if command[0] == "dataset":
        args = ["dataset", "MODEL", "samples", *command[1:], "--cache-dir", ".cache"]
    else:
        args = ["diagnose", "MODEL", "--cache-dir", ".cache"]
    assert main([a.replace("MODEL", "models/pasing_mlp.onnx") for a in args]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "models/pasing_mlp.onnx: no such model file (closest: " in err
    model = _closest(err)
    assert model == "models/passing_mlp.onnx"
    assert main([a.replace("MODEL", model) for a in args]) == 0


def test_a_misspelled_dump_names_the_closest(project, capsys):
    (project / "dumps" / "golden").mkdir(parents=True)
    assert main(["compare", "dumps/goldn", "dumps/golden"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "dumps/goldn: no such file or directory (closest: dumps/golden)" in err
    assert main(["compare", "dumps/goldn/", "dumps/golden"]) == EXIT_BAD_INPUT  # a folder's "/"
    assert "(closest: dumps/golden)" in capsys.readouterr().err


def test_closest_in_folder_by_kind_and_suffix(tmp_path):
    (tmp_path / "model.onnx").write_bytes(b"")
    (tmp_path / "model.json").write_bytes(b"")
    (tmp_path / "modeldir").mkdir()
    assert closest_in_folder(tmp_path / "modl.onnx", False, "x/modl.onnx", (".onnx",)) == (
        " (closest: x/model.onnx)")
    assert closest_in_folder(tmp_path / "modl", True, "modl") == " (closest: modeldir)"
    assert closest_in_folder(tmp_path / "model", None, "model", None) == (
        " (closest: modeldir, model.onnx, model.json)")
    assert closest_in_folder(tmp_path / "zzz", None, "zzz", None) == ""
    (tmp_path / "overflow.onnx").write_bytes(b"")  # the shared suffix is no likeness
    assert closest_in_folder(tmp_path / "nope.onnx", False, "nope.onnx", (".onnx",)) == ""
    assert closest_in_folder(tmp_path / "overflw.onnx", False, "overflw.onnx", (".onnx",)) == (
        " (closest: overflow.onnx)")
    assert closest_in_folder(tmp_path / "nope" / "model.onnx", False) == ""


def test_an_aipp_file_a_reference_module_and_a_saved_result_name_their_closest(project):
    """diagnose --aipp, --reference/--metric/--postprocess FILE.py:FN and judge RESULT said
    "no such file" alone (H95)."""
    from pytest_ascend_accuracy.aipp.config import read_aipp_config
    from pytest_ascend_accuracy.aipp.user_files import load_reference
    from pytest_ascend_accuracy.compare.result import CompareResult
    from pytest_ascend_accuracy.errors import AscendAccuracyError

    (project / "aipp").mkdir()
    (project / "aipp" / "camera.cfg").write_text("aipp_op {\n aipp_mode: static\n}\n")
    (project / "tests").mkdir()
    (project / "tests" / "preprocessing.py").write_text("def prep(image):\n    return image\n")
    (project / "rep").mkdir()
    (project / "rep" / "compare.json").write_text("{}")
    for call, near in ((lambda: read_aipp_config("aipp/camra.cfg"), "aipp/camera.cfg"),
                       (lambda: load_reference("tests/preprocesing.py:prep"),
                        "tests/preprocessing.py"),
                       (lambda: CompareResult.load("rep/compar.json"), "rep/compare.json")):
        with pytest.raises(AscendAccuracyError) as e:
            call()
        assert str(e.value).endswith(f"(closest: {near})"), str(e.value)
