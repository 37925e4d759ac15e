"""The runtime session against the FAKE pyACL / ais_bench modules (sys.modules) and fake .om files
written by the FAKE atc. Checks call order, acl.json, dump discovery and device errors."""
import json
import sys

import numpy as np
import pytest

from pytest_ascend_accuracy.backends.ascend.dump_dirs import check_empty_dump_path, dump_leaves
from pytest_ascend_accuracy.backends.ascend.runtime import AscendRuntime, ascend_runtime_available
from pytest_ascend_accuracy.dump.ascend_bin import read_dump_file
from pytest_ascend_accuracy.errors import BackendError, ConfigError, DumpFormatError
from pytest_ascend_accuracy.testing import fake_runtime


@pytest.fixture
def tiny_om(fake_oms):
    return fake_oms["tiny"]


def x_input():
    return {"x": np.random.default_rng(1).standard_normal((1, 3, 4, 4)).astype(np.float32)}


def test_acl_run_with_dump_follows_the_documented_call_order(monkeypatch, tiny_om, tmp_path):
    npu = fake_runtime.install(monkeypatch, flavor="acl")
    with AscendRuntime(0) as rt:
        first = rt.run(tiny_om, x_input(), model_name="tiny", dump_path=tmp_path / "d1")
        second = rt.run(tiny_om, x_input(), model_name="tiny", dump_path=tmp_path / "d2")
        assert rt.describe() == "acl on device 0"
    run = ["mdl.init_dump", "mdl.set_dump", "mdl.load_from_file", "mdl.execute", "rt.synchronize_device",
           "mdl.finalize_dump", "mdl.unload"]  # pyACL finalize_dump page: finalize_dump, then unload
    assert npu.calls == ["init", "rt.set_device(0)", "rt.create_context(0)", *run, *run,
                         "rt.destroy_context", "rt.reset_device(0)", "finalize"]
    assert npu.protocol_errors == []
    assert json.loads(first.acl_json.read_text()) == {"dump": {
        "dump_list": [{"model_name": "tiny"}], "dump_path": str((tmp_path / "d1").resolve()),
        "dump_mode": "all", "dump_op_switch": "off"}}
    leaf = first.dump
    assert leaf.path.relative_to(tmp_path / "d1").parts[1:] == ("0", "tiny", "1", "0")
    assert len(leaf.timestamp) == 14 and second.dump.model_id == 2
    names = sorted(read_dump_file(p).name for p in leaf.path.iterdir())
    assert names == ["add1", "conv1", "sig1"]  # conv1+relu1 fused by the fake ATC
    assert first.outputs[0].shape == (1, 4, 4, 4) and first.outputs[0].dtype == np.float32


def test_the_fake_loses_dumps_of_an_undocumented_order(monkeypatch, tiny_om, tmp_path):
    """Without a device synchronise the dump is still in flight at finalize_dump, and an unload
    before finalize_dump breaks the documented order: the fake says so (so the driver's order
    above is checked, not assumed)."""
    npu = fake_runtime.install(monkeypatch, flavor="acl")
    monkeypatch.setattr(sys.modules["acl"].rt, "synchronize_device", lambda: 0)  # a driver that skips it
    with AscendRuntime(0) as rt, pytest.raises(BackendError, match="no dump of model 'tiny'"):
        rt.run(tiny_om, x_input(), model_name="tiny", dump_path=tmp_path / "d1")
    assert npu.protocol_errors == ["acl.mdl.finalize_dump while dump data of model 1 was still in flight: "
                                   "1 run(s) lost (synchronise the stream/device first)"]
    acl = sys.modules["acl"]
    (tmp_path / "d2").mkdir()
    (tmp_path / "acl.json").write_text(json.dumps({"dump": {"dump_list": [{"model_name": "tiny"}],
                                                            "dump_path": str(tmp_path / "d2")}}))
    acl.init()
    acl.rt.set_device(0)
    assert acl.mdl.init_dump() == 0 and acl.mdl.set_dump(str(tmp_path / "acl.json")) == 0
    model_id, _ = acl.mdl.load_from_file(str(tiny_om))
    acl.mdl.unload(model_id)
    acl.mdl.finalize_dump()
    assert npu.protocol_errors[-1] == (f"acl.mdl.unload({model_id}) before acl.mdl.finalize_dump: the "
                                       "documented order is execute -> finalize_dump -> unload")


