"""The first-op hint of a model converted with an AIPP file ended in ``ascend-accuracy diagnose
--aipp F --images DIR --reference MODULE:FN``, every argument a placeholder, though the plugin
knew the file. It now points to --accuracy-diagnose (whose command runs pasted: commit 4586d42)
and names the real AIPP file, relative to where pytest ran, with what to fill in for the images
and the reference function; both are applied here as the hint words them."""
import os
import re
import shlex

import numpy as np

from pytest_ascend_accuracy import cli

TEST = '''
import numpy as np
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb

RAW = random_rgb(1, 16, 16, seed=3)

def test_std_file(ascend_model, golden_dump, check_accuracy):
    om = ascend_model("models/net.onnx", aipp="aipp/std.cfg")
    golden = golden_dump("models/net.onnx", {"x": np.stack([imagenet_reference(i) for i in RAW])})
    check_accuracy(om.run({"x": RAW}), golden)
'''


def _std_file() -> str:
    """The ImageNet AIPP file with each var_reci_chn written as the std, not 1/std."""
    from pytest_ascend_accuracy.aipp.samples import IMAGENET_STD, imagenet_aipp

    text = imagenet_aipp(src_hw=(16, 16))
    for c, std in enumerate(IMAGENET_STD):
        text = re.sub(rf"var_reci_chn_{c}: \S+", f"var_reci_chn_{c}: {std}", text)
    return text


def test_the_aipp_hint_names_the_file_and_its_command_runs_filled_in_as_it_says(
        aipp_project, capsys):
    (aipp_project.path / "aipp").mkdir()
    (aipp_project.path / "aipp" / "std.cfg").write_text(_std_file())
    aipp_project.makepyfile(test_std=TEST)
    failed = aipp_project.runpytest("-q", "-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    first = "next step: the first operator after AIPP"
    hint = next(x for x in failed.stdout.lines if x.startswith(first))
    assert "rerun with --accuracy-diagnose: " in hint and " F " not in hint, hint
    command = re.search(r"from the shell: (ascend-accuracy diagnose .+?), where", hint).group(1)
    assert command == ("ascend-accuracy diagnose --aipp aipp/std.cfg --images FRAMES.npy "
                       "--reference MODULE:FN"), hint
    assert ("where FRAMES.npy is one .npy of the raw uint8 images the test ran (N x H x W x C; "
            "NV12: N x H*3/2 x W) and MODULE:FN your pre-processing function (FN(image) -> "
            "float CHW; path/to/file.py:FN also works)") in hint
    _runs_filled_in(aipp_project, command, capsys)
    # and the rerun it points to first names the same field
    diagnosed = aipp_project.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-diagnose")
    diagnosed.assert_outcomes(failed=1)
    assert "var_reci_chn_0: 58.395 -> 0.017125" in diagnosed.stdout.str()


def test_without_an_atc_command_line_the_hint_says_what_f_is():
    from types import SimpleNamespace

    from pytest_ascend_accuracy.report.hints import aipp_advice, _aipp_file

    assert _aipp_file(SimpleNamespace(meta={}), None) == ""
    assert ("--aipp F --images FRAMES.npy (F: the AIPP file the model was converted with, ATC's "
            "--insert_op_conf) --reference MODULE:FN") in aipp_advice("")
    actual = SimpleNamespace(meta={"atc_cmdline": "atc --model=m.onnx "
                                                  "--insert_op_conf='/x/my aipp.cfg'"})
    assert _aipp_file(actual, None) == "/x/my aipp.cfg"
    here = os.path.join(os.getcwd(), "aipp", "my aipp.cfg")  # shown relative, shell-quoted
    assert "--aipp 'aipp/my aipp.cfg' --images" in aipp_advice(here)


def test_an_aipp_file_under_a_folder_with_a_space_is_named_whole_and_runs_pasted(
        aipp_project, capsys):
    """A project under ``My Projects/示例 proj``: the om json records ATC's command line
    unquoted (as ATC does), and the hint named ``--aipp My`` of the AIPP file there (a trial
    run from such a folder); it names the whole file, quoted, and the command runs pasted."""
    folder = aipp_project.path / "my aipp 文件"
    folder.mkdir()
    (folder / "std.cfg").write_text(_std_file())
    aipp_project.makepyfile(test_std=TEST.replace('"aipp/std.cfg"', '"my aipp 文件/std.cfg"'))
    failed = aipp_project.runpytest("-q", "-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    hint = next(x for x in failed.stdout.lines
                if x.startswith("next step: the first operator after AIPP"))
    assert "names the fields of 'my aipp 文件/std.cfg' to correct" in hint, hint
    command = re.search(r"from the shell: (ascend-accuracy diagnose .+?), where", hint).group(1)
    assert command == ("ascend-accuracy diagnose --aipp 'my aipp 文件/std.cfg' --images "
                       "FRAMES.npy --reference MODULE:FN"), hint
    _runs_filled_in(aipp_project, command, capsys)


def test_an_unquoted_atc_command_line_keeps_a_value_with_spaces_whole():
    """ATC records its argv joined by spaces, unquoted: a value runs to the next option."""
    from pytest_ascend_accuracy.core.atc_cmdline import atc_options

    line = ("atc --model=m.onnx --insert_op_conf=/w/My Projects/示例  proj/a.cfg "
            "--keep_dtype k.cfg --precision_mode=force_fp16")
    assert atc_options(line) == [("model", "m.onnx"),
                                 ("insert_op_conf", "/w/My Projects/示例  proj/a.cfg"),
                                 ("keep_dtype", "k.cfg"), ("precision_mode", "force_fp16")]
    assert atc_options("atc --keep_dtype 'a b/k.cfg' --log error") == [
        ("keep_dtype", "a b/k.cfg"), ("log", "error")]
    # as the real om jsons record it (../shared/realdata: msit's ATC 5.1.RC2 model.json, its
    # atc_cmdline attr): the toolkit's atc.bin path first, an --input_shape's ';' unquoted
    real = ("/usr/local/Ascend/ascend-toolkit/5.1.RC2/x86_64-linux/bin/atc.bin --model=m.onnx "
            "--framework=5 --output=m --soc_version=Ascend310 --input_shape=a:10,8,4;b:10,8")
    assert atc_options(real)[-1] == ("input_shape", "a:10,8,4;b:10,8")
    assert [name for name, _ in atc_options(real)] == ["model", "framework", "output",
                                                       "soc_version", "input_shape"]


def _runs_filled_in(aipp_project, command, capsys):
    """The printed command filled in as the hint says, where pytest ran (the frames the test
    ran, its reference function), names the mistaken field."""
    from pytest_ascend_accuracy.aipp.samples import random_rgb

    np.save(aipp_project.path / "frames.npy", random_rgb(1, 16, 16, seed=3))
    (aipp_project.path / "prep.py").write_text(
        "from pytest_ascend_accuracy.aipp.samples import imagenet_reference as preprocess\n")
    words = shlex.split(command.replace("FRAMES.npy", "frames.npy")
                        .replace("MODULE:FN", "prep.py:preprocess"))
    capsys.readouterr()
    assert cli.main(words[1:]) == 1
    assert "var_reci_chn_0: 58.395 -> 0.017125" in capsys.readouterr().out
