"""A YAML check asks for its golden once its model is converted, and waits up to
``EARLY_GOLDEN_WAIT_S`` for another xdist worker's build of it: asked first and not waited for,
the worker reaching PP-OCRv4 det's first check while the other built its golden (0.55-0.7 s)
missed it by 0.13 s, ran with its dump written (379 MB at 736x736) and compared from the files.
In an A/B of the 8-check suite (det and cls x 4 modes, cold cache, ``-n 2``, 8 rounds each,
/tmp/x2/ab2.py, 2026-12-06), that check found the golden in 8 of 8 rounds (0 of 8 before, 1 of
8 asked after converting without waiting); ``-n 2`` medians 4.34 s wall and 7.63 s CPU against
5.06 s and 8.45 s before (4.61 s and 8.14 s without the wait), serial 5.33 s and 6.56 s. A
longer build is not waited for: this worker runs meanwhile. Serially the order costs nothing
(both are needed), and a model the converter refuses fails before its golden is computed."""

CALLS_LOGGED = '''
import pytest_ascend_accuracy.plugin.accuracy_check as ac

_convert, _fresh = ac.convert_model, ac.fresh_golden


def _logged(name, call):
    def wrapper(*args, **kwargs):
        with open("calls.txt", "a") as f:
            f.write(f"{name} wait={kwargs.get('wait', True)}\\n")
        return call(*args, **kwargs)
    return wrapper


def pytest_configure(config):
    ac.convert_model = _logged("convert", _convert)
    ac.fresh_golden = _logged("golden", _fresh)


def pytest_unconfigure(config):  # (this run is in the suite's own process)
    ac.convert_model, ac.fresh_golden = _convert, _fresh
'''

SUITE = """
defaults:
  threshold: 0.0
models:
  - model: models/passing_mlp.onnx
"""


def test_a_yaml_check_asks_for_its_golden_once_converted(pytester, models_dir):
    pytester.makeconftest(CALLS_LOGGED)
    pytester.makefile(".yaml", accuracy_one=SUITE)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    calls = (pytester.path / "calls.txt").read_text().splitlines()
    assert calls[:2] == ["convert wait=True", "golden wait=1.0"], calls
