"""A session that runs accuracy tests (tests using the plugin's check fixtures, YAML suite
items) runs its test loop in ``core.frozen_heap``; a session without any runs as pytest runs it;
garbage one accuracy test leaves is collected during the session."""
import pytest

pytestmark = pytest.mark.usefixtures("unfrozen_heap")  # the suite's own freeze undone

CONFTEST = '''
import gc

from pytest_ascend_accuracy.core.frozen_heap import AT_IMPORT  # the interpreter's own count


def pytest_runtest_call(item):
    print(f"\\nFROZEN {item.name} {gc.get_freeze_count() > AT_IMPORT}")
'''

TESTS = '''
import gc
import weakref

LEFT = []


class Node:
    def __init__(self):
        self.me = self
        self.payload = bytearray(1 << 20)


def test_check(check_accuracy):
    node = Node()
    LEFT.append(weakref.ref(node))  # a cycle, garbage once this test ends


def test_later():
    gc.collect()
    assert LEFT and LEFT[0]() is None
'''

PLAIN = '''
def test_plain():
    pass
'''

SUITE = """
models:
  - model: models/passing_mlp.onnx
"""


def test_a_session_with_accuracy_tests_runs_them_with_the_heap_frozen(pytester, models_dir):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_kinds=TESTS)
    pytester.makefile(".yaml", accuracy_models=SUITE)
    result = pytester.runpytest("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines_random(["*FROZEN test_check True*", "*FROZEN test_later True*",
                                        "*FROZEN passing_mlp?default? True*"])


def test_a_session_without_accuracy_tests_is_left_as_it_is(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_plain=PLAIN)
    result = pytester.runpytest("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*FROZEN test_plain False*"])


def test_a_session_that_collected_nothing_has_no_items_to_look_at():
    """An xdist controller collects nothing: pytest 7 then gives its session no ``items`` at
    all (later pytest an empty list); the loop runs as pytest runs it."""
    from types import SimpleNamespace

    from pytest_ascend_accuracy import plugin

    loop = plugin.pytest_runtestloop(SimpleNamespace())  # (a hookwrapper: a generator)
    next(loop)  # no AttributeError
    assert next(loop, "done") == "done"


def test_a_conftests_own_freeze_is_left_frozen(pytester, models_dir):
    # a review: the count was read when the block first ran, after the conftest had frozen
    # objects, so the block froze again and its unfreeze released the user's objects too
    pytester.makeconftest('''
import gc

gc.collect()
gc.freeze()
USER = gc.get_freeze_count()


def pytest_sessionfinish(session):
    with open("kept.txt", "w") as f:
        f.write(str(gc.get_freeze_count() > USER // 2 > 0))  # (some die by refcount)
''')
    pytester.makepyfile(test_kinds=TESTS)
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert (pytester.path / "kept.txt").read_text() == "True"
