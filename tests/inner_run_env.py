"""What every pytest run the suite's tests start is given (tests/conftest.py's docstring):
``PYTEST_ADDOPTS`` options and a ``PYTHONPATH`` that finds the suite's inner-run plugins."""
import os

#: the folder of the plugins every pytest run a test starts loads
INNER_RUN_PLUGINS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inner_run_plugins")

#: added to ``PYTEST_ADDOPTS`` for every test
INNER_RUN_ADDOPTS = "-p no:hypothesispytest -p inner_runs_skip_exit_gc"


def inner_run_pythonpath(*paths) -> str:
    """A ``PYTHONPATH`` of ``paths`` on which the suite's inner runs still find
    ``INNER_RUN_PLUGINS`` (a test that sets its own keeps it through this)."""
    return os.pathsep.join([*map(str, paths), INNER_RUN_PLUGINS])
