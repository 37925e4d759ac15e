"""``ascend-accuracy diagnose`` names the file behind a wrong input or image (a user trial: the
errors named only the input, or the image's position)."""
import numpy as np
import pytest

from pytest_ascend_accuracy.cli import app as cli

pytest.importorskip("onnx")


@pytest.fixture
def mlp(tmp_path):
    import onnx

    from pytest_ascend_accuracy.testing import models

    path = tmp_path / "mlp.onnx"
    onnx.save(models.passing_mlp(), str(path))
    return str(path)


def test_an_input_file_of_the_wrong_shape_is_named(mlp, tmp_path, capsys):
    bad = tmp_path / "x_bad.npy"
    np.save(bad, np.zeros((1, 3, 8, 8), np.float32))
    assert cli.main(["diagnose", mlp, "--inputs", f"x={bad}"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"ascend-accuracy: error: --inputs {bad}: input 'x' has shape [1, 3, 8, 8], the model "
        "declares [1, 16]")


def test_an_npz_holding_an_unknown_input_is_named(mlp, tmp_path, capsys):
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, y=np.zeros((1, 16), np.float32))
    assert cli.main(["diagnose", mlp, "--inputs", str(wrong)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"ascend-accuracy: error: --inputs {wrong}: no model input named 'y'; inputs: x")


def test_an_image_that_is_not_raw_bytes_is_named(tmp_path, capsys):
    images = tmp_path / "imgs"
    images.mkdir()
    np.save(images / "a.npy", np.zeros((8, 8, 3), np.uint8))
    np.save(images / "b.npy", np.zeros((8, 8, 3), np.float32))
    cfg = tmp_path / "a.cfg"
    cfg.write_text("aipp_op {\n  aipp_mode : static\n  input_format : RGB888_U8\n}\n")
    (tmp_path / "ref.py").write_text("def pre(img):\n    return img.transpose(2, 0, 1) * 1.0\n")
    assert cli.main(["diagnose", "--aipp", str(cfg), "--images", str(images),
                     "--reference", f"{tmp_path / 'ref.py'}:pre"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"ascend-accuracy: error: {images / 'b.npy'}: --images: not a raw image: AIPP reads uint8 "
        "bytes (HWC; NV12 rows for YUV420SP_U8), this file holds float32")


@pytest.mark.parametrize("option", [["--device", "3"]])
def test_ascend_only_options_are_refused_on_the_emulator(mlp, capsys, option):
    """``diagnose --device 3`` on the emulator ran as if not given (``--soc-version`` picks the
    emulator's Cube kernels now: tests/emulator/test_soc_cube_kernels.py)."""
    assert cli.main(["diagnose", mlp, *option]) == 2
    assert capsys.readouterr().err.strip() == (
        f"ascend-accuracy: error: {option[0]}: given with the emulator backend, where it changes "
        "nothing: it applies to --backend ascend only (the emulator runs on this machine's CPU)")
