"""A YAML check asks for its golden (without waiting for another xdist worker's build of it)
once its model is converted, not before: asked first, a worker that found another one building
the golden ran with its dump written (379 MB for PP-OCRv4 det 736x736) and compared from the
files, while the conversion it did next outlasted the other's build. In an A/B of the 8-check
suite (det and cls x 4 modes, cold cache, ``-n 2``, six rounds each, /tmp/x2/ab2.py), asking
after the conversion ran at a median 4.42 s wall and 7.57 s CPU against 4.62 s and 7.97 s, and
4.64 s and 8.02 s against 5.04 s and 8.48 s in a second set. Serially the order costs nothing
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
    assert calls[:2] == ["convert wait=True", "golden wait=False"], calls
