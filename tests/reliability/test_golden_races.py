"""D4 and D5: stored goldens under concurrent regeneration and under kills.

D4: xdist workers of ``-n 8 --accuracy-regen-all`` that share one stored golden all rewrote it at
once, without a lock (about 1 run in 10 failed with FileNotFoundError / ENOTEMPTY). Here four
real processes do the same, many times over. D5: a replace killed at any point is recovered
deterministically (the complete new golden, else the old one) and the leftovers are reported.
The full probes (``-n 8`` x10, kill x20) are ``benchmarks/probe_golden_races.py``."""
import os
import signal

import numpy as np
import pytest

from pytest_ascend_accuracy.core.regen import Regen
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.golden import stored as golden_files

from .procs import HANG, finish, start, wait_for

pytestmark = pytest.mark.reliability

REGEN_ALL_WORKER = """
import sys, time
from pathlib import Path
import numpy as np
from pytest_ascend_accuracy.core.regen import Regen
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.golden.stored import GoldenPolicy
path, go, rounds, value = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
def compute():
    return DumpSet.from_arrays({f"op{i}": [np.full(64, value, np.float32)] for i in range(12)})
while not go.exists():
    time.sleep(0.005)
for _ in range(rounds):
    dump, status = GoldenPolicy(Regen.ALL).obtain(path, compute)
    got = {op.name: float(op.outputs[0].load()[0]) for op in dump}
    assert got == {f"op{i}": value for i in range(12)}, got
print("ok")
"""


def _run_workers(tmp_path, path, values, rounds):
    go = tmp_path / "go"
    workers = [start(REGEN_ALL_WORKER, path, go, rounds, v) for v in values]
    go.write_text("")
    outs = [finish(w) for w in workers]
    for w, out in zip(workers, outs):
        assert w.returncode == 0 and out.strip().endswith("ok"), out


def test_four_processes_regenerating_one_golden(tmp_path):
    """The -n 8 --accuracy-regen-all scenario in small: every worker regenerates the same golden
    (stale at the start) 8 times; none fails, each reads a whole golden, nothing is left over."""
    path = tmp_path / "goldens" / "mlp"
    golden_files.store_golden(path, DumpSet.from_arrays({"stale": [np.zeros(3, np.float32)]}))
    _run_workers(tmp_path, path, [7.0] * 4, rounds=8)  # old code: 5 of 5 runs failed
    assert sorted(op.name for op in golden_files.read_golden(path)) == sorted(f"op{i}" for i in range(12))
    assert [p.name for p in path.parent.iterdir()] == ["mlp"]


def test_identical_regeneration_leaves_the_directory_untouched(tmp_path):
    path = tmp_path / "g"
    d = DumpSet.from_arrays({"a": [np.ones(3, np.float32)]})
    golden_files.store_golden(path, d)
    inode = path.stat().st_ino
    _, status = golden_files.GoldenPolicy(Regen.ALL).obtain(path, lambda: d)
    assert status == golden_files.UNCHANGED_ALL and path.stat().st_ino == inode


# -- D5: kills at every step of a replace ----------------------------------------------------------
KILLED_AT = HANG + """
import numpy as np
from pytest_ascend_accuracy.golden import stored as golden_files
from pytest_ascend_accuracy.dump import npy_writer
from pytest_ascend_accuracy.dump.model import DumpSet
path, step, flag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if step == 0:                                     # while the new files are being written
    real_save = npy_writer.NpyDumpWriter._save
    def save(self, name, array, ts):
        if name.startswith("b."):
            signal_and_hang(flag)
        return real_save(self, name, array, ts)
    npy_writer.NpyDumpWriter._save = save
else:                                             # before rename 1 (tmp -> new), 2 (golden -> del),
    real = os.rename                              # 3 (new -> golden); 4: while old is removed
    calls = []
    def rename(src, dst):
        calls.append(dst)
        if len(calls) == step:
            signal_and_hang(flag)
        real(src, dst)
    golden_files.os.rename = rename
    real_remove = golden_files._remove
    def remove(p):                                # the old copy (.old- before the fix)
        if step >= 4 and (".del-" in p.name or ".old-" in p.name):
            if step == 5:                         # 5: killed half way through deleting it
                for f in sorted(p.iterdir())[:1]:
                    f.unlink()
            signal_and_hang(flag)
        real_remove(p)
    golden_files._remove = remove
golden_files.store_golden(path, DumpSet.from_arrays({"a": [np.full(3, 9.0)], "b": [np.full(2, 9.0)]}))
"""


@pytest.mark.parametrize("step, wins", [(1, 1.0), (2, 9.0), (4, 9.0)])  # 0, 3: test_kill_writes
def test_replace_killed_at_each_step(tmp_path, step, wins):
    """Before the new golden is complete (steps 0, 1) the old one is used; once it is complete
    (steps 2-4) the new one (the old code restored the stale old one at step 3); never a mix, never a stale copy brought back. Leftovers are removed
    and reported through ``on_recovery``."""
    path = tmp_path / "goldens" / "mlp"
    golden_files.store_golden(path, DumpSet.from_arrays({"a": [np.ones(3)], "b": [np.ones(2)]}))
    flag = tmp_path / "flag"
    worker = start(KILLED_AT, path, step, flag)
    wait_for(flag, worker)
    os.kill(worker.pid, signal.SIGKILL)
    finish(worker)
    notes = []
    policy = golden_files.GoldenPolicy(on_recovery=lambda p, note: notes.append(note))
    dump, status = policy.obtain(path, lambda: pytest.fail("a golden is there: nothing to compute"))
    assert status == golden_files.USED
    assert {op.name: op.outputs[0].load().tolist() for op in dump} == {"a": [wins] * 3, "b": [wins] * 2}
    assert [p.name for p in path.parent.iterdir()] == ["mlp"]
    assert len(notes) == 1 and ("recovered the complete new golden" in notes[0]) == (step in (2, 3))
    assert "removed" in notes[0] or step in (2, 3)


