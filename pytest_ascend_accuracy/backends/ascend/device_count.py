"""How many devices the Ascend runtime sees, asked without opening one.

pyACL's ``acl.rt.get_device_count()`` (``aclrtGetDeviceCount``, "obtains the number of
available devices"; the pyACL reference lists no precondition) counts the devices this process
may use: under ``ASCEND_RT_VISIBLE_DEVICES`` the visible ones, numbered ``0..count-1``. The
plugin asks it at start-up, so a device id that does not exist is refused before any test runs
(``devices.check_devices_exist``), as a hidden one is. ``None`` where the runtime cannot tell:
pyACL not importable (an ais_bench-only machine), or the call failing; the device is then opened
as before, and its error is the test's.
"""
from __future__ import annotations

import importlib
from typing import Optional

ACL_SUCCESS = 0


def runtime_device_count() -> Optional[int]:
    """The runtime's device count, or None when it cannot say (see the module docstring)."""
    try:
        acl = importlib.import_module("acl")
        count, ret = acl.rt.get_device_count()
    except Exception:  # noqa: BLE001 - ImportError, OSError of a missing .so, an odd pyACL
        return None
    if ret != ACL_SUCCESS:
        return None
    try:
        return int(count)
    except (TypeError, ValueError):
        return None
