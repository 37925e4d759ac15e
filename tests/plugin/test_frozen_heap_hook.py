"""An accuracy test's body -- a test using the plugin's check fixtures, or a YAML suite's
item -- runs in ``core.frozen_heap``; any other test runs as pytest runs it."""
CONFTEST = '''
import gc

def pytest_runtest_call(item):  # runs inside the plugin's hook wrapper
    print(f"\\nFROZEN {item.name} {gc.get_freeze_count() > 0}")
'''

TESTS = '''
def test_plain():
    pass


def test_check(check_accuracy):
    pass
'''


SUITE = """
models:
  - model: models/passing_mlp.onnx
"""


def test_accuracy_tests_run_with_the_heap_frozen_and_others_do_not(pytester, models_dir):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_kinds=TESTS)
    pytester.makefile(".yaml", accuracy_models=SUITE)
    result = pytester.runpytest("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines_random(["*FROZEN test_plain False*", "*FROZEN test_check True*",
                                        "*FROZEN passing_mlp?default? True*"])
