"""Where no mode restores accuracy the verdict points at the steps: it said "each step above says
where it fails", but the plugin's terminal lists no step (only diagnosis.txt does) and
``ascend-accuracy diagnose`` prints the verdict before its ``steps:`` list (a PP-OCRv4 trial).
The pointer names the list, which each rendering that shows the verdict has or points to."""
import pytest

pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.backends.emulator import EmulatorBackend, Fault  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402
from pytest_ascend_accuracy.triage.flow import diagnose  # noqa: E402


def test_the_verdict_names_the_steps_list_not_a_place_above_it(tmp_path):
    cache = Cache(tmp_path / "cache")
    d = diagnose(models.conv_bn_relu(), backend=EmulatorBackend(cache, faults=[
        Fault.on_op("conv2")]), cache=cache, out_dir=tmp_path / "out")
    assert d.restored_by is None and "no conversion mode restores accuracy" in d.verdict
    assert "above" not in d.verdict and "below" not in d.verdict
    assert "(the diagnosis's steps: list says where each fails)" in d.verdict
    written = (tmp_path / "out" / "diagnosis.txt").read_text().splitlines()
    # the list it names: after the verdict, one line per step saying where it fails
    assert written.index(f"  {d.verdict}") < written.index("steps:")
    assert any(line.startswith("  step 4 fusion_off [fusion_off]: FAILED | fails at op ")
               for line in written)
