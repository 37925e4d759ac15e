"""A check failing at an ``If`` the device runs as one operator, as silero_vad.onnx fed
int16-scale audio fails (an audit): the golden holds the tensors of the branch that ran, and
its values there leave the float16 range (|1.04e6| at silero's STFT Conv). The hint looked at
the If's own operand (a bool), said "no float16 overflow seen" and offered fusion off for a run
with nothing fused (pasted, it repeated the verdict); on silero_vad_op18_ifless it said "the
golden values stay within float16" and offered high precision, which pasted still failed.
Now the hint names the values inside the branch and points to --accuracy-diagnose, whose fix
passes pasted; fusion off is not offered on the emulator where nothing is fused (checked: it
repeats the verdict); and a failing If whose branch was not read is said not looked at."""
import re

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from pasted_fix_lines import FIX
from vad_like_model import vad_like_model

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy, {imports}

PCM = (np.linspace(-1, 1, 16) * 30000).astype(np.float32)[None]
SR = np.array(16000, np.int64)


@accuracy(threshold=0.99, modes=[{expr}])
def test_pcm(ascend_model, golden_dump, check_accuracy):
    inputs = {{"x": PCM, "sr": SR}}
    actual = ascend_model("models/vad_like.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/vad_like.onnx", inputs))
'''

SUITE = '''
models:
  - name: vad
    model: models/vad_like.onnx
    inputs: {{x: data/pcm.npy, sr: data/sr.npy}}
    threshold: 0.99
    modes: [{yaml}]
'''


def _project(pytester, expr="DEFAULT", imports="DEFAULT"):
    from vad_like_model import PCM, SR

    for folder in ("models", "data"):
        (pytester.path / folder).mkdir(exist_ok=True)
    vad_like_model(pytester.path / "models" / "vad_like.onnx")
    np.save(pytester.path / "data" / "pcm.npy", PCM)
    np.save(pytester.path / "data" / "sr.npy", SR)
    pytester.makepyfile(test_vad=TEST.format(expr=expr, imports=imports))


def test_values_leaving_float16_inside_the_branch_are_named_and_no_mode_promised(pytester):
    _project(pytester)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    step = next(line for line in text.splitlines() if line.startswith("next step:"))
    assert step.startswith(
        "next step: golden values inside the branch of pick leave the float16 range "
        "(then/matmul output:0 reaches |9e+05|; then/scale input:0 reaches |9e+05|), where the "
        "device runs pick as one operator and dumps its outputs only: run with "
        "--accuracy-diagnose"), step
    assert "no float16 overflow seen" not in text
    assert "within float16" not in text
    assert "modes=[" not in text  # no mode promised (fusion off repeats it, nothing is fused)
    # the diagnosis it points to gives a fix that passes pasted, in a test and in a YAML suite
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose")
    run.assert_outcomes(failed=1)
    expr, yaml, imports = FIX.search(run.stdout.str()).groups()
    _project(pytester, expr, imports)
    pytester.makefile(".yaml", accuracy_vad=SUITE.format(yaml=yaml))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


NEAR_TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy, DEFAULT, FUSION_OFF

X = (1000 + np.random.default_rng(0).uniform(0, 1, (1, 64))).astype(np.float32)


@accuracy(threshold=0.99, modes=[DEFAULT, FUSION_OFF])
def test_near(ascend_model, golden_dump, check_accuracy):
    actual = ascend_model("near_offset.onnx").run({"x": X})
    check_accuracy(actual, golden_dump("near_offset.onnx", {"x": X}))
'''


def _near_offset(path):
    """x - 1000, doubled: x just above 1000 loses its fraction to float16 (no overflow, no op
    the emulator fuses)."""
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 64]) for n in ("x", "y")]
    graph = helper.make_graph(
        [helper.make_node("Sub", ["x", "c"], ["d"], name="offset"),
         helper.make_node("Mul", ["d", "two"], ["y"], name="double")],
        "near_offset", vi[:1], vi[1:],
        [numpy_helper.from_array(np.array([1000], np.float32), "c"),
         numpy_helper.from_array(np.array([2], np.float32), "two")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


def test_fusion_off_is_not_offered_where_nothing_is_fused_and_it_would_repeat_the_verdict(
        pytester):
    _near_offset(pytester.path / "near_offset.onnx")
    pytester.makepyfile(test_near=NEAR_TEST)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=2)
    text = run.stdout.str()
    cosines = re.findall(r"^  cosine +(\S+) <", text, re.M)
    assert len(cosines) == 2 and cosines[0] == cosines[1], cosines  # fusion off: the same
    default = text[text.index("test_near[default]"):text.index("test_near[fusion_off]")]
    assert "modes=[FUSION_OFF]" not in default
    assert ("no float16 overflow seen, and neither fusion off nor buffer reuse off is a probe "
            "here: no op of this run is fused (coverage: 0 inside fused ops), so fusion off "
            "repeats this verdict") in default
    assert "no mode to compare with changes it" not in default  # (high precision may: a review)
    assert "run with --accuracy-diagnose" in default


def test_a_failing_if_whose_branch_was_not_read_is_said_not_looked_at():
    from pytest_ascend_accuracy.compare.fp16_range import RangeFindings
    from pytest_ascend_accuracy.report.failure_text import no_overflow_seen

    found = RangeFindings()
    found.checked = 1
    found.failing_ifs = ("If_0",)
    text = no_overflow_seen(found)
    assert text.startswith("no float16 overflow seen; the golden values inside the branches "
                           "of If_0 were not looked at"), text
    found.branches = ("If_0",)  # read, nothing found: the plain words hold
    assert no_overflow_seen(found) == "no float16 overflow seen"


def test_the_branch_is_read_from_the_golden_with_the_runs_names(tmp_path):
    from vad_like_model import PCM, SR

    from pytest_ascend_accuracy import assert_accuracy
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.report.assertion import AccuracyFailure

    model = vad_like_model(tmp_path / "vad_like.onnx")
    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache)
    inputs = {"x": PCM, "sr": SR}
    run = backend.run(backend.convert(model, None), inputs, dump_dir=tmp_path / "dump")
    golden = golden_dump(model, inputs, cache=cache)
    try:
        assert_accuracy(run, golden, threshold=0.99)
    except AccuracyFailure as exc:
        text = str(exc)
    else:
        raise AssertionError("the PCM input passed")
    assert ("golden values inside the branch of pick leave the float16 range (then/matmul "
            "output:0 reaches |9e+05|") in text, text
    assert "diagnose(model, inputs, threshold=...)" in text
