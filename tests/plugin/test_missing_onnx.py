"""Without onnx (``pip install -e .``: no extra) a YAML suite's collection stopped with a bare
``ModuleNotFoundError: No module named 'onnx'`` naming nothing to install (a trial on four
Pythons); each check now says which extra to install, and the command it gives is the README's."""
import onnx
from inner_run_env import inner_run_pythonpath

from pytest_ascend_accuracy.testing import models as tiny_models

BLOCK = '''
import sys


class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("onnx", "onnxruntime"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, _Block())
'''


def test_a_session_without_onnx_says_what_to_install(pytester, monkeypatch):
    onnx.save(tiny_models.passing_mlp(), str(pytester.path / "mlp.onnx"))
    (pytester.path / "site").mkdir()
    (pytester.path / "site" / "sitecustomize.py").write_text(BLOCK)
    monkeypatch.setenv("PYTHONPATH", inner_run_pythonpath(pytester.path / "site"))
    pytester.makefile(".yaml", accuracy_m="models:\n  - model: mlp.onnx\n    inputs: {seed: 0}\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(failed=1)  # collected: the suite's item ran and said why
    assert ("ascend-accuracy configuration error: onnx: onnx is not installed; every golden and "
            "emulated run needs onnx and onnxruntime 1.21 or newer: pip install "
            "'pytest-ascend-accuracy[onnx]' (from a clone: pip install -e '.[onnx]')"
            ) in result.stdout.lines
    assert "ModuleNotFoundError" not in result.stdout.str()


def test_the_cli_without_onnx_says_what_to_install(pytester, monkeypatch):
    # a review: `ascend-accuracy diagnose` reached model_digest's own `import onnx` first
    import subprocess
    import sys

    onnx.save(tiny_models.passing_mlp(), str(pytester.path / "mlp.onnx"))
    (pytester.path / "site").mkdir()
    (pytester.path / "site" / "sitecustomize.py").write_text(BLOCK)
    monkeypatch.setenv("PYTHONPATH", str(pytester.path / "site"))
    done = subprocess.run([sys.executable, "-m", "pytest_ascend_accuracy.cli", "diagnose",
                           "mlp.onnx"], cwd=pytester.path, capture_output=True, text=True)
    assert done.returncode == 2, done
    assert "onnx is not installed" in done.stderr and "pip install " in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
