"""PYTEST_DONT_REWRITE. ``-p record_controller_modules`` in a test's xdist run: the controller
(no ``workerinput``) writes ``controller_modules.json``, the heavy modules it holds once
everything is printed (tests/plugin/test_controller_imports.py, tests/dataset/test_plugin.py)."""
import json
import sys

import pytest

HEAVY = ("numpy", "onnx", "onnxruntime")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):
        with open("controller_modules.json", "w") as f:
            json.dump(sorted(m for m in HEAVY if m in sys.modules), f)
