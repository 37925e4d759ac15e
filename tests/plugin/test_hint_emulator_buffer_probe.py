"""The "no float16 overflow seen" hint on the emulator, which does not emulate buffer reuse
(``report.emulated_probes``). T1: an LR-ASPP's and a RegNet's hints offered modes=[BUFFER_OFF],
[HIGH_PRECISION | BUFFER_OFF] and, under fusion_off, [BUFFER_OFF | FUSION_OFF] alone; pasted,
each repeated the verdict (cosine 0.987213, 0.989911), and nothing said it would.

Under fusion_off the hint now offers no probe on the emulator, says why and points to
--accuracy-diagnose, whose fix passes pasted; beside fusion off it says buffer reuse off repeats
the verdict there (pasted, it does). With a buffer fault injected into the emulator (the one
thing buffer reuse off changes there), the probe stays, and pasted it passes."""
import re

import pytest
from pasted_fix_lines import FIX

pytest.importorskip("onnxruntime")

TEST = '''
from pytest_ascend_accuracy import accuracy, {imports}
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold={threshold}, modes=[{expr}])
def test_mlp(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/passing_mlp.onnx")
    actual = ascend_model("models/passing_mlp.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/passing_mlp.onnx", inputs))
'''
SUITE = '''
models:
  - name: mlp
    model: models/passing_mlp.onnx
    threshold: {threshold}
    modes: [{yaml}]
'''
#: a buffer fault on relu1, as ``tests/plugin/test_diagnose_combos.py`` injects faults
FAULTY = '''
from pytest_ascend_accuracy import backends
from pytest_ascend_accuracy.backends.emulator.faults import Fault

_MAKE = backends.make_backend


def _faulted(*args, **kwargs):
    return _MAKE(*args, faults=[Fault.on_buffer("relu1")], **kwargs)


def pytest_configure(config):
    backends.make_backend = _faulted


def pytest_unconfigure(config):
    backends.make_backend = _MAKE
'''
ONLY_BUFFER = ("no float16 overflow seen, fusion is already off, and buffer reuse off changes "
               "nothing on this backend, the emulator, which does not emulate buffer reuse (on "
               "an Ascend device, --ascend-device=N, compare with modes=[BUFFER_OFF | "
               "FUSION_OFF]): run with --accuracy-diagnose")
FUSION_ONLY = ("compare with this mode to see whether a fusion pass causes the first failure "
               "(buffer reuse off is not offered: this backend, the emulator, does not emulate "
               "buffer reuse, so modes=[BUFFER_OFF] repeats this verdict; on an Ascend device, "
               "--ascend-device=N, compare with it too); where it does not pass (float16 "
               "rounding alone, which it does not change), run with --accuracy-diagnose")
TIGHT = 0.9999999  # plain float16 rounding fails it (tests/plugin/test_hint_fp16_rounding_paste)


def _run(pytester, expr, imports="FUSION_OFF", threshold=TIGHT, *args):
    pytester.makepyfile(test_mlp=TEST.format(imports=imports, expr=expr, threshold=threshold))
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def _hint(text):
    block = text[text.index("next step:"):]
    return block[:block.index("\n\n")] if "\n\n" in block else block


def _verdict(text):
    """The verdict line and the first failure's judged cosine line."""
    return (re.search(r"^accuracy FAILED: .*$", text, re.M).group(0),
            re.search(r"^  cosine .*$", text, re.M).group(0))


def test_under_fusion_off_the_emulator_offers_the_diagnosis_instead(pytester, models_dir):
    run = _run(pytester, "FUSION_OFF")
    run.assert_outcomes(failed=1)
    hint = _hint(run.stdout.str())
    assert hint.startswith("next step: " + ONLY_BUFFER), hint
    assert "modes=[" not in hint.split(": run with --accuracy-diagnose")[1], hint
    # the probe it offered before, pasted: the same verdict, to the digit
    probe = _run(pytester, "BUFFER_OFF | FUSION_OFF", "BUFFER_OFF, FUSION_OFF")
    probe.assert_outcomes(failed=1)
    assert _verdict(probe.stdout.str()) == _verdict(run.stdout.str())
    # what it points to instead: the diagnosis, whose fix passes pasted (Python and YAML)
    diagnosed = _run(pytester, "FUSION_OFF", "FUSION_OFF", TIGHT, "--accuracy-diagnose")
    diagnosed.assert_outcomes(failed=1)
    expr, yaml, imports = FIX.search(diagnosed.stdout.str()).groups()
    pytester.makefile(".yaml", accuracy_mlp=SUITE.format(yaml=yaml, threshold=TIGHT))
    _run(pytester, expr, imports).assert_outcomes(passed=2)


def test_beside_fusion_off_buffer_off_is_not_offered_and_it_says_why(pytester, models_dir):
    """Offered beside fusion off with a note that it repeated the verdict (U2's first step), it
    was still a probe that could change nothing: fusion off alone now, and why."""
    run = _run(pytester, "DEFAULT", "DEFAULT")
    run.assert_outcomes(failed=1)
    hint = _hint(run.stdout.str())
    assert FUSION_ONLY in hint and "  modes=[FUSION_OFF]" in hint.splitlines(), hint
    assert "  or modes=" not in hint, hint
    probe = _run(pytester, "BUFFER_OFF", "BUFFER_OFF")
    probe.assert_outcomes(failed=1)
    assert _verdict(probe.stdout.str()) == _verdict(run.stdout.str())


def test_a_buffer_fault_keeps_the_probe_and_pasted_it_passes(pytester, models_dir):
    pytester.makeconftest(FAULTY)
    run = _run(pytester, "FUSION_OFF", threshold=0.99)
    run.assert_outcomes(failed=1)
    hint = _hint(run.stdout.str())
    assert "emulator" not in hint and "  modes=[BUFFER_OFF | FUSION_OFF]" in hint, hint
    _run(pytester, "BUFFER_OFF | FUSION_OFF", "BUFFER_OFF, FUSION_OFF",
         0.99).assert_outcomes(passed=1)
