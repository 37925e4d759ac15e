"""Backends that convert and run a model: the CPU emulator and real Ascend devices.

``make_backend`` is the one place that picks and builds a backend from the plugin's settings;
backend modules (onnxruntime, ACL) are imported only when a backend is actually built.

Layer above ``golden``: may import ``golden``, ``report``, ``compare``, ``graph``, ``dump``, ``core``.
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

from ..errors import ConfigError

BACKEND_KINDS = ("auto", "ascend", "emulator")


def resolve_backend_kind(requested: str, device_ids: Sequence[int]) -> str:
    """``auto`` -> ``ascend`` when devices were given, else ``emulator``.

    ``emulator`` together with ``--ascend-device`` is contradictory and refused."""
    if requested not in BACKEND_KINDS:
        raise ConfigError("--accuracy-backend", f"unknown backend {requested!r}; known: "
                                                f"{', '.join(BACKEND_KINDS)}")
    if requested == "auto":
        return "ascend" if device_ids else "emulator"
    if requested == "emulator" and device_ids:
        raise ConfigError("--accuracy-backend", "emulator was chosen but --ascend-device was "
                                                "given too; drop one of them")
    return requested


def ascend_runtime_status() -> Tuple[bool, str]:
    """(available, reason) for the real Ascend runtime on this machine."""
    from .ascend import ascend_runtime_available

    result = ascend_runtime_available()
    if isinstance(result, tuple):
        ok, reason = result[0], (result[1] if len(result) > 1 else "")
        return bool(ok), str(reason or "")
    return bool(result), "" if result else "no Ascend runtime (CANN/ACL) found"


def make_backend(kind: str, cache, *, device_ids: Sequence[int] = (),
                 worker_id: Optional[str] = None, soc_version: Optional[str] = None,
                 num_workers: Optional[int] = None, environ=None, **options):
    """Build the backend of ``kind`` (``emulator`` or ``ascend``, as resolved) over ``cache``.

    For ``ascend`` this worker's device is ``device_ids[K mod len]`` (see ``devices``);
    extra ``options`` go to the backend's constructor (e.g. ``overflow=`` for the emulator)."""
    if kind == "emulator":
        from .emulator.backend import EmulatorBackend

        return EmulatorBackend(cache, **options)
    if kind == "ascend":
        from .devices import assign_device
        from .ascend.backend import AscendBackend

        assignment = assign_device(device_ids or (0,), worker_id, num_workers=num_workers,
                                   environ=environ)
        return AscendBackend(cache, device_id=assignment.logical, soc_version=soc_version,
                             **options)
    raise ConfigError("--accuracy-backend", f"cannot build a backend of kind {kind!r}")
