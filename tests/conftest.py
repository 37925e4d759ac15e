"""How the suite's own processes run (never what a test checks).

* onnxruntime sessions made by the tests do not spin while they wait
  (``graph.onnx_graph.set_ort_threads``): the suite runs thousands of tiny models, and a pool
  thread that spins after every run burned four times the CPU of the work itself
  (tests/emulator/test_streaming.py: 1.2 s of CPU per test with spinning, 0.25 s without; the
  same values either way).
* Where ``PYTHONDONTWRITEBYTECODE`` is set (some containers set it), every child process of the
  suite (pytester subprocess runs, xdist workers, the fake atc) compiles and assertion-rewrites
  every module again, about 0.5 s of CPU each. The children share one bytecode cache for this run
  instead, in a temporary folder outside the source tree (``PYTHONPYCACHEPREFIX``), removed at
  the end. Nothing changes where the variable is not set.
"""
import os
import shutil
import tempfile

from pytest_ascend_accuracy.graph.onnx_graph import set_ort_threads

set_ort_threads(spinning=False)

_OWNED_PREFIX = None
if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
    _OWNED_PREFIX = tempfile.mkdtemp(prefix="ascend-accuracy-suite-pyc-")
    os.environ["PYTHONPYCACHEPREFIX"] = _OWNED_PREFIX
    del os.environ["PYTHONDONTWRITEBYTECODE"]


def pytest_configure(config):
    # inside an xdist worker (``-n 2``) every in-process pytester run sees PYTEST_XDIST_WORKER
    # and pytest-benchmark, when installed, warns that it disables itself: noise, not a finding
    config.addinivalue_line("filterwarnings", "ignore:Benchmarks are automatically disabled")


def pytest_unconfigure(config):
    if _OWNED_PREFIX is not None and not hasattr(config, "workerinput"):
        shutil.rmtree(_OWNED_PREFIX, ignore_errors=True)