def test_output_only_dump_mode_and_no_dump_run(monkeypatch, tiny_om, tmp_path):
    fake_runtime.install(monkeypatch, flavor="acl")
    with AscendRuntime(0) as rt:
        result = rt.run(tiny_om, x_input(), model_name="tiny", dump_path=tmp_path / "d", dump_mode="output")
        plain = rt.run(tiny_om, x_input(), model_name="tiny")
    ops = [read_dump_file(p) for p in result.dump.path.iterdir()]
    assert all(op.inputs == () and len(op.outputs) == 1 for op in ops)
    assert plain.dump is None and plain.acl_json is None
    np.testing.assert_array_equal(plain.outputs[0], result.outputs[0])


def test_missing_device_id_is_a_clear_error(monkeypatch, tiny_om, tmp_path):
    npu = fake_runtime.install(monkeypatch, flavor="acl", device_count=2)
    rt = AscendRuntime(3)
    with pytest.raises(BackendError, match=r"Ascend device 3 does not exist: this machine has 2 device\(s\) "
                                           r"\(ids 0\.\.1\)"):
        rt.run(tiny_om, x_input(), model_name="tiny", dump_path=tmp_path / "d")
    assert npu.calls[-1] == "finalize" and not npu.open_devices


def test_dump_path_holding_an_earlier_run_is_refused(monkeypatch, tiny_om, tmp_path):
    fake_runtime.install(monkeypatch, flavor="acl")
    with AscendRuntime(0) as rt:
        rt.run(tiny_om, x_input(), model_name="tiny", dump_path=tmp_path / "d")
        before = sorted(p for p in (tmp_path / "d").rglob("*"))
        with pytest.raises(DumpFormatError, match=r"already holds dumps of 1 earlier run\(s\) "
                                                  r"\(\d{14}/0/tiny/1/0\); each run needs its own empty"):
            rt.run(tiny_om, x_input(), model_name="tiny", dump_path=tmp_path / "d")
    assert sorted(p for p in (tmp_path / "d").rglob("*")) == before


def test_several_runs_in_one_tree_are_reported(tmp_path):
    for step in ("0", "1"):
        leaf = tmp_path / "20240101120000" / "0" / "tiny" / "1" / step
        leaf.mkdir(parents=True)
        (leaf / "Conv.conv1.1.0.1700000000000000").write_bytes(b"x")
    assert [leaf.step for leaf in dump_leaves(tmp_path)] == [0, 1]
    with pytest.raises(DumpFormatError, match="2 earlier run"):
        check_empty_dump_path(tmp_path)
    from pytest_ascend_accuracy.backends.ascend.dump_dirs import find_run_dump

    with pytest.raises(DumpFormatError, match=r"holds dumps of model 'tiny' from 2 runs"):
        find_run_dump(tmp_path, model_name="tiny", device_id=0)


def test_ais_bench_run_and_its_once_per_process_acl_json(monkeypatch, fake_oms, tmp_path):
    npu = fake_runtime.install(monkeypatch, flavor="ais_bench")
    tiny_om, other = fake_oms["tiny"], fake_oms["other"]
    with AscendRuntime(0) as rt:
        assert rt.driver.name == "ais_bench"
        first = rt.run(tiny_om, x_input(), model_name="tiny", dump_path=tmp_path / "d1")
        assert sorted(read_dump_file(p).name for p in first.dump.path.iterdir()) == ["add1", "conv1", "sig1"]
        with pytest.raises(BackendError, match="aclruntime reads acl.json only when it initialises ACL"):
            rt.run(other, x_input(), model_name="other", dump_path=tmp_path / "d2")
    assert npu.calls == ["InferSession(0)", "InferSession(0)"]


