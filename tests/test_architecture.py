"""The architecture as a checked contract: layers, no pytest below the plugin, no circles
(import-linter, configured in pyproject.toml), plus the size rules the layout keeps."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pytest_ascend_accuracy"


def test_import_contracts_are_kept():
    exe = shutil.which("lint-imports")
    if exe is None:  # the test extra installs import-linter; without it the contract is unchecked
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([exe, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_at_most_six_modules_at_the_package_root():
    root_modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root_modules) <= 6, root_modules


def test_every_layer_package_says_what_it_holds():
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        doc = init.read_text(encoding="utf-8").lstrip()
        assert doc.startswith('"""'), f"{init.relative_to(ROOT)} has no docstring"


def test_no_module_over_500_lines():
    long = [(str(p.relative_to(ROOT)), n) for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500]
    assert not long, long


def test_pytest_help_does_not_import_heavy_dependencies():
    code = ("import sys, pytest_ascend_accuracy.plugin; "
            "print(sorted(m for m in ('onnx', 'onnxruntime', 'numpy') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "onnx" not in proc.stdout, proc.stdout


#: names two of the package's modules both define, on purpose: console scripts' entry points,
#: and fixtures (plugin/fixtures.py, names fixed by the design) that call the library function
#: of their own name
ONE_NAME_TWO_FACES = {"main", "golden_dump", "check_dataset", "check_preprocessing"}


def test_no_two_public_definitions_of_the_package_share_a_name():
    """The guide's "no two things with one name": a reader who finds ``csv_rows`` or ``settle``
    finds one thing (module-level public functions and classes)."""
    import ast
    from collections import defaultdict

    where = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    and not node.name.startswith("_")):
                where[node.name].append(str(path.relative_to(PACKAGE)))
    shared = {name: paths for name, paths in where.items()
              if len(paths) > 1 and name not in ONE_NAME_TWO_FACES}
    assert not shared, shared
    assert all(len(where[name]) == 2 for name in ONE_NAME_TWO_FACES), where
