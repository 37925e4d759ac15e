"""How many cores this process may keep busy: all it is allowed to run on, or its share.

Under pytest-xdist each worker gets ``cores // workers`` (``plugin.xdist_support.share_cores``
sets it), so N workers that each parallelise their own work do not oversubscribe the machine.
Used by onnxruntime's thread count and by the compare's worker processes.
"""
from __future__ import annotations

import os
from typing import Optional

_SHARE: list = [None]


def machine_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


_PHYSICAL: dict = {}  # CPUs this process may run on -> their physical cores (read once)


def physical_cores() -> int:
    """The physical cores among the CPUs this process may run on (SMT siblings counted once,
    from Linux's sysfs topology; a CPU whose topology cannot be read counts as a core). Asked
    for by every golden and emulated run: read once per set of CPUs."""
    try:
        cpus = tuple(sorted(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return machine_cores()
    if cpus not in _PHYSICAL:
        _PHYSICAL[cpus] = _count_cores(cpus)
    return _PHYSICAL[cpus]


def _count_cores(cpus) -> int:
    cores = set()
    for cpu in cpus:
        topology = f"/sys/devices/system/cpu/cpu{cpu}/topology/"
        try:
            with open(topology + "physical_package_id") as f, open(topology + "core_id") as g:
                cores.add((f.read().strip(), g.read().strip()))
        except OSError:
            cores.add(("cpu", str(cpu)))
    return max(1, len(cores))


def worker_share(workers: int) -> int:
    """The cores each of ``workers`` processes sharing this machine may keep busy (at least 1)."""
    return max(1, machine_cores() // max(1, int(workers)))


def set_core_share(cores: Optional[int]) -> None:
    """This process's share of the cores (None: all of ``machine_cores``)."""
    _SHARE[0] = None if cores is None else max(1, int(cores))


def core_share() -> int:
    """The cores this process may keep busy."""
    return _SHARE[0] if _SHARE[0] is not None else machine_cores()


__all__ = ["core_share", "machine_cores", "physical_cores", "set_core_share", "worker_share"]
