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
    d = diagnose(models.overflow_model(), backend=backend, cache=cache)
    assert d.restored_by == "keep_dtype" and d.keep_dtype == ("norm",)  # as with every run "all"
    assert d.step("data").passed is True  # step 5 read the first run's inputs
    assert len(backend.runs) >= 3
    assert backend.runs[0] == ("all", True)
    assert all(run == ("output", False) for run in backend.runs[1:]), backend.runs


class OnDisk(Recording):
    """Also counts, at each run, the runs whose dumps are on disk."""

    def run(self, converted, inputs, **kw):
        root = kw["dump_dir"].parent
        self.on_disk = max(getattr(self, "on_disk", 0), len(list(root.iterdir())))
        return super().run(converted, inputs, **kw)


def test_a_searchs_runs_leave_no_dump_on_disk(tmp_path):
    """Each run's files stayed until the diagnosis ended (PP-OCRv4 det 160 at threshold
    0.99999: 32 runs, 1.1 GB, most of them the keep_dtype search's); now a search's run's files
    go once it is judged: two_overflows' search runs three sets, with the first two runs' dumps
    (default, high precision) the only ones on disk."""
    cache = Cache(tmp_path / "cache")
    backend = OnDisk(cache)
    d = diagnose(models.two_overflows(), backend=backend, cache=cache)
    assert d.restored_by == "keep_dtype" and d.keep_dtype == ("norm_a", "norm_b")
    assert len(backend.runs) == 5 and backend.on_disk == 2


def test_a_removed_dump_is_run_again_where_a_step_reads_it(tmp_path):
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.core.modes import Mode
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
    from pytest_ascend_accuracy.triage.runner import Runner

    cache, model = Cache(tmp_path / "cache"), models.overflow_model()
    inputs = make_inputs(model)
    golden = golden_dump(model, inputs, cache=cache)
    run = Runner(EmulatorBackend(cache), model, inputs, golden, judge=lambda r: r.judge(0.95),
                 budget=8, input_shape=None, dump_root=tmp_path / "dumps", progress=print)
    run.evaluate(Mode())
    ev = run.evaluate(Mode(keep_dtype=("norm",)), keep_dump=False)
    assert ev.removed and not ev.dump_dir.exists()
    dump = run.dump_of(ev)
    assert ev.dump_dir.is_dir() and not ev.removed
    again = compare_dumps(dump, golden)
    assert [r.metrics.value("cosine") for r in again.rows] == [
        r.metrics.value("cosine") for r in ev.result.rows]


def test_a_removal_that_left_a_file_is_run_again_into_a_folder_of_its_own(tmp_path, monkeypatch):
    """A removal can leave a file (NFS's .nfsXXXX of a file still open): a device's run refuses
    a dump folder holding an earlier run's files, so the run goes into one of its own (H91)."""
    import shutil

    from pytest_ascend_accuracy.core.modes import Mode
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
    from pytest_ascend_accuracy.triage import runner as runner_module

    cache, model = Cache(tmp_path / "cache"), models.overflow_model()
    inputs = make_inputs(model)
    golden = golden_dump(model, inputs, cache=cache)
    run = runner_module.Runner(EmulatorBackend(cache), model, inputs, golden,
                               judge=lambda r: r.judge(0.95), budget=8, input_shape=None,
                               dump_root=tmp_path / "dumps", progress=lambda _: None)
    run.evaluate(Mode())

    real = shutil.rmtree

    def leaves_a_file(path, ignore_errors=False):
        real(path, ignore_errors=ignore_errors)
        path.mkdir()
        (path / ".nfs0001").write_bytes(b"")

    monkeypatch.setattr(runner_module.shutil, "rmtree", leaves_a_file)
    ev = run.evaluate(Mode(keep_dtype=("norm",)), keep_dump=False)
    assert ev.removed
    dump = run.dump_of(ev)
    assert ev.dump_dir.name.endswith("-again") and dump.root.startswith(str(ev.dump_dir))
