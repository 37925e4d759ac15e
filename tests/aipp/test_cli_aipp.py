"""``ascend-accuracy diagnose --aipp F --images DIR --reference MODULE:FN`` (step 5 from the shell)."""
import numpy as np

from pytest_ascend_accuracy import cli
from pytest_ascend_accuracy.aipp.samples import imagenet_aipp, nv12_reference, random_nv12


def _project(tmp_path, aipp_text):
    images = tmp_path / "images"
    images.mkdir()
    for i, img in enumerate(random_nv12(2, 8, 12, seed=5)):
        np.save(images / f"frame{i}.npy", img)
    (tmp_path / "prep.py").write_text(
        "from pytest_ascend_accuracy.aipp.samples import nv12_reference\n\n"
        "def preprocess(image):\n    return nv12_reference(image)\n")
    (tmp_path / "aipp.cfg").write_text(aipp_text)
    return ["diagnose", "--aipp", str(tmp_path / "aipp.cfg"), "--images", str(images),
            "--reference", f"{tmp_path / 'prep.py'}:preprocess"]


def test_wrong_csc_names_fields_and_writes_the_corrected_file(tmp_path, capsys):
    text = imagenet_aipp("YUV420SP_U8", csc=True).replace("matrix_r0c2: 409", "matrix_r0c2: 459")
    argv = _project(tmp_path, text)
    assert cli.main(argv + ["--out", str(tmp_path / "out")]) == 1
    out = capsys.readouterr().out
    assert "step 5 (pre-processing / AIPP): pre-processing check FAILED" in out
    assert "matrix_r0c2: 459 -> 409" in out
    fixed = tmp_path / "out" / "aipp.corrected.cfg"
    assert "matrix_r0c2: 409" in fixed.read_text()
    argv[2] = str(fixed)
    assert cli.main(argv) == 0
    assert "pre-processing check passed" in capsys.readouterr().out
    assert nv12_reference  # the reference module imports it by path


def test_partial_options_and_bad_reference_are_usage_errors(tmp_path, capsys):
    argv = _project(tmp_path, imagenet_aipp("YUV420SP_U8", csc=True))
    assert cli.main(argv[:5]) == 2
    assert "needs --aipp, --images and --reference; missing --reference" in capsys.readouterr().err
    assert cli.main(argv[:-1] + [f"{tmp_path / 'prep.py'}:preprocesss"]) == 2
    assert "did you mean preprocess" in capsys.readouterr().err
    assert cli.main(argv[:4] + [str(tmp_path)] + argv[5:]) == 2
    assert "no .npy image files" in capsys.readouterr().err
