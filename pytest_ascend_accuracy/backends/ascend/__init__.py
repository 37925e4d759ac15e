"""The real Ascend backend: ATC conversion (``atc_command``, ``precision_modes``, ``atc_runner``,
``toolkit``), the ACL/ais_bench runtime with dumps (``runtime``, ``acl_driver``,
``ais_bench_driver``, ``acl_json``, ``dump_dirs``), naming om outputs (``output_names``) and
``AscendBackend`` tying them to the cache (``backend``).

Built from the documented interfaces and tested against fakes (``pytest_ascend_accuracy.testing``);
see docs/ascend_backend.md for what has been verified where. Names are imported lazily.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "AscendBackend": "backend",
    "AscendRuntime": "runtime",
    "ascend_runtime_available": "runtime",
    "build_atc_command": "atc_command",
    "find_toolkit": "toolkit",
    "write_acl_json": "acl_json",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
