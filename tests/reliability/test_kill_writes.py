"""A process killed (SIGKILL) while it writes a baseline, a baseline's stored inputs, or a stored
golden npy directory: the old content stays whole and readable, and the next run repairs."""
import os
import signal

import numpy as np
import pytest

from pytest_ascend_accuracy.golden import stored as golden_files
from pytest_ascend_accuracy.baseline.check import check_baseline
from pytest_ascend_accuracy.baseline.file import read_baseline
from pytest_ascend_accuracy.baseline.inputs import inputs_dir, inputs_for_baseline
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.testing import models

from .procs import HANG, finish, start, wait_for

pytestmark = pytest.mark.reliability
HEADER = {"backend": "emulator", "toolkit_version": "t", "soc_version": "s", "atc_args": []}


def _result(scale=1.0):
    from pytest_ascend_accuracy.compare.engine import compare_dumps

    g = {"a": [np.linspace(1, 2, 50, dtype=np.float32)], "b": [np.ones(4, np.float32)]}
    a = {k: [v[0] * scale] for k, v in g.items()}
    return compare_dumps(DumpSet.from_arrays(a), DumpSet.from_arrays(g), kl=False)


def _kill(script, *args, flag):
    worker = start(script, *args, flag)
    wait_for(flag, worker)
    os.kill(worker.pid, signal.SIGKILL)
    finish(worker)
    assert worker.returncode == -signal.SIGKILL


BASELINE_KILLED = HANG + """
import numpy as np
from pytest_ascend_accuracy.baseline import file as baseline_file
from pytest_ascend_accuracy.baseline.check import check_baseline
from pytest_ascend_accuracy.baseline.file import InputSpec
from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet
path, flag = sys.argv[1:3]
baseline_file.os.fsync = lambda fd: signal_and_hang(flag)   # temp file written, not renamed
g = {"a": [np.linspace(1, 2, 50, dtype=np.float32)], "b": [np.ones(4, np.float32)]}
a = {"a": [g["a"][0] + 0.3 * np.sin(np.arange(50, dtype=np.float32))], "b": g["b"]}
result = compare_dumps(DumpSet.from_arrays(a), DumpSet.from_arrays(g), kl=False)
check_baseline(result, path, header={"backend": "emulator", "toolkit_version": "t",
               "soc_version": "s", "atc_args": []}, inputs=InputSpec(seed=0, tensors=()), regen="all")
"""


def test_baseline_killed_mid_write_keeps_the_old_file(tmp_path):
    from pytest_ascend_accuracy.baseline.file import InputSpec

    path = tmp_path / "b" / "default.yaml"
    spec = InputSpec(seed=0, tensors=())
    check_baseline(_result(), path, header=HEADER, inputs=spec)
    before = path.read_bytes()
    _kill(BASELINE_KILLED, path, flag=tmp_path / "flag")
    assert path.read_bytes() == before and read_baseline(path).ops
    stale = [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    assert len(stale) == 1  # the dead writer's temp file, never the baseline itself
    assert check_baseline(_result(), path, header=HEADER, inputs=spec).passed
    check_baseline(_result(), path, header=HEADER, inputs=spec, regen="all")  # next write
    assert sorted(p.name for p in path.parent.iterdir()) == ["default.yaml"]


INPUTS_KILLED = HANG + """
import numpy as np
from pytest_ascend_accuracy.baseline import inputs as baseline_inputs
from pytest_ascend_accuracy.baseline.file import InputSpec
path, flag = sys.argv[1:3]
real = os.rename
calls = []
def rename(src, dst):
    calls.append(dst)
    if len(calls) == 2:                 # old directory moved aside, new one not yet in place
        signal_and_hang(flag)
    real(src, dst)
baseline_inputs.os.rename = rename
spec = baseline_inputs.input_spec({"x": np.full((1, 16), 2, np.float32)}, stored=True)
baseline_inputs.write_stored_inputs(path, spec)
"""


def test_stored_inputs_killed_between_renames_are_restored(tmp_path):
    model = models.passing_mlp()
    path = tmp_path / "b" / "default.yaml"
    first = inputs_for_baseline(model, path, inputs={"x": np.ones((1, 16), np.float32)})
    check_baseline(_result(), path, header=HEADER, inputs=first)
    _kill(INPUTS_KILLED, path, flag=tmp_path / "flag")
    assert not inputs_dir(path).exists()  # the kill hit the window between the renames
    with pytest.warns(UserWarning, match="recovered the previous stored inputs"):  # and says so
        again = inputs_for_baseline(model, path)  # repairs: the old arrays come back
    np.testing.assert_array_equal(again["x"], 1.0)
    assert check_baseline(_result(), path, header=HEADER, inputs=again).passed
    assert sorted(p.name for p in path.parent.iterdir()) == ["default.inputs", "default.yaml"]


GOLDEN_WRITE_KILLED = HANG + """
import numpy as np
from pytest_ascend_accuracy.golden import stored as golden_files
from pytest_ascend_accuracy.dump import npy_writer
from pytest_ascend_accuracy.dump.model import DumpSet
path, when, flag = sys.argv[1:4]
if when == "mid-write":
    real_save = npy_writer.NpyDumpWriter._save
    def save(self, name, array, ts):
        if name.startswith("b."):
            signal_and_hang(flag)
        return real_save(self, name, array, ts)
    npy_writer.NpyDumpWriter._save = save
else:
    real = os.rename
    calls = []
    def rename(src, dst):   # 1: tmp -> .new (complete), 2: golden -> .del, 3: .new -> golden
        calls.append(dst)
        if len(calls) == 3:
            signal_and_hang(flag)
        real(src, dst)
    golden_files.os.rename = rename
golden_files.store_golden(path, DumpSet.from_arrays({"a": [np.full(3, 9.0)], "b": [np.full(2, 9.0)]}))
"""


@pytest.mark.parametrize("when, wins", [("mid-write", 1.0), ("between-renames", 9.0)])
def test_stored_golden_killed_while_being_replaced(tmp_path, when, wins):
    """Killed before its new golden was complete: the old one stays. Killed after (between the
    renames, the golden gone): the complete new one is put in place, never the stale old one."""
    path = tmp_path / "goldens" / "mlp"
    golden_files.store_golden(path, DumpSet.from_arrays({"a": [np.ones(3)], "b": [np.ones(2)]}))
    _kill(GOLDEN_WRITE_KILLED, path, when, flag=tmp_path / "flag")
    assert path.exists() == (when == "mid-write")
    done = golden_files.recover_interrupted(path)  # what GoldenPolicy.obtain runs first
    assert bool(done.installed) == (when == "between-renames") and done.removed
    dump = golden_files.read_golden(path)
    assert dump.names == ["a", "b"]
    np.testing.assert_array_equal(dump["a"].output().load(), wins)
    np.testing.assert_array_equal(dump["b"].output().load(), wins)
    assert [p.name for p in path.parent.iterdir()] == ["mlp"]  # every leftover removed
