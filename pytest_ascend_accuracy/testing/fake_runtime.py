"""Installing the FAKE Ascend runtime for a test: ``install`` puts the fake ``acl``
(``fake_acl``) and/or ``ais_bench`` (``fake_ais_bench``) modules into ``sys.modules``, sharing
one ``fake_npu.FakeNpu`` state, and returns that state (calls made, dumps written, protocol
errors). Nothing here touches an NPU; every module and object is marked as a fake.

Import order, no circles: ``fake_runtime`` -> ``fake_acl`` / ``fake_ais_bench`` -> ``fake_npu``.
What the fakes keep from the documentation is described in ``fake_npu`` and ``fake_acl``.
"""
from __future__ import annotations

import sys
import types
from typing import Dict, Optional

from .fake_acl import make_acl_module
from .fake_ais_bench import make_ais_bench_modules
from .fake_npu import (ACL_ERROR_INVALID_DEVICE, ACL_ERROR_INVALID_MODEL,  # noqa: F401 (re-exported)
                       ACL_ERROR_INVALID_PARAM, ACL_ERROR_REPEAT_INITIALIZE, ACL_ERROR_UNINITIALIZE,
                       ACL_SUCCESS, NP_TO_ACL, FakeNpu, LoadedModel)

# -- installing ------------------------------------------------------------------------------------
def install(monkeypatch=None, *, flavor: str = "acl", device_count: int = 1, soc_name: str = "Ascend310P3",
            device_formats: bool = True) -> FakeNpu:
    """Install the FAKE runtime modules into ``sys.modules`` and return their shared state.

    ``flavor``: ``"acl"`` (fake pyACL only; ``ais_bench`` made unimportable), ``"ais_bench"``
    (fake ais_bench only; ``acl`` made unimportable) or ``"both"``. With ``monkeypatch`` the
    change is undone after the test; without it call ``uninstall(state)``."""
    if flavor not in ("acl", "ais_bench", "both"):
        raise ValueError(f"flavor must be 'acl', 'ais_bench' or 'both', got {flavor!r}")
    state = FakeNpu(device_count=device_count, soc_name=soc_name, device_formats=device_formats)

    modules: Dict[str, Optional[types.ModuleType]] = {
        "acl": None, "ais_bench": None, "ais_bench.infer": None, "ais_bench.infer.interface": None}
    if flavor in ("acl", "both"):
        modules["acl"] = make_acl_module(state)
    if flavor in ("ais_bench", "both"):
        pkg, infer, interface = make_ais_bench_modules(state)
        modules.update({"ais_bench": pkg, "ais_bench.infer": infer, "ais_bench.infer.interface": interface})
    state._saved = {name: sys.modules.get(name, _MISSING) for name in modules}  # type: ignore[attr-defined]
    for name, module in modules.items():
        if monkeypatch is not None:
            monkeypatch.setitem(sys.modules, name, module)
        else:
            sys.modules[name] = module
    return state


def uninstall(state: FakeNpu) -> None:
    """Undo ``install`` done without monkeypatch."""
    for name, previous in getattr(state, "_saved", {}).items():
        if previous is _MISSING:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous


_MISSING = object()
