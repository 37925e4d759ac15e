"""Worker -> device mapping and ASCEND_RT_VISIBLE_DEVICES handling (pure functions)."""
import pytest

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.backends.devices import (VISIBLE_ENV, assign_device, check_devices_visible,
                                                     parse_device_list, parse_visible, worker_index)


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
    got = [assign_device((0, 1), f"gw{k}", num_workers=4, environ={}).device_id for k in range(4)]
    assert got == [0, 1, 0, 1]
    a = assign_device((0, 1), "gw2", num_workers=4, environ={})
    assert a.index == 0 and a.shared
    assert not assign_device((0, 1), "gw1", num_workers=2, environ={}).shared


def test_no_xdist_takes_first_device():
    a = assign_device((3, 5), None, environ={})
    assert (a.device_id, a.index) == (3, 3)
    assert a.describe() == "device 3"


def test_visible_devices_are_mapped_to_their_index():
    """CANN: under ASCEND_RT_VISIBLE_DEVICES=1,2,3 "the device index values are 0, 1, 2; use the
    index value when you specify a device" (envref_07_0028)."""
    env = {VISIBLE_ENV: "4,6,7"}
    a = assign_device((6, 7), "gw0", environ=env)
    assert (a.device_id, a.index) == (6, 1)
    b = assign_device((6, 7), "gw1", environ=env)
    assert (b.device_id, b.index) == (7, 2)
    assert b.describe() == f"device 7 (index 2 under {VISIBLE_ENV}=4,6,7)"
    assert assign_device((4,), None, environ=env).describe() == (
        f"device 4 (index 0 under {VISIBLE_ENV}=4,6,7)")


def test_invisible_device_is_an_error_naming_the_ids_to_pass():
    with pytest.raises(ConfigError) as info:
        assign_device((0,), None, environ={VISIBLE_ENV: "4,5"})
    assert str(info.value) == (
        f"--ascend-device: device 0 is not visible: {VISIBLE_ENV}=4,5 lists device ids 4, 5; "
        f"--ascend-device takes those ids (they are passed to the runtime as each one's index "
        f"among them); e.g. --ascend-device=4,5")
    with pytest.raises(ConfigError) as info:
        check_devices_visible((0, 1, 4), environ={VISIBLE_ENV: "4,5"})
    assert "devices 0, 1 are not visible" in str(info.value)
    pasted = str(info.value).rsplit("=", 1)[1]  # the printed fix, as given
    check_devices_visible(parse_device_list(pasted), environ={VISIBLE_ENV: "4,5"})
    check_devices_visible((4,), environ={VISIBLE_ENV: "4,5"})
    check_devices_visible((0,), environ={VISIBLE_ENV: ""})  # empty: not restricting


@pytest.mark.parametrize("value, read", [
    ("1, 2,3", (1,)),  # CANN's own example: a space before 2, so only 1 is read
    ("0,1,", (0, 1)),
    ("2,3;4", (2, 3)),
    ("5", (5,)),
])
def test_the_visible_list_is_read_as_the_runtime_reads_it(value, read):
    """CANN (envref_07_0028): ids separated by commas, "if other characters are contained,
    only the device ids before them are read"; the plugin once read "1, 2,3" as 1, 2, 3 and
    refused "0,1,"."""
    assert parse_visible(value) == read
    if value != "1, 2,3":
        return
    with pytest.raises(ConfigError) as info:  # the error says why 2 is not visible
        check_devices_visible((1, 2), environ={VISIBLE_ENV: value})
    assert (f"{VISIBLE_ENV}=1, 2,3 (the runtime reads only 1: it stops at ' ') lists device "
            f"id 1;") in str(info.value)


@pytest.mark.parametrize("value, problem", [
    ("3,1", "supports only distinct ids in ascending order; e.g. ASCEND_RT_VISIBLE_DEVICES=1,3"),
    ("2,2", "supports only distinct ids in ascending order; e.g. ASCEND_RT_VISIBLE_DEVICES=2"),
    (" 1", "names no device"),
    ("gpu0", "names no device"),
])
def test_a_visible_list_the_runtime_cannot_take_is_refused(value, problem):
    """CANN: "only ascending order is supported"; a value with no id before another character
    leaves the runtime nothing to read."""
    with pytest.raises(ConfigError) as info:
        parse_visible(value)
    assert problem in str(info.value)


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
