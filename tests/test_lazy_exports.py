"""The packages that re-export their modules' names lazily (``core.lazy_exports``): each name is
the function or class it was when the packages imported them eagerly, whichever module was
imported first, ``dir()`` lists them, and importing a package imports no numpy. Checked in a
new interpreter: this one has imported everything already."""
import json
import subprocess
import sys

import pytest

from pytest_ascend_accuracy.core.lazy_exports import lazy_exports

PACKAGES = ("compare", "dump", "report", "dataset")

PROBE = """
import json, sys, types
import pytest_ascend_accuracy.{pkg} as pkg
light = "numpy" not in sys.modules
import pytest_ascend_accuracy.report.html_report  # (imports report.failure_text, the module)
from pytest_ascend_accuracy.report import failure_text
names = {{n: type(getattr(pkg, n)).__name__ for n in pkg.__all__}}
print(json.dumps([light, callable(failure_text) and not isinstance(failure_text, types.ModuleType),
                  names, sorted(set(pkg.__all__) - set(dir(pkg)))]))
"""


@pytest.mark.parametrize("pkg", PACKAGES)
def test_each_name_is_the_export_and_the_package_imports_no_numpy(pkg):
    done = subprocess.run([sys.executable, "-c", PROBE.format(pkg=pkg)], capture_output=True,
                          text=True, check=True)
    light, failure_text_is_the_function, names, not_in_dir = json.loads(done.stdout)
    assert light, f"import pytest_ascend_accuracy.{pkg} imported numpy"
    assert failure_text_is_the_function  # was the module report/failure_text.py
    assert names and "module" not in names.values(), names
    assert not_in_dir == []


def test_a_module_outside_the_package_is_refused():
    with pytest.raises(ValueError, match=r"'\.\.plugin\.x' is not one of its own modules"):
        lazy_exports("pytest_ascend_accuracy.report", {"..plugin.x": ["y"]})
