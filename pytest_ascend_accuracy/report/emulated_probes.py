"""Which probe modes can change a verdict on the backend that ran it. The emulator (the default
backend, no NPU) does not emulate buffer reuse: ``buffer_off`` is numerically neutral there
(README, "Backends: what runs where"), and only an injected buffer fault (``Fault.on_buffer``)
reacts to it. T1: the "no float16 overflow seen" hints of an LR-ASPP and a RegNet on realistic
input offered ``modes=[BUFFER_OFF]`` and ``[HIGH_PRECISION | BUFFER_OFF]``, and under
``fusion_off`` ``[BUFFER_OFF | FUSION_OFF]`` alone; pasted, each repeated the verdict (cosine
0.987213, 0.989911). On the emulator the hints offer fusion off alone and say why, and where
buffer reuse off is the only probe left, offer none and point to the diagnosis; on an Ascend
device the probe stays."""
from __future__ import annotations

from typing import Mapping, Optional


def run_meta(actual=None, result=None) -> Mapping:
    """What the failing run says of itself: the actual DumpSet's ``meta``, else the compare's
    record of it (``result.meta["actual"]``); {} where neither is at hand."""
    meta = getattr(actual, "meta", None)
    if meta:
        return meta
    return ((getattr(result, "meta", None) or {}).get("actual") or {})


def buffer_off_neutral(meta: Optional[Mapping]) -> bool:
    """Whether the run (``run_meta``) was the emulator's with no buffer fault active: turning
    buffer reuse off cannot change its values."""
    meta = meta or {}
    if meta.get("backend") != "emulator":
        return False
    return not any(str(k).startswith("buffer fault") for k in (meta.get("faults_active") or {}))


#: the plugin's advice where it offers fusion off alone on the emulator (``{mode}``: the
#: buffer-off mode an Ascend device would compare with): buffer reuse off, offered beside it
#: before, repeated the verdict to the digit there (T1's LR-ASPP and RegNet)
PLUGIN_FUSION_ONLY = ("compare with this mode to see whether a fusion pass causes the first "
                      "failure (buffer reuse off is not offered: this backend, the emulator, "
                      "does not emulate buffer reuse, so modes=[{mode}] repeats this verdict; on "
                      "an Ascend device, --ascend-device=N, compare with it too); where it does "
                      "not pass (float16 rounding alone, which it does not change), ")
#: the plugin's reason where buffer reuse off is the only probe left (fusion off already)
PLUGIN_ONLY_BUFFER = (", fusion is already off, and buffer reuse off changes nothing on this "
                      "backend, the emulator, which does not emulate buffer reuse (on an Ascend "
                      "device, --ascend-device=N, compare with modes=[{mode}])")
#: the Python API's probe on the emulator (``failure_text.default_hint``): fusion off alone
API_FUSION_ONLY = ('mode="fusion_off" to see whether a fusion pass causes the first failure '
                   '(mode="buffer_off" is not offered: the emulator backend does not emulate '
                   'buffer reuse, so it repeats this verdict; on an Ascend device compare with '
                   'it too); where it does not pass (float16 rounding alone), ')
