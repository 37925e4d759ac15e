"""``--mode '{extra: {insert_op_conf: F}}'`` of ``ascend-accuracy diagnose`` and ``dataset`` is
refused with the command line's own fix: it said "pass the AIPP file as aipp=\\"aipp.cfg\\"", the
Python spelling, which no command line takes. diagnose names ``--aipp FILE --images ...
--reference ...``, and that, filled in, runs the AIPP flow; dataset, which runs no AIPP, names
the diagnose command that checks the file."""
import re
import shlex

import numpy as np
import onnx

from pytest_ascend_accuracy.cli.app import EXIT_BAD_INPUT, main

from .test_cli_diagnose_aipp_flow import project  # noqa: F401  (the fixture)

FILLED = {"IMAGES": "frames.npy", "MODULE:FN": "prep.py:preprocess"}  # what the user knows


def _fill(text):
    for placeholder, value in FILLED.items():
        text = text.replace(placeholder, value)
    return text


def test_diagnose_names_its_own_aipp_options_and_they_run(project, capsys):  # noqa: F811
    assert main(["diagnose", "img.onnx", "--mode", "{extra: {insert_op_conf: camera.cfg}}",
                 "--cache-dir", ".cache"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert 'aipp="aipp.cfg"' not in err
    options = re.search(r"give the AIPP file as (--aipp camera\.cfg) with (--images IMAGES) and "
                        r"(--reference MODULE:FN) \(IMAGES: a folder of raw \.npy images, or one "
                        r"\.npy of them;", err).groups()
    pasted = shlex.split(_fill(" ".join(options)))
    assert main(["diagnose", "img.onnx", *pasted, "--cache-dir", ".cache"]) == 0
    assert "step 5 (pre-processing / AIPP): pre-processing check passed" in capsys.readouterr().out


def test_dataset_names_the_diagnose_command_that_checks_the_file(project, capsys):  # noqa: F811
    model = onnx.load("img.onnx")
    (project / "samples").mkdir()
    feed = {i.name: np.zeros([d.dim_value for d in i.type.tensor_type.shape.dim], np.float32)
            for i in model.graph.input}
    np.savez(project / "samples" / "0.npz", **feed)
    assert main(["dataset", "img.onnx", "samples", "--metric", "agreement", "--mode",
                 "{extra: {insert_op_conf: camera.cfg}}"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    command = re.search(r"check the AIPP file with (ascend-accuracy diagnose img\.onnx --aipp "
                        r"camera\.cfg --images IMAGES --reference MODULE:FN) \(IMAGES",
                        err).group(1)
    argv = shlex.split(_fill(command))
    assert argv[0] == "ascend-accuracy"
    assert main([*argv[1:], "--cache-dir", ".cache"]) == 0
    assert "step 5 (pre-processing / AIPP): pre-processing check passed" in capsys.readouterr().out


def test_check_preprocessing_names_a_misspelled_argument(pytester):
    """``check_preprocessing(om, images, referense=...)`` raised Python's TypeError (H98)."""
    pytester.makepyfile("""
        def test_p(check_preprocessing):
            check_preprocessing(None, [], referense=None)
    """)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines(["*check_preprocessing: unknown argument 'referense'; closest: "
                              "'reference'; it takes *"])
