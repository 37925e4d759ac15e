"""``--accuracy-diagnose`` of a failed dataset check of a model fed raw images through an AIPP
file runs step 5 on the first flipped sample, as it does for an accuracy check (4586d42): the
golden inputs are the reference run's, ``reference_inputs(sample)``. It said 'not run: the
inputs this model's reference run saw are not known here' though the check had fed them."""
import shlex

import numpy as np
import onnx

from pytest_ascend_accuracy import cli
from pytest_ascend_accuracy.aipp.samples import imagenet_aipp, random_rgb
from pytest_ascend_accuracy.testing.models import conv_bn_relu

TEST = '''
import numpy as np
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb

SAMPLES = [{"x": frame[None]} for frame in random_rgb(3, 16, 16, seed=6)]

def to_reference(inputs):
    return {"x": np.stack([imagenet_reference(f) for f in inputs["x"]])}

def test_ds(ascend_model, check_dataset):
    om = ascend_model("models/net.onnx", aipp="zeroed.cfg")
    check_dataset(om, SAMPLES, metric="agreement", max_drop=0.0, reference_inputs=to_reference)
'''

SUITE = """
models:
  - name: dz
    model: dyn.onnx
    aipp: zeroed.cfg
    reference: prep:center
    inputs: {x: frames.npy}
    dataset: {samples: samples, metric: agreement, max_drop: 0}
"""

STEP_5 = ("diagnosis (--accuracy-diagnose on the first flipped sample 0, * new conversion*, from "
          "mode default): the device saw different inputs than the golden run: input 'x' as seen "
          "by aipp_x:output:0: *channel 0: golden * 1 + 2.1*")


def _zeroed(**kwargs) -> str:
    """The ImageNet AIPP file with its means left 0: every sample's top-1 flips."""
    text = imagenet_aipp(**kwargs)
    for c, mean in enumerate((123, 116, 103)):
        text = text.replace(f"mean_chn_{c}: {mean}", f"mean_chn_{c}: 0")
    return text


def test_a_failed_dataset_check_of_an_aipp_model_runs_step_5_and_the_command_pastes(
        aipp_project, capsys):
    aipp_project.makefile(".cfg", zeroed=_zeroed(src_hw=(16, 16)))
    aipp_project.makepyfile(test_ds=TEST)
    result = aipp_project.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-diagnose")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([STEP_5, "*mean_chn_0: 0 -> 123  # the reference subtracts*",
                                 "*corrected AIPP file: zeroed.corrected.cfg"])
    out = result.stdout.str()
    assert "not known here" not in out
    line = next(x for x in out.splitlines() if "the same check from the shell" in x)
    words = shlex.split(line.split("where pytest ran: ", 1)[1])
    assert words[:4] == ["ascend-accuracy", "diagnose", "--aipp", "zeroed.cfg"]
    capsys.readouterr()
    assert cli.main(words[1:]) == 1  # pasted where pytest ran: the same fields named
    assert "mean_chn_0: 0 -> 123" in capsys.readouterr().out


def test_a_yaml_dataset_item_converted_per_sample_shape_runs_step_5(pytester):
    """A dynamic model's dataset item converts per sample (``ShapeDeferredModel``): the flow
    runs on that sample's conversion, with the AIPP file (not the raw images as its input)."""
    model = conv_bn_relu()
    dims = model.graph.input[0].type.tensor_type.shape.dim
    dims[0].Clear()
    dims[0].dim_value = -1
    onnx.save(model, str(pytester.path / "dyn.onnx"))
    pytester.makefile(".cfg", zeroed=_zeroed(src_hw=(16, 16)))
    pytester.makepyfile(prep="from pytest_ascend_accuracy.aipp.samples import "
                             "imagenet_reference as center\n")
    np.save(pytester.path / "frames.npy", random_rgb(1, 16, 16, seed=5))
    (pytester.path / "samples").mkdir()
    for i, frame in enumerate(random_rgb(2, 16, 16, seed=7)):
        np.savez(pytester.path / "samples" / f"{i}.npz", x=frame[None])
    (pytester.path / "accuracy_dz.yaml").write_text(SUITE)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-diagnose",
                                "accuracy_dz.yaml", "-k", "dataset")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines([STEP_5, "*mean_chn_0: 0 -> 123  # the reference subtracts*"])


