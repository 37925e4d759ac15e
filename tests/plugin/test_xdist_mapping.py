"""Worker -> device mapping and ASCEND_RT_VISIBLE_DEVICES handling (pure functions)."""
import pytest

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.backends.devices import (VISIBLE_ENV, assign_device, check_devices_visible,
                                                     parse_device_list, worker_index)


def test_parse_device_list():
    assert parse_device_list("0") == (0,)
    assert parse_device_list(" 0, 1 ,") == (0, 1)


@pytest.mark.parametrize("text, problem", [
    ("a", "device ids are non-negative integers separated by commas, got 'a'"),
    ("-1", "device ids are non-negative integers separated by commas, got '-1'"),
    ("0,0", "device 0 is listed twice in '0,0'"),
    (",", "no device id in ','"),
])
def test_parse_device_list_errors(text, problem):
    with pytest.raises(ConfigError) as info:
        parse_device_list(text)
    assert str(info.value) == f"--ascend-device: {problem}"


def test_worker_index():
    assert worker_index(None) == 0 and worker_index("master") == 0 and worker_index("gw12") == 12
    with pytest.raises(ConfigError):
        worker_index("node7")


def test_round_robin_over_devices():
    got = [assign_device((0, 1), f"gw{k}", num_workers=4, environ={}).physical for k in range(4)]
    assert got == [0, 1, 0, 1]
    a = assign_device((0, 1), "gw2", num_workers=4, environ={})
    assert a.logical == 0 and a.shared
    assert not assign_device((0, 1), "gw1", num_workers=2, environ={}).shared


def test_no_xdist_takes_first_device():
    a = assign_device((3, 5), None, environ={})
    assert (a.physical, a.logical) == (3, 3)
    assert a.describe() == "device 3"


def test_visible_devices_are_mapped_to_logical_ids():
    env = {VISIBLE_ENV: "4,6,7"}
    a = assign_device((6, 7), "gw0", environ=env)
    assert (a.physical, a.logical) == (6, 1)
    b = assign_device((6, 7), "gw1", environ=env)
    assert (b.physical, b.logical) == (7, 2)
    assert b.describe() == f"device 7 (logical 2 of {VISIBLE_ENV}=4,6,7)"


def test_invisible_device_is_an_error():
    with pytest.raises(ConfigError) as info:
        assign_device((0,), None, environ={VISIBLE_ENV: "4,5"})
    assert str(info.value) == f"--ascend-device: device 0 is not visible: {VISIBLE_ENV}=4,5"
    with pytest.raises(ConfigError, match=r"device\(s\) 0, 1 not visible"):
        check_devices_visible((0, 1, 4), environ={VISIBLE_ENV: "4,5"})
    check_devices_visible((4,), environ={VISIBLE_ENV: "4,5"})
    check_devices_visible((0,), environ={VISIBLE_ENV: ""})  # empty: not restricting


def test_device_lock_serialises(tmp_path):
    from filelock import FileLock, Timeout

    from pytest_ascend_accuracy.backends.devices import DeviceLock

    with DeviceLock(tmp_path, 3) as held:
        assert held.path == tmp_path / ".locks" / "device-3.lock"
        with pytest.raises(Timeout):
            FileLock(str(held.path)).acquire(timeout=0.05)  # another worker would wait here
    FileLock(str(held.path)).acquire(timeout=0.05).lock.release()


def test_state_round_trips_through_workeroutput():
    import json

    from pytest_ascend_accuracy.plugin.session import AccuracyState, CheckRecord, Settings

    worker = AccuracyState(Settings())
    worker.record(CheckRecord("t.py::a", "m", "default", False, first_op="x", first_value=0.5))
    worker.record_golden_write("golden/m", "written (missing)", "t.py::a")
    data = json.loads(json.dumps(worker.to_workeroutput()))  # plain data only
    controller = AccuracyState(Settings())
    controller.merge_worker(data)
    controller.merge_worker({"records": [], "cache": {"hits": 2, "misses": 1, "rebuilt": 0}})
    assert controller.records == worker.records
    assert controller.golden_writes == worker.golden_writes
    assert controller.cache_stats() == {"hits": 2, "misses": 1, "rebuilt": 0}
    assert controller.workers_merged == 2
