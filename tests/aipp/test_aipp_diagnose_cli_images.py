"""``ascend-accuracy diagnose --aipp``'s ``--images`` and printed paths (an AIPP trial, finding
10): one ``.npy`` of N frames was refused "not a directory" though ``check_preprocessing`` and a
YAML suite's ``{x: frames.npy}`` take such an array, and the corrected file was printed
absolute where pytest prints it relative."""
import numpy as np

from pytest_ascend_accuracy import cli
from pytest_ascend_accuracy.aipp.samples import imagenet_aipp, random_rgb

PREP = ("from pytest_ascend_accuracy.aipp.samples import imagenet_reference\n\n"
        "def preprocess(image):\n    return imagenet_reference(image)\n")


def _project(path, monkeypatch):
    monkeypatch.chdir(path)
    (path / "aipp").mkdir()
    good = imagenet_aipp(src_hw=(16, 16))
    (path / "aipp" / "swapped.cfg").write_text(good.replace(
        "input_format: RGB888_U8", "input_format: RGB888_U8\n    rbuv_swap_switch: true"))
    (path / "prep.py").write_text(PREP)
    np.save(path / "frames.npy", random_rgb(3, 16, 16, seed=2))
    return ["diagnose", "--aipp", "aipp/swapped.cfg", "--reference", "prep.py:preprocess"]


def test_one_npy_of_frames_is_taken_and_the_corrected_file_printed_relative(
        tmp_path, monkeypatch, capsys):
    argv = _project(tmp_path, monkeypatch)
    assert cli.main(argv + ["--images", "frames.npy"]) == 1
    out = capsys.readouterr().out
    assert "0 of 3 image(s) agree" in out and "rbuv_swap_switch: true -> false" in out
    assert "corrected AIPP file: aipp/swapped.corrected.cfg\n" in out


def test_images_that_are_neither_say_what_to_pass(tmp_path, monkeypatch, capsys):
    argv = _project(tmp_path, monkeypatch)
    assert cli.main(argv + ["--images", "frame.npy"]) == 2
    err = capsys.readouterr().err
    assert ("frame.npy: --images: no such directory or file (closest: frames.npy): give a "
            "directory of .npy images (one image each, HWC uint8; NV12 rows for YUV420SP_U8) or "
            "one .npy of N images") in err
    np.save(tmp_path / "floats.npy", np.zeros((1, 16, 16, 3), np.float32))
    assert cli.main(argv + ["--images", "floats.npy"]) == 2
    assert "floats.npy: --images: not raw images: AIPP reads uint8 bytes" in capsys.readouterr().err
