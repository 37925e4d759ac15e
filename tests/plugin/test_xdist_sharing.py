"""Under pytest-xdist: each worker's onnxruntime threads are its share of the cores, and YAML
checks alternate by model so workers start on different models."""
import os
from types import SimpleNamespace

import pytest

from pytest_ascend_accuracy.core import cpu_share
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph import onnx_graph
from pytest_ascend_accuracy.plugin.xdist_support import (DIST_KEY, _worksteal_runs,
                                                         interleave_models, share_cores,
                                                         steal_by_default)


@pytest.fixture(autouse=True)
def _restore_threads(monkeypatch):
    monkeypatch.delenv("ASCEND_ACCURACY_ORT_THREADS", raising=False)
    saved = dict(onnx_graph._ORT_THREADS)
    monkeypatch.setattr(cpu_share, "_SHARE", [None])
    yield
    onnx_graph._ORT_THREADS.update(saved)


def _config(workers=None, dist="load"):
    if workers is None:
        return SimpleNamespace()
    return SimpleNamespace(workerinput={"workerid": "gw0", "workercount": workers,
                                        DIST_KEY: dist},
                           option=SimpleNamespace(maxschedchunk=None))


def test_workers_share_the_cores_without_spinning(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    share_cores(_config(2))
    assert onnx_graph._ORT_THREADS == {"intra": 4, "spinning": False, "chosen": False}
    assert cpu_share.core_share() == 4  # the compare's worker processes too
    share_cores(_config(16))
    assert onnx_graph._ORT_THREADS == {"intra": 1, "spinning": False, "chosen": False}
    assert cpu_share.core_share() == 1


def test_a_serial_run_keeps_what_was_set():
    onnx_graph.set_ort_threads(0, spinning=True)
    share_cores(_config())
    assert onnx_graph._ORT_THREADS == {"intra": 0, "spinning": True, "chosen": False}
    share_cores(_config(1))
    assert onnx_graph._ORT_THREADS == {"intra": 0, "spinning": True, "chosen": False}
    assert cpu_share.core_share() == cpu_share.machine_cores()


def test_environment_override(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    monkeypatch.setenv("ASCEND_ACCURACY_ORT_THREADS", "0")
    share_cores(_config(2))
    assert onnx_graph._ORT_THREADS == {"intra": 0, "spinning": True, "chosen": True}
    assert cpu_share.core_share() == 4  # the override is onnxruntime's alone
    monkeypatch.setenv("ASCEND_ACCURACY_ORT_THREADS", "many")
    with pytest.raises(ConfigError, match="ASCEND_ACCURACY_ORT_THREADS"):
        share_cores(_config(2))


def test_a_run_that_writes_as_it_goes_leaves_the_writer_a_core(monkeypatch):
    """Golden and emulated runs write each segment's tensors while onnxruntime computes the
    next: onnxruntime gets the process's share of the cores (at most its physical cores) less
    one, unless a count was asked for."""
    cpus = [set(range(8))]
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: cpus[0], raising=False)
    monkeypatch.setattr(cpu_share, "physical_cores", lambda: len(cpus[0]))
    onnx_graph._ORT_THREADS.update(intra=0, spinning=True, chosen=False)
    assert onnx_graph.ort_threads_beside_writer() == 7
    monkeypatch.setattr(cpu_share, "physical_cores", lambda: 4)  # SMT: 8 CPUs on 4 cores
    assert onnx_graph.ort_threads_beside_writer() == 3
    monkeypatch.setattr(cpu_share, "physical_cores", lambda: len(cpus[0]))
    cpus[0] = {0}
    assert onnx_graph.ort_threads_beside_writer() == 1  # never none
    cpus[0] = set(range(8))
    share_cores(_config(2))  # an xdist worker: its share of 4, one of them for its writer
    assert onnx_graph.ort_threads_beside_writer() == 3
    share_cores(_config(8))
    assert onnx_graph.ort_threads_beside_writer() == 1
    monkeypatch.setenv("ASCEND_ACCURACY_ORT_THREADS", "0")
    share_cores(_config(2))  # onnxruntime's default asked for: kept
    assert onnx_graph.ort_threads_beside_writer() == 0
    monkeypatch.setenv("ASCEND_ACCURACY_ORT_THREADS", "5")
    share_cores(_config(2))
    assert onnx_graph.ort_threads_beside_writer() == 5


def test_the_physical_cores_are_no_more_than_the_cpus():
    assert 1 <= cpu_share.physical_cores() <= cpu_share.machine_cores()


def test_the_topology_is_read_once_per_set_of_cpus(monkeypatch):
    counted = []
    monkeypatch.setattr(cpu_share, "_PHYSICAL", {})
    monkeypatch.setattr(cpu_share, "_count_cores", lambda cpus: counted.append(cpus) or len(cpus))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert cpu_share.physical_cores() == cpu_share.physical_cores() == 2 and len(counted) == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)  # pinned anew
    assert cpu_share.physical_cores() == 1 and len(counted) == 2


