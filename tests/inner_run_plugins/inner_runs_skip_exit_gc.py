"""PYTEST_DONT_REWRITE (a module of a few lines, imported again by every in-process run).

A pytest plugin the suite loads into every pytest run its tests start (tests/conftest.py:
``PYTEST_ADDOPTS`` names it, ``PYTHONPATH`` finds it), never into a user's run.

Since pytest 8.4 each pytest process ends with five full ``gc.collect()`` passes before it
reports unraisable exceptions (``_pytest.unraisableexception.cleanup``): 0.17 s in a process
that has imported onnx and onnxruntime and ran nothing, more after checks. pytester skips them
for its in-process runs (``gc_collect_iterations_key`` set to 0, the key exists for it); the
suite's subprocess runs and their xdist workers paid them every time: the 55 tests of
tests/plugin's xdist, BLAS-thread, benchmark-environment, rerun, cache-integration and
missing-onnx files took 99 s (115 s of CPU) before, 73 s (100 s of CPU) with this plugin. No
test of the suite looks for an unraisable exception in an inner run. A pytest without the key
(before 8.4) makes no such passes: nothing to set.
"""


def pytest_configure(config):
    try:
        from _pytest.unraisableexception import gc_collect_iterations_key
    except ImportError:
        return
    config.stash[gc_collect_iterations_key] = 0
