"""A user's test that runs an accuracy suite in-process twice (``pytester.runpytest``), from a
test module importing neither numpy nor onnx: pytester drops what a run imported, and the
second run imported numpy again (``ImportError: cannot load module more than once per
process``) and onnx again (SIGABRT: the whole test process died, exit 134). The plugin loads
both once pytester is in the session (``core.extension_preload``)."""

OUTER = '''
pytest_plugins = ["pytester"]

INNER = """
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.99)
def test_mlp(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("MODEL")
    check_accuracy(ascend_model("MODEL").run(inputs), golden_dump("MODEL", inputs))
"""


def test_the_suite_twice(pytester):
    pytester.makepyfile(test_inner=INNER)
    for _ in range(2):
        pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
'''


def test_two_in_process_runs_of_an_accuracy_suite_keep_the_process_alive(pytester, models_dir):
    model = str(models_dir / "passing_mlp.onnx")
    pytester.makepyfile(test_outer=OUTER.replace("MODEL", model))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_outer.py")
    assert result.ret == 0, "\n".join(result.outlines[-15:] + result.errlines[-5:])
    result.assert_outcomes(passed=1)