def test_ais_bench_missing_device(monkeypatch, tiny_om, tmp_path):
    fake_runtime.install(monkeypatch, flavor="ais_bench")
    with pytest.raises(BackendError, match=r"ais_bench could not load .*tiny.om on Ascend device 5: "
                                           r".*aclrtSetDevice\(5\) failed"):
        AscendRuntime(5).run(tiny_om, x_input(), model_name="tiny", dump_path=tmp_path / "d")


def test_runtime_choice(monkeypatch):
    fake_runtime.install(monkeypatch, flavor="both")
    assert AscendRuntime(0).driver.name == "acl"
    monkeypatch.setenv("ASCEND_ACCURACY_RUNTIME", "ais_bench")
    assert AscendRuntime(0).driver.name == "ais_bench"
    monkeypatch.setenv("ASCEND_ACCURACY_RUNTIME", "tensorrt")
    with pytest.raises(ConfigError, match=r"from \$ASCEND_ACCURACY_RUNTIME"):
        AscendRuntime(0)
    with pytest.raises(ConfigError, match="integer >= 0"):
        AscendRuntime(-1, runtime="acl")


def test_runtime_available_reports_what_is_missing(monkeypatch, fake_atc_on_path):
    monkeypatch.setitem(sys.modules, "acl", None)
    monkeypatch.setitem(sys.modules, "ais_bench.infer.interface", None)
    ok, reason = ascend_runtime_available()
    assert not ok and "no Ascend runtime can be imported (acl: " in reason
    fake_runtime.install(monkeypatch, flavor="acl")
    ok, reason = ascend_runtime_available()
    assert ok and reason.startswith("Ascend runtime acl, atc ")
    monkeypatch.setenv("PATH", "")
    ok, reason = ascend_runtime_available()
    assert not ok and "ATC not found" in reason
    assert ascend_runtime_available(need_atc=False) == (True, "Ascend runtime acl")


def test_fake_runtime_honours_layer_and_input_dump_mode(monkeypatch, tiny_om, tmp_path):
    """acl.json 'layer' and dump_mode 'input', driven through the pyACL driver and the fake acl."""
    from pytest_ascend_accuracy.backends.ascend.acl_driver import AclDriver
    from pytest_ascend_accuracy.backends.ascend.acl_json import write_acl_json

    npu = fake_runtime.install(monkeypatch, flavor="acl")
    cfg = write_acl_json(tmp_path / "acl.json", tmp_path / "d", ["tiny"], dump_mode="input",
                         layers={"tiny": ["relu1", "sig1"]})
    driver = AclDriver(0)
    try:
        outputs = driver.run(tiny_om, x_input(), acl_json=cfg)
    finally:
        driver.close()
    [leaf] = npu.dumps
    ops = {read_dump_file(p).name: read_dump_file(p) for p in leaf.iterdir()}
    assert sorted(ops) == ["conv1", "sig1"]  # relu1 is inside the fused conv1
    assert [t.shape for t in ops["conv1"].inputs] == [(1, 3, 4, 4), (4, 3, 3, 3)] and ops["conv1"].outputs == ()
    assert outputs[0].shape == (1, 4, 4, 4)


def test_acl_initialised_elsewhere_is_not_finalized_by_us(monkeypatch, tiny_om, tmp_path):
    npu = fake_runtime.install(monkeypatch, flavor="acl")
    assert sys.modules["acl"].init() == 0  # another component of the process owns ACL
    with AscendRuntime(0) as rt:
        rt.run(tiny_om, x_input(), model_name="tiny", dump_path=tmp_path / "d")
    assert npu.calls[-2:] == ["rt.destroy_context", "rt.reset_device(0)"] and npu.acl_initialised
