"""Accuracy baselines with stored inputs under concurrent rewriting and reading.

Two xdist workers whose tests share one baseline (one model and mode) and record it at once
(``--accuracy-regen-all``, or both finding it missing) each renamed the inputs directory aside
and its own into place: in a stress script 20 of 600 writes failed (``ENOTEMPTY``,
``FileNotFoundError``), readers found the arrays missing, and a baseline file could end up
next to the other writer's arrays (its sha256 then reads as "rebaseline required"). One lock
per baseline path (``core.path_lock``, as stored goldens have) now covers reading, judging
and rewriting the file with its arrays."""
import time
from types import SimpleNamespace

import numpy as np
import pytest

from pytest_ascend_accuracy.baseline import check_baseline, input_spec, inputs_for_baseline, read_baseline
from pytest_ascend_accuracy.core.path_lock import path_lock

from .procs import finish, start, wait_for

pytestmark = pytest.mark.reliability

HEADER = {"backend": "emulator", "toolkit_version": "t", "soc_version": "s", "atc_args": []}

WORKER = """
import sys, time
from pathlib import Path
from types import SimpleNamespace
import numpy as np
from pytest_ascend_accuracy.baseline import check_baseline, input_spec, inputs_for_baseline
path, go, rounds, value = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
header = {"backend": "emulator", "toolkit_version": "t", "soc_version": "s", "atc_args": []}
while not go.exists():
    time.sleep(0.005)
for r in range(rounds):
    arrays = {"x": np.full((32, 32), value + r, np.float32), "y": np.arange(7) + r}
    check_baseline(SimpleNamespace(rows=()), path, header=header,
                   inputs=input_spec(arrays, stored=True), regen="all")
    got = inputs_for_baseline(None, path)  # whatever writer's, whole and matching its file
    assert got["x"].shape == (32, 32) and got["y"].shape == (7,), got
print("ok")
"""


def _record(path, value: float):
    arrays = {"x": np.full((32, 32), value, np.float32), "y": np.arange(7)}
    return check_baseline(SimpleNamespace(rows=()), path, header=HEADER,
                          inputs=input_spec(arrays, stored=True), regen="all")


def test_three_processes_recording_one_baseline_with_stored_inputs(tmp_path):
    path = tmp_path / "baselines" / "model" / "default.yaml"
    _record(path, -1.0)
    go = tmp_path / "go"
    workers = [start(WORKER, path, go, 25, 100.0 * k) for k in range(3)]
    go.write_text("")
    for w in workers:
        out = finish(w)
        assert w.returncode == 0 and out.strip().endswith("ok"), out
    stored = inputs_for_baseline(None, path)
    assert read_baseline(path).inputs.tensors == stored.spec.tensors  # the file and its arrays agree
    assert sorted(p.name for p in path.parent.iterdir()) == ["default.inputs", "default.yaml"]


RECORD_ONCE = """
import sys
from pathlib import Path
from types import SimpleNamespace
import numpy as np
from pytest_ascend_accuracy.baseline import check_baseline, input_spec
path, ready = Path(sys.argv[1]), Path(sys.argv[2])
header = {"backend": "emulator", "toolkit_version": "t", "soc_version": "s", "atc_args": []}
arrays = {"x": np.full((32, 32), 5.0, np.float32), "y": np.arange(7)}
ready.write_text("")
print(check_baseline(SimpleNamespace(rows=()), path, header=header,
                     inputs=input_spec(arrays, stored=True), regen="all").status)
"""


def test_a_baseline_is_rewritten_only_while_no_one_else_holds_it(tmp_path):
    """A writer waits for the lock another process (here, the test) holds on the baseline,
    then writes the file and its arrays together."""
    path = tmp_path / "model" / "default.yaml"
    _record(path, 1.0)
    before = path.read_text()
    lock = path_lock(path, "baseline")
    with lock:
        writer = start(RECORD_ONCE, path, tmp_path / "ready")
        wait_for(tmp_path / "ready", writer)
        time.sleep(0.3)  # without the lock, the rewrite took ~10 ms from here
        assert writer.poll() is None and path.read_text() == before
        assert float(np.load(path.with_name("default.inputs") / "00-x.npy")[0, 0]) == 1.0
    assert finish(writer).strip() == "rewritten" and writer.returncode == 0
    assert float(inputs_for_baseline(None, path)["x"][0, 0]) == 5.0
    assert path.read_text() != before
