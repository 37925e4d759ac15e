"""docs/ascend_backend.md's recipes for trying the Ascend path on the fakes, run as printed:
the plugin file that lets ``-n 2`` use them (each xdist worker imports it) on the example
project, which must end as the page says."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from inner_run_env import inner_run_pythonpath

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ascend_backend.md"


def _block(start: str) -> str:
    """The ```python block of the page whose first line starts with ``start``."""
    for block in re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S):
        if block.startswith(start):
            return block
    raise AssertionError(f"no python block starting {start!r} in {DOC}")


def test_the_xdist_plugin_recipe_runs_the_example_project_as_the_page_says(tmp_path):
    project = tmp_path / "repo"
    shutil.copytree(ROOT / "example_project", project / "example_project",
                    ignore=shutil.ignore_patterns(".ascend-accuracy", "__pycache__", "rep*"))
    plugin = _block("# fake_ascend_plugin.py").replace("/tmp/fake-ascend-", f"{tmp_path}/fake-")
    (project / "fake_ascend_plugin.py").write_text(plugin, encoding="utf-8")
    command = re.search(r"`(PYTHONPATH=\. python -m pytest -p fake_ascend_plugin -n 2 [^`]*)`",
                        DOC.read_text(encoding="utf-8")).group(1)
    argv = command.split()[1:]  # after PYTHONPATH=.
    assert argv[:3] == ["python", "-m", "pytest"]
    env = dict(os.environ, PYTHONPATH=inner_run_pythonpath(project))  # (and the suite's)
    env.pop("ASCEND_RT_VISIBLE_DEVICES", None)
    proc = subprocess.run([sys.executable, *argv[1:], "-p", "no:cacheprovider"], cwd=project,
                          env=env, capture_output=True, text=True, timeout=300)
    assert " 1 failed, 15 passed in " in proc.stdout.strip().splitlines()[-1], proc.stdout
    assert "FAILED example_project/tests/test_aipp_model.py::test_aipp_model_on_raw_frames" in \
        proc.stdout
