"""Backends that convert and run a model: the CPU emulator and real Ascend devices.

``make_backend`` is the one place that picks and builds a backend from the plugin's settings;
backend modules (onnxruntime, ACL) are imported only when a backend is actually built.

Layer above ``golden``: may import ``golden``, ``report``, ``compare``, ``graph``, ``dump``, ``core``.
"""
from __future__ import annotations

import difflib
from enum import Enum
from typing import Optional, Sequence, Tuple, Union

from ..errors import ConfigError


class BackendKind(str, Enum):
    """Which backend runs the tests. A ``str`` enum: the option spellings (``--accuracy-backend``,
    CLI ``--backend``) are its values, so settings, reports and JSON keep the same text."""

    AUTO = "auto"
    ASCEND = "ascend"
    EMULATOR = "emulator"

    def __str__(self) -> str:
        return self.value


BACKEND_KINDS = tuple(k.value for k in BackendKind)


def resolve_backend_kind(requested: Union[str, BackendKind],
                         device_ids: Sequence[int]) -> BackendKind:
    """``auto`` -> ``ascend`` when devices were given, else ``emulator``.

    ``emulator`` together with ``--ascend-device`` is contradictory and refused."""
    try:
        kind = BackendKind(requested)
    except ValueError:
        close = difflib.get_close_matches(str(requested), BACKEND_KINDS, n=1)
        raise ConfigError("--accuracy-backend", f"unknown backend {requested!r}; known: "
                                                f"{', '.join(BACKEND_KINDS)}"
                                                + (f" (did you mean {close[0]!r}?)" if close else "")
                          ) from None
    if kind is BackendKind.AUTO:
        return BackendKind.ASCEND if device_ids else BackendKind.EMULATOR
    if kind is BackendKind.EMULATOR and device_ids:
        raise ConfigError("--accuracy-backend", "emulator was chosen but --ascend-device was "
                                                "given too; drop one of them")
    return kind


def ascend_runtime_status() -> Tuple[bool, str]:
    """(available, reason) for the real Ascend runtime on this machine."""
    from .ascend import ascend_runtime_available

    result = ascend_runtime_available()
    if isinstance(result, tuple):
        ok, reason = result[0], (result[1] if len(result) > 1 else "")
        return bool(ok), str(reason or "")
    return bool(result), "" if result else "no Ascend runtime (CANN/ACL) found"


def make_backend(kind: Union[str, BackendKind], cache, *, device_ids: Sequence[int] = (),
                 worker_id: Optional[str] = None, soc_version: Optional[str] = None,
                 num_workers: Optional[int] = None, environ=None, precision_policy: str = "auto",
                 device_option: str = "--ascend-device", **options):
    """Build the backend of ``kind`` (``emulator`` or ``ascend``, as resolved) over ``cache``.

    For ``ascend`` this worker's device is ``device_ids[K mod len]`` (see ``devices``);
    extra ``options`` go to the backend's constructor (e.g. ``overflow=`` for the emulator);
    ``precision_policy`` is the ascend backend's (``atc_command.PRECISION_POLICIES``);
    ``soc_version``: ATC's on ``ascend``, the chip whose Cube kernels the emulator models;
    ``device_option``: the option that gave the ids, as errors name it (the CLI's ``--device``)."""
    try:
        kind = BackendKind(kind)
    except ValueError:
        raise ConfigError("--accuracy-backend", f"cannot build a backend of kind {kind!r}") from None
    if kind is BackendKind.EMULATOR:
        from .emulator.backend import EmulatorBackend

        return EmulatorBackend(cache, soc_version=soc_version, **options)  # its cube kernels
    if kind is BackendKind.ASCEND:
        from .devices import assign_device
        from .ascend.backend import AscendBackend

        assignment = assign_device(device_ids or (0,), worker_id, num_workers=num_workers,
                                   environ=environ, option=device_option)
        return AscendBackend(cache, device_id=assignment.index, soc_version=soc_version,
                             precision_policy=precision_policy, **options)
    raise ConfigError("--accuracy-backend", f"cannot build a backend of kind {kind!r}")
