"""``--accuracy-diagnose`` of a failed check whose model takes raw images through an AIPP file
(an AIPP trial, finding 2): it printed only "step 5 first: ... ascend-accuracy diagnose --aipp F
--images DIR --reference MODULE:FN", placeholders, though the plugin knew the file and the
input check (the device's Aipp output against the golden inputs) was never run. Now step 5 runs
and names the mistake, and the printed command runs pasted."""
import re
import shlex

import numpy as np

from pytest_ascend_accuracy import cli
from pytest_ascend_accuracy.aipp.samples import IMAGENET_STD, imagenet_aipp

TEST = '''
import numpy as np
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb

RAW = random_rgb(1, 16, 16, seed=3)

def test_std_file(ascend_model, golden_dump, check_accuracy):
    om = ascend_model("models/net.onnx", aipp="aipp/std.cfg")
    golden = golden_dump("models/net.onnx", {"x": np.stack([imagenet_reference(i) for i in RAW])})
    check_accuracy(om.run({"x": RAW}), golden)
'''


def _var_reci_as_std() -> str:
    """The ImageNet AIPP file with each var_reci_chn written as the std, not 1/std."""
    text = imagenet_aipp(src_hw=(16, 16))
    for c, std in enumerate(IMAGENET_STD):
        text = re.sub(rf"var_reci_chn_{c}: \S+", f"var_reci_chn_{c}: {std}", text)
    return text


def test_a_var_reci_written_as_the_std_is_named_and_the_command_runs_pasted(aipp_project,
                                                                            capsys):
    (aipp_project.path / "aipp").mkdir()
    (aipp_project.path / "aipp" / "std.cfg").write_text(_var_reci_as_std())
    aipp_project.makepyfile(test_std=TEST)
    result = aipp_project.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-diagnose")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    # step 5's verdict: each channel scaled by its std squared (58.395**2 = 3410)
    result.stdout.re_match_lines([
        r"diagnosis \(--accuracy-diagnose, .*\): the device saw different inputs than the golden "
        r"run: input 'x' as seen by aipp_x:output:0: .*channel 0: golden \* 34\d\d, .*"])
    # the AIPP file against the golden inputs, field by field: the mistake named
    assert "var_reci_chn_0: 58.395 -> 0.017125  # 58.395 is the std; var_reci_chn is its " \
           "reciprocal 1/std" in out
    assert "corrected AIPP file: aipp/std.corrected.cfg" in out
    assert "step 5 first" not in out
    line = next(x for x in out.splitlines()
                if "the same check from the shell, where pytest ran: " in x)
    command = line.split("where pytest ran: ", 1)[1]
    assert "MODULE:FN" not in command and " DIR " not in command and " F " not in command
    words = shlex.split(command)
    assert words[:4] == ["ascend-accuracy", "diagnose", "--aipp", "aipp/std.cfg"]
    frames = np.load(aipp_project.path / words[words.index("--images") + 1])
    assert frames.shape == (1, 16, 16, 3) and frames.dtype == np.uint8
    capsys.readouterr()
    assert cli.main(words[1:]) == 1  # pasted where pytest ran (pytester's cwd)
    pasted = capsys.readouterr().out
    assert "var_reci_chn_0: 58.395 -> 0.017125" in pasted
    assert "corrected AIPP file: aipp/std.corrected.cfg" in pasted  # relative, as pytest says


def test_a_stored_golden_without_inputs_says_so(aipp_project):
    """A stored golden keeps op outputs only: step 5 has no golden inputs and says how to get
    them, not a placeholder command."""
    (aipp_project.path / "aipp").mkdir()
    (aipp_project.path / "aipp" / "std.cfg").write_text(_var_reci_as_std())
    aipp_project.makepyfile(test_std=TEST.replace(
        'RAW])})', 'RAW])}, path="goldens/net")'))
    aipp_project.runpytest("-q", "-p", "no:cacheprovider")  # writes the stored golden
    result = aipp_project.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-diagnose")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "diagnosis (--accuracy-diagnose): not run: the golden holds no value of input(s) 'x' "
        "(a stored golden keeps op outputs only unless written with --accuracy-store-inputs; "
        "--accuracy-store-inputs --accuracy-regen-all rewrites it with them)*"])
