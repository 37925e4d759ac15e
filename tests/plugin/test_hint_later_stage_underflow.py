"""A float16-underflow keep_dtype hint reads the findings of the first three failing ops only; a
failing op after them that loses values of its own to float16 (its golden operand or output
flushing to 0, the op float16 in the run) was taken to fail on what the first op handed it, and
the list was printed with no caveat. T1: an LR-ASPP with random BatchNorm statistics in high
precision flushed values in each stage; the hint kept backbone.12's ops and, pasted, failed at
backbone.13's (cosine NaN, actual all zero), 6 of 6.

The model here has that shape: mm0's weight flushes to 0 (the first failure), and each stage
after it halves the values, so that stage 4 flushes values of its own. The hint keeps mm0 and
now says that ops after it may still fail, naming mm4act4, and points to --accuracy-diagnose;
pasted, it fails there, and the diagnosis' fix passes pasted in Python and YAML. Where each
stage keeps its values (no halving), the same list carries no caveat and passes pasted."""

import numpy as np
import onnx
from pasted_fix_lines import FIX, MODES
from stage_underflow_model import stage_underflow_model

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy{imports}


@accuracy(threshold=0.99, modes=[{modes}])
def test_stages(ascend_model, golden_dump, check_accuracy):
    inputs = {{"x": np.random.default_rng(0).uniform(0, 1, (1, 64)).astype(np.float32)}}
    actual = ascend_model("models/stages.onnx").run(inputs, dump=True)
    check_accuracy(actual, golden_dump("models/stages.onnx", inputs))
'''
SUITE = '''
models:
  - name: stages
    model: models/stages.onnx
    threshold: 0.99
    inputs: {{x: x.npy}}
    modes: [{yaml}]
'''
#: the advice's pointer where the list may still fail (``fp16_fix_ops.STILL_FAILS``)
STILL_FAILS = "where it still fails, run with --accuracy-diagnose, which walks the debugging flow"
CAVEAT = ("kept for the first failing op (mm0act0): pasted, ops after it (or, fed float16 from "
          "upstream, that op itself) may still fail (mm4act4 loses values of its own to "
          "float16: ")


def _model(path, shrink):
    onnx.save(stage_underflow_model(shrink), str(path))


def _setup(pytester, shrink):
    (pytester.path / "models").mkdir()
    _model(pytester.path / "models" / "stages.onnx", shrink)
    np.save(pytester.path / "x.npy",
            np.random.default_rng(0).uniform(0, 1, (1, 64)).astype(np.float32))


def _run(pytester, modes, imports="", *args):
    pytester.makepyfile(test_stages=TEST.format(modes=modes,
                                                imports=f", {imports}" if imports else ""))
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def _hint(text):
    block = text[text.index("next step:"):]
    return block[:block.index("\n\n")] if "\n\n" in block else block


def test_a_later_stage_losing_its_own_values_gets_the_caveat_and_the_diagnosis_fixes_it(
        pytester):
    _setup(pytester, shrink=0.5)
    run = _run(pytester, '"high_precision"')
    run.assert_outcomes(failed=1)
    hint = _hint(run.stdout.str())
    assert "first failure in graph order: mm0act0 (#0)" in run.stdout.str()
    assert CAVEAT in hint, hint
    assert f"keep these ops in float32 ({STILL_FAILS} (" in hint, hint
    expr, yaml, imports = MODES.search(hint).groups()
    assert expr == "HIGH_PRECISION | keep_dtype(['mm0', 'act0'])", hint
    # pasted, as the caveat warns: the first failure moves to the op it names (Python, YAML)
    pytester.makefile(".yaml", accuracy_stages=SUITE.format(yaml=yaml))
    pasted = _run(pytester, expr, imports)
    pasted.assert_outcomes(failed=2)
    # the failure blocks' verdict lines (under CI the short summary repeats them)
    assert sum(line.startswith("accuracy FAILED: ") and line.endswith(
        "first failure in graph order: mm4act4 (#4)") for line in pasted.stdout.lines) == 2
    (pytester.path / "accuracy_stages.yaml").unlink()
    # what it points to: the diagnosis' fix, pasted verbatim, passes in Python and YAML
    diagnosed = _run(pytester, '"high_precision"', "", "--accuracy-diagnose")
    diagnosed.assert_outcomes(failed=1)
    expr, yaml, imports = FIX.search(diagnosed.stdout.str()).groups()
    pytester.makefile(".yaml", accuracy_stages=SUITE.format(yaml=yaml))
    _run(pytester, expr, imports).assert_outcomes(passed=2)


def test_stages_that_keep_their_values_get_no_caveat_and_the_list_passes_pasted(pytester):
    _setup(pytester, shrink=1.0)
    run = _run(pytester, '"high_precision"')
    run.assert_outcomes(failed=1)
    hint = _hint(run.stdout.str())
    assert "may still fail" not in hint and STILL_FAILS not in hint, hint
    expr, yaml, imports = MODES.search(hint).groups()
    assert expr == "HIGH_PRECISION | keep_dtype(['mm0', 'act0'])", hint
    pytester.makefile(".yaml", accuracy_stages=SUITE.format(yaml=yaml))
    _run(pytester, expr, imports).assert_outcomes(passed=2)
