"""``--accuracy-diagnose`` judges what the check judged: the flow compares against the check's
own golden (one the test made, or a stored one read from its folder), not a fresh onnxruntime
golden of the inputs. A check that failed because its golden lacks an op was diagnosed "the
default conversion already meets the threshold" (F6, left by F4); where that op sits beside a
value failure, the fix and the ignore printed, pasted together, pass."""
import re

from conftest import STORED_GOLDEN_TEST

MADE = '''
from pytest_ascend_accuracy import accuracy, keep_dtype  # noqa: F401
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/{M}.onnx"


@accuracy(threshold=0.95{MARKER})
def test_made(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(M)
    full = golden_dump(M, inputs)
    golden = DumpSet([op for op in full.ops if op.name != "{DROP}"], kind=full.kind,
                     root=full.root, model_name=full.model_name, meta=dict(full.meta))
    check_accuracy(ascend_model(M).run(inputs), golden)
'''

ALREADY = "the default conversion already meets the threshold"
COVERAGE = ("diagnosis (--accuracy-diagnose, 0 new conversions, from mode default): not "
            "diagnosed: the check failed on coverage, not accuracy: 1 op not compared "
            "(fc1/MatMulrelu1: *")


def made(m, drop, marker=""):
    return MADE.replace("{M}", m).replace("{DROP}", drop).replace("{MARKER}", marker)


def test_a_golden_the_test_made_without_an_op_is_diagnosed_as_the_check_judged(
        pytester, models_dir):
    pytester.makepyfile(test_made=made("passing_mlp", "relu1"))
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-diagnose")
    result.assert_outcomes(failed=1)
    assert ALREADY not in result.stdout.str()
    result.stdout.fnmatch_lines([COVERAGE])


def test_a_stored_golden_lacking_an_op_is_diagnosed_against_its_files(pytester, models_dir):
    pytester.makepyfile(test_stored=STORED_GOLDEN_TEST)
    pytester.runpytest("-q", "-p", "no:cacheprovider")  # writes golden/mlp
    stored = pytester.path / "golden" / "mlp"
    (relu1,) = stored.glob("relu1.*.npy")
    relu1.unlink()  # as a golden written elsewhere without that op's output (msit's, no record)
    (stored / "golden.json").unlink()
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-diagnose")
    result.assert_outcomes(failed=1)
    assert ALREADY not in result.stdout.str()
    result.stdout.fnmatch_lines([COVERAGE])


def test_the_fix_and_the_ignore_printed_pasted_together_pass(pytester, models_dir):
    pytester.makepyfile(test_made=made("overflow", "to_channels"))
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-diagnose")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "check the operator implementations" not in out
    assert "1 op not compared (to_channels: no golden op matches its name" in out
    fix = re.search(r"^  fix: (modes=\[.*?\])  \(YAML", out, re.M).group(1)
    ignore = re.search(r"^  with it: (ignore=\[.*?\]) in the test's @accuracy", out, re.M).group(1)
    assert (fix, ignore) == ("modes=[keep_dtype(['norm'])]", "ignore=['to_channels']"), out
    verdict_ignore = re.search(r"paste this beside the fix: @accuracy\((ignore=\[.*?\])\)", out)
    assert verdict_ignore.group(1) == ignore
    for marker, outcome in ((f", {fix}, {ignore}", dict(passed=1)), (f", {fix}", dict(failed=1)),
                            (f", {ignore}", dict(failed=1))):
        pytester.makepyfile(test_made=made("overflow", "to_channels", marker))
        pytester.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(**outcome)
