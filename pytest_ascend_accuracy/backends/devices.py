"""Which device a test process uses: device lists, the worker -> device mapping, device locks.

``--ascend-device=0,1 -n 4`` gives gw0->0, gw1->1, gw2->0, gw3->1 (worker ``gwK`` takes device
``K mod len(list)``). The ids the user passes are device ids as CANN names them: the chips'
logical ids, what ``npu-smi info`` shows and ``ASCEND_RT_VISIBLE_DEVICES`` lists. When that
variable is set, the runtime numbers only the devices it lists, ``0..n-1`` in its order (CANN's
environment variable reference, ``ASCEND_RT_VISIBLE_DEVICES``: "the device index values are then
0, 1, 2; use the index value when you specify a device"); the chosen id is then translated to its
index in that list, and an id it does not list is a usage error naming the ids it does. The
value is read as the runtime reads it (``parse_visible``). Nothing here touches the runtime, so
the choice is made on the worker before any ACL initialisation. No pytest here: the plugin
passes the worker id in.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence, Tuple

from ..errors import ConfigError

VISIBLE_ENV = "ASCEND_RT_VISIBLE_DEVICES"


def parse_device_list(text: str) -> Tuple[int, ...]:
    """``"0,1"`` -> (0, 1); blanks ignored; each id a non-negative int, no repeats."""
    ids = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit():
            raise ConfigError("--ascend-device", f"device ids are non-negative integers "
                                                 f"separated by commas, got {text!r}")
        value = int(part)
        if value in ids:
            raise ConfigError("--ascend-device", f"device {value} is listed twice in {text!r}")
        ids.append(value)
    if not ids:
        raise ConfigError("--ascend-device", f"no device id in {text!r}")
    return tuple(ids)


def worker_index(worker_id: Optional[str]) -> int:
    """``gw3`` -> 3; the controller / a run without xdist (``None``, ``master``) -> 0."""
    if not worker_id or worker_id == "master":
        return 0
    m = re.fullmatch(r"gw(\d+)", worker_id)
    if not m:
        raise ConfigError("xdist", f"unexpected worker id {worker_id!r}")
    return int(m.group(1))


@dataclass(frozen=True)
class DeviceAssignment:
    """The device one worker uses. ``device_id`` is the id the user listed (the chip's logical
    id); ``index`` is the id to pass to the runtime: its index among the devices
    ``ASCEND_RT_VISIBLE_DEVICES`` leaves visible, the same id when that is unset."""

    device_id: int
    index: int
    worker_id: Optional[str] = None
    visible: Optional[str] = None  # the ASCEND_RT_VISIBLE_DEVICES value seen, if any
    shared: bool = False  # more workers than devices: another worker uses this device too

    def describe(self) -> str:
        text = f"device {self.device_id}"
        if self.visible is not None:
            text += f" (index {self.index} under {VISIBLE_ENV}={self.visible})"
        return text


def parse_visible(value: Optional[str]) -> Optional[Tuple[int, ...]]:
    """The device ids ``ASCEND_RT_VISIBLE_DEVICES`` makes visible, read as the runtime reads
    them (None when unset or empty). CANN's reference: ids separated by commas, "no other
    characters; if there are any, only the device ids before them are read" (``1, 2,3`` reads
    1: a space stands before 2), and "only ascending order is supported". So the ids are read
    up to the first other character; a value that yields no id, or ids not in ascending order,
    is a usage error saying so (the runtime's behaviour is then undocumented)."""
    if value is None or not value.strip():
        return None
    m = re.match(r"\d+(?:,\d+)*", value)
    if not m:
        raise ConfigError(VISIBLE_ENV, f"{VISIBLE_ENV}={value!r} names no device: the runtime "
                                       f"reads comma-separated device ids up to the first other "
                                       f"character; e.g. {VISIBLE_ENV}=0,1")
    ids = tuple(int(part) for part in m.group(0).split(","))
    if any(b <= a for a, b in zip(ids, ids[1:])):
        fixed = ",".join(map(str, sorted(set(ids))))
        raise ConfigError(VISIBLE_ENV, f"{VISIBLE_ENV}={value!r}: the Ascend runtime supports "
                                       f"only distinct ids in ascending order; e.g. "
                                       f"{VISIBLE_ENV}={fixed}")
    return ids


def _read_note(value: str, visible: Tuple[int, ...]) -> str:
    """`` (the runtime reads only 1: it stops at ' ')`` where ``value`` holds a character the
    runtime stops at (``parse_visible``), else empty."""
    other = re.search(r"[^\d,]", value)
    if other is None:
        return ""
    return (f" (the runtime reads only {','.join(map(str, visible))}: it stops at "
            f"{other.group(0)!r})")


def _not_visible(missing: Sequence[int], visible: Tuple[int, ...], value: str,
                 option: str = "--ascend-device") -> ConfigError:
    """The usage error for device ids ``ASCEND_RT_VISIBLE_DEVICES`` does not list, with a value
    of ``option`` to paste: every listed id for the plugin's list, the first for the CLI's
    ``--device N`` (one id)."""
    many = len(missing) > 1
    example = (f"{option}={','.join(map(str, visible))}" if option == "--ascend-device"
               else f"{option} {visible[0]}")
    return ConfigError(option, (
        f"device{'s' if many else ''} {', '.join(map(str, missing))} {'are' if many else 'is'} "
        f"not visible: {VISIBLE_ENV}={value}{_read_note(value, visible)} lists device "
        f"id{'s' if len(visible) > 1 else ''} {', '.join(map(str, visible))}; {option} "
        f"takes those ids (they are passed to the runtime as each one's index among them); "
        f"e.g. {example}"))


def assign_device(device_ids: Sequence[int], worker_id: Optional[str] = None, *,
                  num_workers: Optional[int] = None, environ=None,
                  option: str = "--ascend-device") -> DeviceAssignment:
    """Pick this worker's device: ``device_ids[K mod len]`` for worker ``gwK``; ``option``:
    the option that gave the ids, as errors name it."""
    if not device_ids:
        raise ConfigError(option, "no device ids given")
    env = os.environ if environ is None else environ
    k = worker_index(worker_id)
    device_id = device_ids[k % len(device_ids)]
    visible_text = env.get(VISIBLE_ENV)
    visible = parse_visible(visible_text)
    if visible is None:
        index = device_id
    elif device_id in visible:
        index = visible.index(device_id)
    else:
        raise _not_visible([device_id], visible, visible_text, option)
    shared = num_workers is not None and num_workers > len(device_ids)
    return DeviceAssignment(device_id, index, worker_id, visible_text if visible else None,
                            shared)


def check_devices_visible(device_ids: Sequence[int], environ=None) -> None:
    """Usage check on the controller: every listed device must be visible."""
    env = os.environ if environ is None else environ
    visible = parse_visible(env.get(VISIBLE_ENV))
    if visible is None:
        return
    missing = [d for d in device_ids if d not in visible]
    if missing:
        raise _not_visible(missing, visible, env.get(VISIBLE_ENV))


def check_devices_exist(device_ids: Sequence[int], count: Optional[int], *,
                        where: str = "--ascend-device", environ=None) -> None:
    """Usage check on the controller: every listed device exists. ``count`` is the runtime's
    device count (``ascend.device_count``; None: unknown, nothing checked): the ids
    ``0..count-1``, or under ``ASCEND_RT_VISIBLE_DEVICES`` its first ``count`` ids (the
    runtime numbers the visible devices from 0; ``check_devices_visible`` refused the others).
    The error names the ids that exist, as an ``--ascend-device`` value to paste."""
    if count is None:
        return
    env = os.environ if environ is None else environ
    visible = parse_visible(env.get(VISIBLE_ENV))
    existing = list(range(count)) if visible is None else list(visible[:count])
    missing = [d for d in device_ids if d not in existing]
    if not missing:
        return
    what = (f"device{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} "
            f"do{'' if len(missing) > 1 else 'es'} not exist")
    under = f" ({VISIBLE_ENV}={env.get(VISIBLE_ENV)})" if visible is not None else ""
    if not existing:
        raise ConfigError(where, f"{what}: the Ascend runtime sees no device on this machine"
                                 f"{under}; leave out {where} to run on the CPU emulator")
    ids = ",".join(map(str, existing))
    raise ConfigError(where, f"{what}: the Ascend runtime sees {len(existing)} device"
                             f"{'s' if len(existing) > 1 else ''}{under}, id"
                             f"{'s' if len(existing) > 1 else ''} {', '.join(map(str, existing))}"
                             f"; e.g. --ascend-device={ids}")


class DeviceLock:
    """A cross-process lock per device (a ``filelock`` under the cache directory),
    so workers that share a device take turns on it. A context manager."""

    def __init__(self, cache_root, device_id: int, timeout: float = 3600.0):
        self.path = Path(cache_root) / ".locks" / f"device-{device_id}.lock"
        self.timeout = timeout
        self._lock = None

    def __enter__(self):
        from filelock import FileLock

        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(str(self.path))
        self._lock.acquire(timeout=self.timeout)
        return self

    def __exit__(self, *exc):
        self._lock.release()
        return False