def test_the_emulated_and_golden_runs_use_it(monkeypatch, tmp_path):
    pytest.importorskip("onnxruntime")
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph import stream
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
    from pytest_ascend_accuracy.testing import models

    onnx_graph._ORT_THREADS.update(intra=0, spinning=True, chosen=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(3)), raising=False)
    monkeypatch.setattr(cpu_share, "physical_cores", lambda: 3)
    threads = []
    real = stream.SegmentedModel.__init__

    def spy(self, model, wanted, **options):
        threads.append(options.get("threads", 0))
        real(self, model, wanted, **options)

    monkeypatch.setattr(stream.SegmentedModel, "__init__", spy)
    model = models.conv_bn_relu()
    cache = Cache(tmp_path / "cache")
    golden_dump(model, make_inputs(model), cache=cache)
    backend = EmulatorBackend(cache)
    converted = backend.convert(model)
    backend.run(converted, make_inputs(model), dump_dir=tmp_path / "d")
    backend.outputs(converted, make_inputs(model))  # no writer: onnxruntime's own default
    assert threads == [2, 2, 0]
    state = EmulatorBackend(cache, threads=3)._state(converted)
    assert state.segmented(["x"], writing=True).threads == 3  # the backend's own setting wins


def test_session_options_follow_the_setting():
    pytest.importorskip("onnxruntime")
    onnx_graph.set_ort_threads(3, spinning=False)
    so = onnx_graph.session_options()
    assert so.intra_op_num_threads == 3
    assert so.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def _item(name, model=None):
    return SimpleNamespace(name=name, case=SimpleNamespace(model=model) if model else None)


def test_yaml_checks_alternate_by_model_on_workers():
    items = [_item("py"), _item("det-a", "det"), _item("det-b", "det"), _item("det-c", "det"),
             _item("cls-a", "cls"), _item("cls-b", "cls")]
    serial = list(items)
    interleave_models(_config(), serial)
    assert serial == items  # not under xdist: untouched
    few = list(items)  # fewer than 2 tests a worker: xdist deals them out one by one
    interleave_models(_config(4), few)
    assert [i.name for i in few] == ["py", "det-a", "cls-a", "det-b", "cls-b", "det-c"]
    interleave_models(_config(2), items)  # else in chunks of 2 (xdist: max(n // workers // 4, 2))
    assert [i.name for i in items] == ["py", "det-a", "det-b", "cls-a", "cls-b", "det-c"]


def _names(models, per_model):
    return [_item(f"{m}-{k}", m) for m in models for k in "abcd"[:per_model]]


@pytest.mark.parametrize("workers, models, other, runs", [
    # xdist's worksteal sends 2 workers 4 + 4 tests: the second run starts on cls
    (2, ["det", "cls"], 0, [["det-a", "det-b", "cls-a", "cls-b"],
                            ["cls-c", "cls-d", "det-c", "det-d"]]),
    # a test of the session that is no check keeps its place, and counts in the runs (4 + 5)
    (2, ["det", "cls"], 1, [["py", "det-a", "det-b", "cls-a"],
                            ["cls-b", "cls-c", "det-c", "det-d", "cls-d"]]),
    # 3 workers, 3 models of 2 checks: 2 + 2 + 2, each run on a model of its own
    (3, ["det", "cls", "rec"], 0, [["det-a", "det-b"], ["cls-a", "cls-b"], ["rec-a", "rec-b"]]),
])
def test_under_worksteal_each_workers_first_run_starts_on_another_model(workers, models, other,
                                                                        runs):
    """xdist's worksteal first splits the collection into one run of consecutive tests per
    worker (``_worksteal_runs``); ordered for load, both runs of 8 PP-OCRv4 checks started on
    det, and the second worker ran a det check with its dump written beside the golden build."""
    per_model = 4 if len(models) == 2 else 2
    items = [_item("py")] * other + _names(models, per_model)
    interleave_models(_config(workers, dist="worksteal"), items)
    names = [i.name for i in items]
    assert [names[a:b] for a, b in _worksteal_runs(len(names), workers)] == runs
    for model in models:  # each model's checks in their own order
        assert [n for n in names if n.startswith(model)] == sorted(n for n in names
                                                                   if n.startswith(model))


def test_a_model_of_few_checks_is_kept_for_the_run_that_starts_on_it():
    """A x6, B x2: the first run took both B checks and the second started on A too (H84)."""
    items = [_item(f"A{k}", "A") for k in range(6)] + [_item(f"B{k}", "B") for k in range(2)]
    interleave_models(_config(2, dist="worksteal"), items)
    assert [i.name for i in items] == ["A0", "A1", "B0", "A2", "B1", "A3", "A4", "A5"]
    few = [_item(f"A{k}", "A") for k in range(2)] + [_item(f"B{k}", "B") for k in range(6)]
    interleave_models(_config(2, dist="worksteal"), few)
    assert [i.name for i in few][::4] == ["A0", "B2"]  # each run on its own model first


