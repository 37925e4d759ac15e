"""A test that converts two models: its failing model's fix is given as an argument of that
model's ``ascend_model(...)`` call (``keep_dtype=[...]``, which keeps each parametrization's
mode, else ``mode=...``), since the marker's ``modes=[...]`` converts every model of the test
with it and a keep_dtype name the other model lacks is refused (a diagnose trial pasted the
marker form and got a configuration error). Pasted, the test passes."""
import re

from pytest_ascend_accuracy.testing import models as tiny_models

ARGUMENT = re.compile(r"^  (?:or )?((?:mode|keep_dtype)=.+?)$", re.M)


def _as_extra(argument: str) -> str:
    """``keep_dtype=['norm']`` as the dict entry ``"keep_dtype": ['norm']``."""
    name, _, value = argument.partition("=")
    return f'"{name}": {value}'


TEST = '''
from pytest_ascend_accuracy import accuracy, keep_dtype, HIGH_PRECISION
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95{modes})
def test_two(ascend_model, golden_dump, check_accuracy):
    for model, extra in (("models/passing_mlp.onnx", {{}}), ("models/overflow.onnx", {{{arg}}})):
        inputs = make_inputs(model)
        check_accuracy(ascend_model(model, **extra).run(inputs), golden_dump(model, inputs))
'''


def test_a_fix_for_one_model_of_several_is_that_models_mode_argument(pytester):
    tiny_models.save_models(pytester.path / "models", ["passing_mlp", "overflow"])
    pytester.makepyfile(test_two=TEST.format(arg="", modes=""))
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose")
    run.assert_outcomes(failed=1)
    out = run.stdout.str()
    assert "in the ascend_model call of overflow alone (this test converts other models" in out
    assert not re.search(r"^  (or )?modes=\[", out, re.M)
    hinted = ARGUMENT.findall(out)
    fix = re.search(r"^  fix: in the ascend_model call of overflow alone: (\S+=.+?)(?:  \(from|$)",
                    out, re.M).group(1)
    assert "keep_dtype=['norm']" in hinted and fix
    for argument in hinted + [fix]:  # each one, pasted as that call's argument, passes
        pytester.makepyfile(test_two=TEST.format(arg=_as_extra(argument), modes=""))
        pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_test_of_several_modes_gets_an_argument_that_keeps_each_mode(pytester):
    """``mode=keep_dtype([...])`` pinned the default mode on the fusion_off parametrization too,
    which then passed without converting that model under fusion off (a docs trial): the
    keep_dtype= argument adds to each parametrization's own mode."""
    tiny_models.save_models(pytester.path / "models", ["passing_mlp", "overflow"])
    modes = ', modes=["default", "fusion_off"]'
    pytester.makepyfile(test_two=TEST.format(arg="", modes=modes))
    out = pytester.runpytest("-p", "no:cacheprovider").stdout.str()
    assert "keep_dtype=['norm']" in ARGUMENT.findall(out), out
    pytester.makepyfile(test_two=TEST.format(arg=_as_extra("keep_dtype=['norm']"), modes=modes))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(passed=2)
    run.stdout.fnmatch_lines(["*fusion_off+keep_dtype(norm)*"])


FIRST = '''
from pytest_ascend_accuracy import accuracy, keep_dtype, HIGH_PRECISION
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95{modes})
def test_two(ascend_model, golden_dump, check_accuracy):
    for model in ("models/overflow.onnx", "models/passing_mlp.onnx"):
        inputs = make_inputs(model)
        check_accuracy(ascend_model(model).run(inputs), golden_dump(model, inputs))
'''


def test_the_marker_fix_of_a_model_failing_first_passes_with_the_models_after_it(pytester):
    """A model that fails before the test converts its others gets the marker form (nothing
    tells the check of the models to come); pasted, a keep_dtype name of the model converted
    before is not refused as a typo of the next one (a review)."""
    tiny_models.save_models(pytester.path / "models", ["passing_mlp", "overflow"])
    pytester.makepyfile(test_two=FIRST.format(modes=""))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    hinted = re.findall(r"^  (?:or )?modes=\[(.+)\]$", run.stdout.str(), re.M)
    assert "keep_dtype(['norm'])" in hinted
    for expr in hinted:
        pytester.makepyfile(test_two=FIRST.format(modes=f", modes=[{expr}]"))
        pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    # a name no model of the test has is still a typo, refused with the closest names
    pytester.makepyfile(test_two=FIRST.format(modes=", modes=[keep_dtype(['nrom'])]"))
    pytester.runpytest("-p", "no:cacheprovider").stdout.fnmatch_lines(
        ["*keep_dtype entry 'nrom' is not an op of model 'overflow'; closest: 'norm'*"])


BOTH_FIRST = '''
from pytest_ascend_accuracy import accuracy, keep_dtype, HIGH_PRECISION
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95)
def test_two(ascend_model, golden_dump, check_accuracy):
    bad, good = ascend_model("models/overflow.onnx"{arg}), ascend_model("models/passing_mlp.onnx")
    for model, om in (("models/overflow.onnx", bad), ("models/passing_mlp.onnx", good)):
        inputs = make_inputs(model)
        check_accuracy(om.run(inputs), golden_dump(model, inputs))
'''


def test_models_converted_before_any_run_count_as_several(pytester):
    """A test converting det and cls before running either got the marker form (a PP-OCR
    trial): the models converted count, not the ones run."""
    tiny_models.save_models(pytester.path / "models", ["passing_mlp", "overflow"])
    pytester.makepyfile(test_two=BOTH_FIRST.format(arg=""))
    out = pytester.runpytest("-p", "no:cacheprovider").stdout.str()
    hinted = re.findall(r"^  (?:or )?mode=(.+)$", out, re.M)
    assert hinted, out
    for expr in hinted:
        pytester.makepyfile(test_two=BOTH_FIRST.format(arg=f", mode={expr}"))
        pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_keep_dtype_given_to_one_call_is_checked_strictly(pytester):
    """The leniency is the marker's: ``ascend_model(B, keep_dtype=["norm"])`` naming an op of a
    model converted before, not of B, is still a typo (a review: it passed silently)."""
    tiny_models.save_models(pytester.path / "models", ["passing_mlp", "overflow"])
    pytester.makepyfile(test_two='''
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.95)
def test_two(ascend_model):
    ascend_model("models/overflow.onnx")
    ascend_model("models/passing_mlp.onnx", keep_dtype=["norm"])
''')
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines(["*keep_dtype entry 'norm' is not an op of model 'passing_mlp'*"])
