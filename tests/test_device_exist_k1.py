"""``devices.check_devices_exist``: a device id past the runtime's count is refused, naming the
ids that exist as an ``--ascend-device`` value to paste (CI trial finding 2)."""
import pytest

from pytest_ascend_accuracy.backends.devices import assign_device, check_devices_exist
from pytest_ascend_accuracy.errors import ConfigError


def test_ids_within_the_count_pass_and_an_unknown_count_checks_nothing():
    check_devices_exist((0, 1), 2, environ={})
    check_devices_exist((9,), None, environ={})


def test_the_error_names_the_ids_that_exist():
    with pytest.raises(ConfigError, match=r"^--ascend-device: devices 2, 7 do not exist: the "
                                          r"Ascend runtime sees 2 devices, ids 0, 1; e\.g\. "
                                          r"--ascend-device=0,1$"):
        check_devices_exist((0, 2, 7), 2, environ={})


def test_under_visible_devices_the_ids_are_the_visible_ones():
    """The runtime counts the visible devices; the user's ids are the ones it lists
    (``assign_device``)."""
    env = {"ASCEND_RT_VISIBLE_DEVICES": "4,6"}
    check_devices_exist((4, 6), 2, environ=env)
    with pytest.raises(ConfigError) as info:  # one of the two listed is not there
        check_devices_exist((6,), 1, environ=env)
    assert str(info.value).endswith("device 6 does not exist: the Ascend runtime sees 1 device "
                                    "(ASCEND_RT_VISIBLE_DEVICES=4,6), id 4; e.g. --ascend-device=4")
    pasted = int(str(info.value).rsplit("=", 1)[1])
    check_devices_exist((pasted,), 1, environ=env)
    assert assign_device((pasted,), environ=env).index == 0


def test_no_device_at_all_says_to_leave_the_option_out():
    with pytest.raises(ConfigError, match=r"^--accuracy-backend: device 0 does not exist: the "
                                          r"Ascend runtime sees no device on this machine; leave "
                                          r"out --accuracy-backend"):
        check_devices_exist((0,), 0, where="--accuracy-backend", environ={})
