"""Which runs of a diagnosis dump op inputs: the first (the base mode, whose dump the input
check of step 5 reads) dumps every op's inputs and outputs, every later one its outputs only
(compared by outputs, they doubled each run's files). The diagnosis's verdict is the same."""
import pytest

pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.backends.emulator import EmulatorBackend  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402
from pytest_ascend_accuracy.triage.flow import diagnose  # noqa: E402


class Recording(EmulatorBackend):
    """The emulator, remembering each run's dump mode and whether its dump held op inputs."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.runs = []

    def run(self, converted, inputs, **kw):
        dump = super().run(converted, inputs, **kw)
        self.runs.append((kw.get("dump_mode"), any(op.inputs for op in dump)))
        return dump


def test_only_the_first_run_of_a_diagnosis_dumps_op_inputs(tmp_path):
    cache = Cache(tmp_path / "cache")
    backend = Recording(cache)
    d = diagnose(models.overflow(), backend=backend, cache=cache)
    assert d.restored_by == "keep_dtype" and d.keep_dtype == ("norm",)  # as with every run "all"
    assert d.step("data").passed is True  # step 5 read the first run's inputs
    assert len(backend.runs) >= 3
    assert backend.runs[0] == ("all", True)
    assert all(run == ("output", False) for run in backend.runs[1:]), backend.runs
