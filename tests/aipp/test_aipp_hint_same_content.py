"""Two AIPP files of one content share a conversion (the cache is keyed by the file's content),
and the converted model's om json records the command line of the first conversion. The AIPP
hint of a failed check read the file from that command line, so the second test's hint named
the first test's file: a user fixing ``second.cfg`` was told to check and diagnose
``first.cfg`` (an AIPP trial: after ``cp first.cfg second.cfg``, both tests' hints named
``first.cfg``). Each hint names the file its own test converted with."""
import re

from .test_hint_aipp_command import _std_file

TEST = '''
import numpy as np
import pytest
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb

RAW = random_rgb(1, 16, 16, seed=3)

@pytest.mark.parametrize("cfg", ["first", "second"])
def test_file(cfg, ascend_model, golden_dump, check_accuracy):
    om = ascend_model("models/net.onnx", aipp=f"aipp/{cfg}.cfg")
    golden = golden_dump("models/net.onnx", {"x": np.stack([imagenet_reference(i) for i in RAW])})
    check_accuracy(om.run({"x": RAW}), golden)
'''


def test_each_hint_names_the_file_its_test_converted_with(aipp_project):
    (aipp_project.path / "aipp").mkdir()
    for name in ("first", "second"):
        (aipp_project.path / "aipp" / f"{name}.cfg").write_text(_std_file())
    aipp_project.makepyfile(test_two=TEST)
    result = aipp_project.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    first = "next step: the first operator after AIPP"
    hints = [x for x in result.stdout.lines if x.startswith(first)]
    named = [sorted(set(re.findall(r"aipp/\w+\.cfg", h))) for h in hints]
    assert named == [["aipp/first.cfg"], ["aipp/second.cfg"]], hints
