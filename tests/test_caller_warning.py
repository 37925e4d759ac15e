"""``core.caller_warning``: which line a library warning names."""
import sys
import warnings

from pytest_ascend_accuracy.core.caller_warning import warn_at_caller


def _called_from(module_name: str, filename: str):
    """The warnings caught when ``warn_at_caller`` is called from code of ``module_name`` whose
    file is ``filename`` (compiled with that name, as an installed module's code is)."""
    code = compile("def call(warn):\n    warn(UserWarning('w'))\n", filename, "exec")
    scope = {"__name__": module_name}
    exec(code, scope)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scope["call"](warn_at_caller)
    return caught


def test_an_installed_test_suite_is_the_users_code():
    """A suite installed in site-packages and run with --pyargs: told by location, every frame
    was 'installed' and the warning named a line of this package (a review)."""
    path = f"{sys.prefix}/lib/site-packages/accsuite/test_suite.py"
    (caught,) = _called_from("accsuite.test_suite", path)
    assert (caught.filename, caught.lineno) == (path, 2)


def test_the_machinery_that_runs_tests_is_skipped():
    (caught,) = _called_from("_pytest.python", "/somewhere/_pytest/python.py")
    assert caught.filename == __file__  # the first frame past it: this test


def test_one_warning_per_line_however_often_it_is_called():
    code = compile("def call(warn):\n    for _ in range(5):\n        warn(UserWarning('w'))\n",
                   "/proj/tests/test_loop.py", "exec")
    scope = {"__name__": "test_loop"}
    exec(code, scope)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        scope["call"](warn_at_caller)
    assert len(caught) == 1


def test_a_pytest_plugins_fixture_that_calls_the_test_is_machinery(monkeypatch):
    """A review: pytest-benchmark's benchmark.pedantic(ascend_model, ...) made the warning name
    pytest_benchmark/fixture.py:280; the installed pytest plugins' packages are skipped."""
    from pytest_ascend_accuracy.core import caller_warning

    monkeypatch.setattr(caller_warning, "_plugin_packages",
                        lambda: frozenset({"some_pytest_plugin"}))
    (caught,) = _called_from("some_pytest_plugin.fixture", "/site/some_pytest_plugin/fixture.py")
    assert caught.filename == __file__
