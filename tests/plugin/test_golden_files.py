"""Stored golden files: atomic writes, the regen policy, recovery of an interrupted replace."""
import os

import numpy as np
import pytest

from pytest_ascend_accuracy.core.regen import Regen
from pytest_ascend_accuracy.golden import stored as gf
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.errors import ConfigError


def dump(scale=1.0):
    return DumpSet.from_arrays({"fc1/MatMul": [np.arange(6, dtype=np.float32).reshape(2, 3) * scale],
                                "relu1": [np.ones(4, np.float32) * scale]})


class Computer:
    def __init__(self, scale=1.0):
        self.calls, self.scale = 0, scale

    def __call__(self):
        self.calls += 1
        return dump(self.scale)


def values(d):
    return {op.name: op.outputs[0].load().tolist() for op in d}


def test_write_then_read_roundtrip(tmp_path):
    path = gf.store_golden(tmp_path / "golden" / "mlp", dump())
    back = gf.read_golden(path)
    assert values(back) == {"fc1_MatMul": [[0, 1, 2], [3, 4, 5]], "relu1": [1, 1, 1, 1]}
    names = sorted(p.name for p in path.iterdir())
    assert names == ["fc1_MatMul.0.1000000000000000.npy", "relu1.0.1000000000000001.npy"]
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]


def test_missing_is_written(tmp_path):
    compute = Computer()
    got, status = gf.GoldenPolicy().obtain(tmp_path / "g", compute)
    assert status == gf.WRITTEN_MISSING and compute.calls == 1
    assert values(got)["relu1"] == [1, 1, 1, 1]


def test_present_is_used_as_is_even_when_the_model_changed(tmp_path):
    gf.store_golden(tmp_path / "g", dump(1.0))
    compute = Computer(2.0)
    got, status = gf.GoldenPolicy().obtain(tmp_path / "g", compute)
    assert status == gf.USED and compute.calls == 0
    assert values(got)["relu1"] == [1, 1, 1, 1]
    # --accuracy-regen does not rewrite before the test ran ...
    got, status = gf.GoldenPolicy(Regen.FAILING).obtain(tmp_path / "g", compute)
    assert status == gf.USED and compute.calls == 0
    # ... only after it failed
    assert gf.GoldenPolicy(Regen.FAILING).after_failure(tmp_path / "g", compute) == gf.REWRITTEN_FAILED
    assert values(gf.read_golden(tmp_path / "g"))["relu1"] == [2, 2, 2, 2]


def test_no_flag_never_rewrites_after_failure(tmp_path):
    gf.store_golden(tmp_path / "g", dump(1.0))
    compute = Computer(2.0)
    assert gf.GoldenPolicy().after_failure(tmp_path / "g", compute) is None
    assert gf.GoldenPolicy(Regen.ALL).after_failure(tmp_path / "g", compute) is None
    assert compute.calls == 0


def test_regen_all_rewrites_before_use(tmp_path):
    gf.store_golden(tmp_path / "g", dump(1.0))
    got, status = gf.GoldenPolicy(Regen.ALL).obtain(tmp_path / "g", Computer(3.0))
    assert status == gf.REWRITTEN_ALL and values(got)["relu1"] == [3, 3, 3, 3]


def test_failed_write_keeps_the_old_golden(tmp_path):
    gf.store_golden(tmp_path / "g", dump(1.0))

    def unreadable():
        raise OSError("disk gone")

    bad = DumpSet.from_arrays({"a": [np.ones(2, np.float32)]})
    object.__setattr__(bad.ops[0].outputs[0], "loader", unreadable)
    with pytest.raises(OSError):
        gf.store_golden(tmp_path / "g", bad)
    assert values(gf.read_golden(tmp_path / "g"))["relu1"] == [1, 1, 1, 1]
    assert [p.name for p in tmp_path.iterdir()] == ["g"]


def test_interrupted_replace_is_recovered(tmp_path):
    path = gf.store_golden(tmp_path / "g", dump(1.0))
    os.rename(path, tmp_path / ".g.old-999999-abc")  # an older writer died between renames
    got, status = gf.GoldenPolicy().obtain(path, Computer(5.0))
    assert status == gf.USED and values(got)["relu1"] == [1, 1, 1, 1]


def test_a_file_in_the_way_is_an_error(tmp_path):
    (tmp_path / "g").write_text("x")
    with pytest.raises(ConfigError, match="a stored golden is a directory"):
        gf.store_golden(tmp_path / "g", dump())


def test_resolve_golden_path(tmp_path):
    assert gf.resolve_golden_path("golden/a", tmp_path) == tmp_path / "golden" / "a"
    assert gf.resolve_golden_path(tmp_path / "x", "/elsewhere") == tmp_path / "x"
    with pytest.raises(ConfigError):
        gf.resolve_golden_path(3, tmp_path)


def test_a_killed_writers_temp_dir_is_swept_by_the_next_write(tmp_path):
    import numpy as np

    from pytest_ascend_accuracy.dump.model import DumpSet
    from pytest_ascend_accuracy.golden.stored import store_golden

    from pytest_ascend_accuracy.core import writer_lock

    dead = tmp_path / ".golden.tmp-999999-deadbeef"  # its writer was killed: its lock is free
    dead.mkdir()
    (dead / "half.npy").write_bytes(b"\x93NUMPY")
    # a live writer's, named with a pid no process has here (one of another PID namespace):
    # its lock decides, not its pid
    with writer_lock.holding(tmp_path, ".golden.", "999998-cafe0000"):
        live = tmp_path / ".golden.tmp-999998-cafe0000"
        live.mkdir()
        store_golden(tmp_path / "golden", DumpSet.from_arrays({"op": [np.ones(2, np.float32)]}))
        assert not dead.exists() and live.exists()
    assert [p.name.split(".")[:2] for p in (tmp_path / "golden").iterdir()] == [["op", "0"]]