def test_an_old_copy_killed_half_deleted_never_becomes_the_golden(tmp_path):
    """Review finding: a rewrite killed while it deleted the old copy left part of it as
    ``.mlp.old-*``; once the user deleted the golden, recovery installed that part and the
    test compared against it. The old copy is deleted under a name recovery never restores."""
    path = tmp_path / "goldens" / "mlp"
    golden_files.store_golden(path, DumpSet.from_arrays({"a": [np.ones(3)], "b": [np.ones(2)]}))
    flag = tmp_path / "flag"
    worker = start(KILLED_AT, path, 5, flag)
    wait_for(flag, worker)
    os.kill(worker.pid, signal.SIGKILL)
    finish(worker)
    golden_files._remove(path)  # the user deletes the golden
    fresh = DumpSet.from_arrays({"a": [np.full(3, 4.0)], "b": [np.full(2, 4.0)]})
    dump, status = golden_files.GoldenPolicy().obtain(path, lambda: fresh)
    assert status == golden_files.WRITTEN_MISSING  # the old code: USED, with "b" alone
    assert ({op.name: op.outputs[0].load().tolist() for op in dump}
            == {"a": [4.0] * 3, "b": [4.0] * 2})
    assert [p.name for p in path.parent.iterdir()] == ["mlp"]


def _record(directory, files):
    import json

    (directory / "golden.json").write_text(json.dumps({"record_version": 1, "tensors": files}))


@pytest.mark.parametrize("name, complete, restored", [
    (".g.old-999999-dead", True, True),               # layout without write times, whole
    (".g.old-999999-dead", False, False),             # ... missing a file its golden.json lists
    (".g.old-999999-1796459358614919748-dead", True, False),  # left while being deleted
])
def test_an_old_copy_comes_back_only_when_known_complete(tmp_path, name, complete, restored):
    path, old = tmp_path / "g", tmp_path / name
    golden_files.store_golden(old, DumpSet.from_arrays({"a": [np.full(2, 5.0)], "b": [np.ones(2)]}))
    files = {p.name: "float64" for p in old.glob("*.npy")}
    if not complete:
        next(old.glob("b.*")).unlink()
    _record(old, files)
    done = golden_files.recover_interrupted(path)
    assert (done.installed == name) == restored and path.exists() == restored
    assert [p.name for p in tmp_path.iterdir()] == (["g"] if restored else [])
    if not restored:
        assert done.removed == [name] and f"removed {name} without restoring it" in done.note()


def test_an_old_copy_is_not_restored_over_a_golden_in_place(tmp_path):
    """What the old code did wrong: a ``.old-*`` of a dead writer next to an intact golden is
    removed and reported, never brought back."""
    path = tmp_path / "g"
    golden_files.store_golden(path, DumpSet.from_arrays({"a": [np.full(2, 5.0)]}))
    stale = tmp_path / ".g.old-999999-1-dead"
    golden_files.store_golden(stale, DumpSet.from_arrays({"a": [np.zeros(2)]}))
    done = golden_files.recover_interrupted(path)
    assert done.installed is None and done.removed == [stale.name]
    assert golden_files.read_golden(path)["a"].output().load().tolist() == [5.0, 5.0]


def test_a_lock_held_too_long_is_an_error_naming_the_golden_and_the_lock(tmp_path):
    from pytest_ascend_accuracy.errors import ConfigError

    path = tmp_path / "g"
    with golden_files.golden_lock(path):  # another writer holds it
        with pytest.raises(ConfigError) as err:
            with golden_files._Locked(path, timeout=0.05):
                pass
    assert err.value.where == str(path) and ".lock" in err.value.problem


@pytest.mark.parametrize("regen", [Regen.NONE, Regen.ALL])
def test_a_file_where_a_stored_golden_goes_is_said_so_and_kept(tmp_path, regen):
    """Without a regen flag, a file at a stored golden's place was read as a golden and
    reported as a truncated dump file (review helper); with one it was already refused."""
    from pytest_ascend_accuracy.errors import ConfigError
    from pytest_ascend_accuracy.golden.stored import GoldenPolicy

    path = tmp_path / "golden" / "mlp"
    path.parent.mkdir()
    path.write_text("x\n")
    golden = DumpSet.from_arrays({"a": [np.ones(2, np.float32)]})
    with pytest.raises(ConfigError, match="a stored golden is a directory, but a file is in the "
                                          "way: move or remove it"):
        GoldenPolicy(regen=regen).obtain(path, lambda: golden)
    assert path.read_text() == "x\n"
