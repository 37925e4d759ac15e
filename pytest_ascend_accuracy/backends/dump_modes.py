"""What a dump holds per operator: acl.json's ``dump_mode`` (docs/formats.md §3), shared by
both backends, the acl.json writer and the plugin's option. No heavy imports (the plugin reads
``DUMP_MODES`` while it registers its options)."""
from __future__ import annotations

import difflib

from ..errors import ConfigError

#: ``output`` (ACL's default) the output tensors only, ``input`` the inputs only, ``all`` both
DUMP_MODES = ("output", "input", "all")


def check_dump_mode(value, where: str = "dump_mode") -> str:
    """``value`` when it is one of ``DUMP_MODES``, else a ``ConfigError`` naming the closest."""
    if isinstance(value, str) and value in DUMP_MODES:
        return value
    near = difflib.get_close_matches(str(value).strip().lower(), DUMP_MODES, n=2, cutoff=0.3)
    hint = f"; closest: {', '.join(repr(n) for n in near)}" if near else ""
    raise ConfigError(where, f"unknown dump mode {value!r}: expected one of "
                             f"{', '.join(DUMP_MODES)}{hint}")


def dumps_inputs(mode: str) -> bool:
    """Whether a dump in ``mode`` holds the operators' input tensors."""
    return mode in ("input", "all")


def dumps_outputs(mode: str) -> bool:
    """Whether a dump in ``mode`` holds the operators' output tensors."""
    return mode in ("output", "all")


__all__ = ["DUMP_MODES", "check_dump_mode", "dumps_inputs", "dumps_outputs"]