def test_a_run_of_no_checks_starts_on_no_model():
    """Plain tests fill the first run: the order of the checks after them holds (the first
    version failed the collection of every worker, KeyError: None, the example project's)."""
    items = ([_item(f"py{k}") for k in range(4)] + [_item(f"A{k}", "A") for k in range(2)]
             + [_item(f"B{k}", "B") for k in range(2)])
    interleave_models(_config(2, dist="worksteal"), items)
    assert [i.name for i in items] == ["py0", "py1", "py2", "py3", "A0", "A1", "B0", "B1"]


def test_a_run_of_no_checks_takes_no_turn_of_the_models():
    """A check, a plain test, two checks, three workers: the third run started on the first
    run's model, the other one free (H86)."""
    items = [_item("A0", "A"), _item("py"), _item("A1", "A"), _item("B0", "B")]
    interleave_models(_config(3, dist="worksteal"), items)
    assert [i.name for i in items] == ["A0", "py", "B0", "A1"]


def test_an_item_whose_model_is_no_path_is_no_check():
    items = [_item("x", 3), _item("A0", "A"), _item("B0", "B")]
    interleave_models(_config(2, dist="worksteal"), items)  # (os.path.realpath(3) raised)
    assert [i.name for i in items] == ["x", "A0", "B0"]


def test_one_model_file_spelled_two_ways_is_one_model(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "sub").mkdir()
    one, other = tmp_path / "models" / "m.onnx", tmp_path / "sub" / ".." / "models" / "m.onnx"
    items = ([_item(f"m-{k}", one if k in "ac" else other) for k in "abcd"]
             + [_item(f"n-{k}", tmp_path / "n.onnx") for k in "abcd"])
    interleave_models(_config(2, dist="worksteal"), items)
    assert [i.name for i in items] == ["m-a", "m-b", "n-a", "n-b", "n-c", "n-d", "m-c", "m-d"]


def test_worksteal_runs_are_xdist_s_first_split():
    """The sizes xdist 3.x's ``WorkStealingScheduling.check_schedule`` sends idle workers."""
    assert _worksteal_runs(8, 2) == [(0, 4), (4, 8)]
    assert _worksteal_runs(9, 2) == [(0, 4), (4, 9)]
    assert _worksteal_runs(10, 3) == [(0, 3), (3, 6), (6, 10)]
    assert _worksteal_runs(1, 2) == [(0, 0), (0, 1)]


def _controller(numprocesses=2, dist="no", ini=True, **option):
    """A controller's config as ``pytest_cmdline_main`` sees it, before xdist turns an unset
    ``--dist`` ("no") into "load"."""
    options = {"numprocesses": numprocesses, "dist": dist, "distload": False,
               "maxschedchunk": None, "looponfail": False, **option}
    return SimpleNamespace(option=SimpleNamespace(**options), getini=lambda name: ini)


def test_n_without_dist_schedules_by_work_stealing():
    config = _controller()
    assert steal_by_default(config) and config.option.dist == "worksteal"
    config = _controller(numprocesses="auto")  # resolved by xdist afterwards
    assert steal_by_default(config) and config.option.dist == "worksteal"


@pytest.mark.parametrize("config", [
    _controller(dist="load"),  # --dist load, however given
    _controller(dist="loadscope"),
    _controller(numprocesses=0),  # -n 0: no workers
    _controller(numprocesses=None),  # no -n
    _controller(distload=True),  # -d: xdist's short --dist load
    _controller(maxschedchunk=1),  # load's own tuning
    _controller(looponfail=True),
    _controller(ini=False),  # ascend_accuracy_worksteal = false
    SimpleNamespace(option=_controller().option, getini=lambda name: True, workerinput={}),
], ids=["dist-load", "loadscope", "n0", "no-n", "d", "maxschedchunk", "looponfail", "ini-false",
        "worker"])
def test_a_given_dist_and_the_workers_are_left_alone(config):
    before = config.option.dist
    assert not steal_by_default(config)
    assert config.option.dist == before


@pytest.mark.parametrize("version", ["3.2.0", "3.1.0", "2.5.0"])
def test_an_xdist_whose_work_stealing_can_hang_keeps_load(monkeypatch, version):
    """pytest-xdist 3.2.0's worksteal could hang at the end of a run (fixed in 3.2.1, #884);
    before 3.2 there is none."""
    from importlib import metadata

    monkeypatch.setattr(metadata, "version", lambda dist: version)
    config = _controller()
    assert not steal_by_default(config) and config.option.dist == "no"
    monkeypatch.setattr(metadata, "version", lambda dist: "3.2.1")
    assert steal_by_default(config) and config.option.dist == "worksteal"