def test_a_failed_dataset_check_at_the_first_op_after_aipp_says_check_the_pre_processing(
        aipp_project):
    """``check_accuracy`` of such a model says to check the AIPP file before blaming the first
    operator after it; the dataset check named that operator alone (a review). Its advice, taken
    as printed: --accuracy-diagnose names the fields, and the corrected file passes."""
    aipp_project.makefile(".cfg", zeroed=_zeroed(src_hw=(16, 16)))
    aipp_project.makepyfile(test_ds=TEST)
    result = aipp_project.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-report=rep")
    result.assert_outcomes(failed=1)
    (page,) = (aipp_project.path / "rep").rglob("dataset.html")
    assert ("<th>advice</th><td class=\"w\">next step: the first operator after AIPP "
            "(conv1relu1) already fails") in page.read_text()  # the page says it too
    result.stdout.fnmatch_lines([
        "first flipped sample 0: first operator below the threshold: conv1relu1 (Conv2D) #1*",
        "next step: the first operator after AIPP (conv1relu1) already fails: check the "
        "pre-processing before blaming it: rerun with --accuracy-diagnose: step 5 compares the "
        "device's Aipp output with the golden inputs, names the fields of zeroed.cfg to correct*"])
    result = aipp_project.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-diagnose")
    result.stdout.fnmatch_lines([
        "next step: the first operator after AIPP (conv1relu1) already fails: check the "
        "pre-processing before blaming it: the diagnosis below (--accuracy-diagnose, step 5) "
        "compares the device's Aipp output with the golden inputs*",
        STEP_5, "*corrected AIPP file: zeroed.corrected.cfg"])
    result.stdout.no_fnmatch_line("*rerun with --accuracy-diagnose*")  # (it was given)
    aipp_project.makepyfile(test_ds=TEST.replace('"zeroed.cfg"', '"zeroed.corrected.cfg"'))
    aipp_project.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_an_entry_naming_a_fused_members_tensor_gets_advice_that_traces(aipp_project):
    """The trace said to name the fused op "or list a mode without fusion in modes=", which
    leaves this mode's dataset check untraced whatever the marker lists (a review). The advice
    it gives now, taken as printed, traces the sample."""
    aipp_project.makefile(".cfg", zeroed=_zeroed(src_hw=(16, 16)))
    marked = TEST.replace("def test_ds(",
                          "@accuracy(threshold=0.95, per_op={PER_OP})\ndef test_ds(")
    head = "from pytest_ascend_accuracy import accuracy\n"
    aipp_project.makepyfile(test_ds=head + marked.replace("PER_OP", '"bn1:output:0": 0.5'))
    result = aipp_project.runpytest("-q", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines([
        "first flipped sample 0: not traced to an operator: per_op entry 'bn1:output:0' names "
        "only ops never compared here (bn1): inside fused ops, whose member tensors the "
        "device never dumps; name it 'bn1' (without the slot) to judge the fused op that "
        "holds it"])
    assert "fusion_off" not in result.stdout.str()
    aipp_project.makepyfile(test_ds=head + marked.replace("PER_OP", '"bn1": 0.5'))
    result = aipp_project.runpytest("-q", "-p", "no:cacheprovider")
    # traced: conv1relu1 (holding bn1) judged at 0.5 passes it (cosine 0.69), the next fails
    result.stdout.fnmatch_lines(["first flipped sample 0: first operator below the threshold: "
                                 "conv2relu2 (Conv2D) #2, cosine 0.70* fails cosine >= 0.95"])
