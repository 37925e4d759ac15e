"""A baseline's stored inputs rewritten by a process killed (SIGKILL) while it deleted the old
copy: the part left over never becomes the inputs, as for stored goldens (D5, review finding of
2026-12-05: the old copy was deleted in place as ``.default.inputs.old-*``, and once the user
deleted ``default.inputs`` recovery put the half-deleted copy back)."""
import os
import shutil
import signal
import warnings

import numpy as np
import pytest

from pytest_ascend_accuracy.baseline.check import check_baseline
from pytest_ascend_accuracy.baseline.inputs import inputs_dir, inputs_for_baseline
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.testing import models

from .procs import HANG, finish, start, wait_for

pytestmark = pytest.mark.reliability

KILLED_MID_DELETE = HANG + """
import shutil
import numpy as np
from pytest_ascend_accuracy.baseline import inputs as baseline_inputs
path, flag = sys.argv[1:3]
real_rmtree = shutil.rmtree
# the replaced copy (.old- before the fix): one file gone, then killed
def rmtree(p, *args, **kwargs):
    if ".del-" in os.path.basename(p) or ".old-" in os.path.basename(p):
        sorted(Path(p).iterdir())[0].unlink()
        signal_and_hang(flag)
    real_rmtree(p, *args, **kwargs)
shutil.rmtree = rmtree
two = {"x": np.full((1, 16), 2, np.float32), "y": np.full(4, 2, np.int64)}
baseline_inputs.write_stored_inputs(path, baseline_inputs.input_spec(two, stored=True))
"""


def test_an_old_inputs_copy_killed_half_deleted_never_becomes_the_inputs(tmp_path):
    from test_baseline_helpers import HEADER, make_result

    model, path = models.passing_mlp(), tmp_path / "b" / "default.yaml"
    one = {"x": np.ones((1, 16), np.float32), "y": np.ones(4, np.int64)}
    check_baseline(make_result(), path, header=HEADER,
                   # no model: its input names are checked, and no tiny model has these two
                   inputs=inputs_for_baseline(None, path, inputs=one))
    flag = tmp_path / "flag"
    worker = start(KILLED_MID_DELETE, path, flag)
    wait_for(flag, worker)
    os.kill(worker.pid, signal.SIGKILL)
    finish(worker)
    assert worker.returncode == -signal.SIGKILL
    shutil.rmtree(inputs_dir(path))  # the user deletes the inputs directory
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        with pytest.raises(ConfigError, match="stored input 'x' of the baseline is missing"):
            inputs_for_baseline(model, path)
    # the old code put the half-deleted copy back as default.inputs (holding 01-y.npy alone)
    assert sorted(p.name for p in path.parent.iterdir()) == ["default.yaml"]
    notes = [str(w.message) for w in said]
    from pytest_ascend_accuracy.core.locations import shown  # relative to here, as printed

    assert len(notes) == 1 and notes[0].startswith(
        f"stored inputs of baseline {shown(path, os.getcwd())}: removed 1 leftover of "
        "interrupted writes (.default.inputs.del-")
    again = inputs_for_baseline(None, path, inputs=one)  # the user stores the arrays again
    assert check_baseline(make_result(), path, header=HEADER, inputs=again, regen="all").passed
    assert sorted(p.name for p in path.parent.iterdir()) == ["default.inputs", "default.yaml"]
