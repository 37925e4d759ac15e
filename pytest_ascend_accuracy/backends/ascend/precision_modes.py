"""Which ``--precision_mode`` values an ATC of a given CANN version accepts.

Current ATC accepts nine values (GE's ``CheckPrecisionModeParamValid``, hicann/ge: ``force_fp16,
force_fp32, cube_fp16in_fp32out, allow_mix_precision, allow_fp32_to_fp16, must_keep_origin_dtype,
allow_mix_precision_fp16, allow_mix_precision_bf16, allow_fp32_to_bf16``) and refuses any other
with ``E10001: Value [v] for parameter [--precision_mode] is invalid``. Older releases document
fewer; the first release whose ATC ``--precision_mode`` page lists each value:

============================  =======  ===================================================
value                         since    documented in (hiascend.com, ATC tool guide)
============================  =======  ===================================================
force_fp16, force_fp32,       (all)    canncommercial/601 ``atctool_0090`` (CANN 6.0.1):
allow_fp32_to_fp16,                    exactly these five
must_keep_origin_dtype,
allow_mix_precision
allow_mix_precision_fp16,     6.2      canncommercial/62RC1 and /63RC2 ``atctool_000092``
allow_mix_precision_bf16               ("allow_mix_precision or allow_mix_precision_fp16,
                                       same effect"; bfloat16 mixed mode)
cube_fp16in_fp32out           7.0      canncommercial/700 ``atlasatc_16_0096``
                                       ("force_fp32/cube_fp16in_fp32out, same effect")
allow_fp32_to_bf16            8.0      CANN 8.x/9.0 ``atlasatcparam_16_0068`` (not found in
                                       the 7.0 page; first confirmed in 8.x)
============================  =======  ===================================================

The newer spellings of older values are documented as having the same effect
(``cube_fp16in_fp32out`` = ``force_fp32``, ``allow_mix_precision_fp16`` =
``allow_mix_precision``): a mode that asks for one of them on an older toolkit is converted with
the older spelling; an explicit user option is refused with the equivalent named. With an
unknown toolkit version nothing is refused here (ATC itself still checks).
"""
from __future__ import annotations

import difflib
import os
from typing import Dict, Optional, Tuple

from ...errors import ConfigError
from .toolkit import parse_version

#: value -> first (major, minor) release whose ATC documents it; () = every release.
PRECISION_MODE_SINCE: Dict[str, Tuple[int, ...]] = {
    "force_fp16": (),
    "force_fp32": (),
    "allow_fp32_to_fp16": (),
    "must_keep_origin_dtype": (),
    "allow_mix_precision": (),
    "allow_mix_precision_fp16": (6, 2),
    "allow_mix_precision_bf16": (6, 2),
    "cube_fp16in_fp32out": (7, 0),
    "allow_fp32_to_bf16": (8, 0),
}
#: newer spelling -> older spelling with the documented same effect.
SAME_EFFECT = {"cube_fp16in_fp32out": "force_fp32", "allow_mix_precision_fp16": "allow_mix_precision"}


def accepted_precision_modes(toolkit_version: Optional[str]) -> Tuple[str, ...]:
    """The ``--precision_mode`` values the ATC of ``toolkit_version`` accepts (all nine when the
    version is unknown or unparsable)."""
    release = _release(toolkit_version)
    return tuple(v for v, since in PRECISION_MODE_SINCE.items() if release is None or release >= since)


def precision_mode_for(value: str, toolkit_version: Optional[str], *, explicit: bool = False,
                       version_file: "str | os.PathLike[str] | None" = None) -> str:
    """``value`` as this toolkit's ATC accepts it: unchanged, its documented same-effect older
    spelling (mode-derived values only), or a ConfigError naming the version and what it accepts."""
    older = SAME_EFFECT.get(value)
    if older is not None and not explicit and _release(toolkit_version) is None:
        return older  # an unknown toolkit: the spelling every release takes, same effect
    accepted = accepted_precision_modes(toolkit_version)
    if value in accepted:
        return value
    if older in accepted and not explicit:
        return older
    where = f" (read from {os.fspath(version_file)})" if version_file else ""
    known = value in PRECISION_MODE_SINCE
    reason = (f"needs CANN {'.'.join(map(str, PRECISION_MODE_SINCE[value]))} or later" if known
              else "is not a precision mode ATC knows")
    hint = f"; the same effect on this toolkit: {older!r}" if older in accepted else ""
    close = difflib.get_close_matches(value, accepted, n=3) if not known else []
    suggestion = f"; closest: {', '.join(close)}" if close else ""
    raise ConfigError("precision_mode", f"{value!r} {reason}; the installed toolkit is CANN "
                                        f"{toolkit_version}{where}, whose ATC accepts "
                                        f"{', '.join(accepted)}{hint}{suggestion}")


def _release(toolkit_version: Optional[str]) -> Optional[Tuple[int, ...]]:
    if not toolkit_version:
        return None
    try:
        return parse_version(toolkit_version)[:2]
    except ValueError:
        return None
