"""``ascend-accuracy diagnose MODEL --aipp F --images I --reference MODULE:FN`` converts as the
model is deployed: step 5 passed, then the flow converted without the AIPP file on seeded
inputs, and its fix (``atc_args.txt``: ``--precision_mode=force_fp16``,
``--keep_dtype=fix/keep_dtype.cfg``) had no ``--insert_op_conf``: pasted into an atc command
it converted a model that takes no raw images. Now the flow's conversions take the file, its
AIPP input the raw images, the golden ``reference(image)`` (as the plugin's
``--accuracy-diagnose`` does), and the fix names the fix folder's copy of the file."""
import os
import re
from pathlib import Path

import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp, imagenet_reference, random_rgb
from pytest_ascend_accuracy.cli.app import EXIT_BAD_INPUT, main
from pytest_ascend_accuracy.testing import fake_atc

from .test_fix_folder_aipp_copy import image_overflow

PREP = "from pytest_ascend_accuracy.aipp.samples import imagenet_reference as preprocess\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("FAKE_ATC_FAIL", "FAKE_ATC_HANG", "FAKE_ATC_REJECT", "FAKE_ATC_CALLS",
                "FAKE_ATC_VERSION"):
        monkeypatch.delenv(var, raising=False)
    onnx.save(image_overflow(), "img.onnx")
    Path("camera.cfg").write_text(imagenet_aipp(src_hw=(4, 4)))
    Path("prep.py").write_text(PREP)
    np.save("frames.npy", random_rgb(2, 4, 4, seed=3))  # two frames, the model takes a batch of 1
    return tmp_path


def _diagnose(*extra):
    return main(["diagnose", "img.onnx", "--aipp", "camera.cfg", "--images", "frames.npy",
                 "--reference", "prep.py:preprocess", "--cache-dir", ".cache", *extra])


def test_the_flow_converts_with_the_aipp_file_and_its_fix_pastes(project, capsys):
    assert _diagnose("--out", "fix") == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "step 5 (pre-processing / AIPP): pre-processing check passed" in out
    assert "the flow ran on 1 of 2 image(s) of frames.npy (the model's batch)" in captured.err
    fix = next(line for line in out.splitlines() if line.startswith("  fix: mode "))
    assert fix.endswith("--keep_dtype=fix/keep_dtype.cfg --insert_op_conf=fix/camera.cfg"), fix
    args = Path("fix/atc_args.txt").read_text().split()
    assert "--insert_op_conf=fix/camera.cfg" in args, args
    assert Path("fix/camera.cfg").read_bytes() == Path("camera.cfg").read_bytes()
    # pasted into an atc command run where fix/ lies: the fake atc (real ATC's refusals) takes it
    assert fake_atc.main(["--model=img.onnx", "--framework=5", "--output=fixed",
                          "--soc_version=Ascend310P3", *args]) == 0
    # the printed mode, converted with the fix folder's AIPP copy and fed the raw frame, passes
    # against the golden of the reference pre-processing; the default conversion fails
    from pytest_ascend_accuracy import DEFAULT, keep_dtype
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy

    expr = re.search(r"in a test: modes=\[(.+?)\] \(from", out).group(1)
    mode = eval(expr, {"keep_dtype": keep_dtype})  # noqa: S307 - the printed expression
    frame = np.load("frames.npy")[:1]
    cache = Cache(Path(".paste"))
    golden = golden_dump("img.onnx", {"x": np.stack([imagenet_reference(f) for f in frame])},
                         cache=cache)
    backend = EmulatorBackend(cache)
    for m, passes in ((mode, True), (DEFAULT, False)):
        om = backend.convert("img.onnx", m, atc_options={"insert_op_conf": "fix/camera.cfg"})
        actual = backend.run(om, {"x": frame}, dump_dir=Path(f"dump-{m.name}"))
        if passes:
            assert_accuracy(actual, golden, 0.95)
        else:
            with pytest.raises(AccuracyFailure):
                assert_accuracy(actual, golden, 0.95)


def test_the_input_the_aipp_file_feeds_is_not_taken_from_inputs(project, capsys):
    np.save("x.npy", np.zeros((1, 3, 4, 4), np.float32))
    assert _diagnose("--inputs", "x=x.npy", "--out", "fix") == EXIT_BAD_INPUT
    assert ("error: --inputs: 'x' is the input the AIPP file feeds: its raw images come from "
            "--images (the golden's from --reference); give --inputs for the model's other "
            "inputs only") in capsys.readouterr().err
    assert not os.path.exists("fix") and not os.path.exists(".cache")  # before any conversion
