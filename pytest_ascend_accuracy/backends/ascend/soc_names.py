"""Chip names (``--soc_version``): the ones a toolkit can convert for, and what to tell the user
when ATC refuses one or a device cannot load an .om converted for another chip.

A CANN toolkit keeps one ``<name>.ini`` per chip under ``<arch>-linux/data/platform_config/``
(older layouts: ``compiler/data/platform_config/``, ``atc/data/platform_config/``); the ATC
samples and CANN docs give these file names as the values ``--soc_version`` takes. GE refuses any
other name at ``GELib::Initialize`` with ``EE1001: The argument is invalid.Reason: Soc version
[X] is invalid`` (a real ATC 7.0 console; CANN 5.0.4 documents ``EE1000`` "Value %s is invalid
for the SoC version. Valid values are: %s"). Neither message names the option, nor the chip the
user may have meant: ``refused_soc_advice`` does.
"""
from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Optional, Sequence, Tuple

SOC_REFUSAL_CODES = ("EE1000", "EE1001")
_CONFIG_DIRS = ("*-linux/data/platform_config", "compiler/data/platform_config",
                "atc/data/platform_config")


def toolkit_soc_versions(home: "str | os.PathLike[str] | None"
                         ) -> Tuple[Tuple[str, ...], Optional[Path]]:
    """(sorted chip names, the folder they came from) of the toolkit at ``home``; ``((), None)``
    when it has no platform config folder."""
    if home is None:
        return (), None
    for pattern in _CONFIG_DIRS:
        for folder in sorted(Path(home).glob(pattern)):
            names = tuple(sorted(p.stem for p in folder.glob("*.ini")))
            if names:
                return names, folder
    return (), None


def is_soc_refusal(errors: Sequence[Tuple[str, str]]) -> bool:
    """Whether ATC's error lines (``atc_runner.parse_atc_errors``) refuse the chip name."""
    return any(code in SOC_REFUSAL_CODES and "soc version" in message.lower()
               for code, message in errors)


def refused_soc_advice(soc: str, home: "str | os.PathLike[str] | None",
                       device: Optional[Tuple[int, str]] = None, *, given: bool = True,
                       toolkit: Optional[str] = None) -> str:
    """One paragraph for an ATC that refused ``--soc_version=<soc>``: the option and the value,
    the closest names the toolkit knows (a typo), where they come from, and the chip to pass:
    the device's (``device`` = (id, ``acl.get_soc_name()``)) where known. ``given``: whether the
    user passed ``soc`` (else it is the device's chip); ``toolkit``: ``Toolkit.describe()``.

    Where the refused chip is the device's own, or the device's chip is one the toolkit has no
    .ini for either, no chip name helps: the toolkit is what lacks it, and the advice is a
    toolkit that supports the chip and how this backend is pointed at one."""
    known, folder = toolkit_soc_versions(home)
    if device is not None and device[1] == soc:
        return _device_chip_unknown(soc, device[0], folder, given, toolkit)
    text = f"--soc_version={soc} is not a chip this toolkit can convert for"
    close = closest_soc_versions(soc, known)
    if close:
        text += f"; closest: {', '.join(close)}"
    if folder is not None:
        text += f" (it knows the names of the .ini files in {folder})"
    if device is not None and known and device[1] not in known:
        return (text + f". Ascend device {device[0]} is {device[1]}, which this toolkit cannot "
                f"convert for either (it has no {device[1]}.ini). "
                + _toolkit_for(device[1], toolkit) + f" Then pass --soc-version={device[1]}, "
                "or leave --soc-version out to use the chip the device reports.")
    if device is not None:
        # the argument to give the call, not a call: AscendBackend(soc_version=...) pasted
        # raised TypeError (the backend's cache is its first argument), as mismatch_advice's did
        return (text + f". Ascend device {device[0]} is {device[1]}: pass --soc-version="
                f"{device[1]} (soc_version={device[1]!r} in AscendBackend(...)), or leave "
                "--soc-version out to use the chip the device reports.")
    # no device chip known: the runtime cannot report it, so leaving --soc-version out fails too
    # ("not given and the runtime reports none"); the option is needed, with the right value
    return (text + ". Pass the device's chip: `npu-smi info` shows its Name, the value is "
            "Ascend<Name>: pytest --soc-version=Ascend<Name> (soc_version='Ascend<Name>' in "
            "AscendBackend(...)); this runtime cannot report the chip, so --soc-version cannot "
            "be left out.")


def _device_chip_unknown(soc: str, device_id: int, folder: Optional[Path], given: bool,
                         toolkit: Optional[str]) -> str:
    """The refused chip is the one the device reports: right for the device, unknown to the
    toolkit (one older than the chip); no other chip name would run on this device."""
    how = "as given by --soc-version" if given else "no --soc-version given"
    if folder is not None and (folder / f"{soc}.ini").is_file():
        # (the atc that ran is not this toolkit's, or another arch's folder was read)
        return (f"--soc_version={soc} ({how}) is the chip Ascend device {device_id} reports, "
                f"and the toolkit at {folder} has {soc}.ini, yet the atc that ran refused it: "
                f"that atc belongs to another toolkit. " + _toolkit_for(soc, toolkit))
    where = (f": it has no {soc}.ini in {folder}, where it keeps one per chip it can convert for"
             if folder is not None else "")
    return (f"--soc_version={soc} ({how}) is the chip Ascend device {device_id} reports, and "
            f"this CANN toolkit has no platform config for it{where}. "
            + _toolkit_for(soc, toolkit))


def _toolkit_for(chip: str, toolkit: Optional[str]) -> str:
    """How to convert with a toolkit that knows ``chip``: what ``toolkit.find_toolkit`` reads."""
    now = f" The toolkit used now: {toolkit}." if toolkit else ""
    return (f"Converting for {chip} needs a CANN toolkit that supports it: install one and "
            f"`source <its install dir>/set_env.sh` before running (it puts its atc first on "
            f"PATH and sets ASCEND_TOOLKIT_HOME; this backend runs the first atc on PATH, else "
            f"the one under $ASCEND_TOOLKIT_HOME).{now}")


def closest_soc_versions(soc: str, known: Sequence[str], n: int = 3) -> Tuple[str, ...]:
    """The known names ``soc`` is a likely typo of: compared without case and without the
    ``Ascend`` every name starts with (else every name would look close to any other)."""
    def key(name: str) -> str:
        low = name.lower()
        return low[len("ascend"):] if low.startswith("ascend") else low

    by_key = {}
    for name in known:
        by_key.setdefault(key(name), name)
    matches = difflib.get_close_matches(key(soc), list(by_key), n=n, cutoff=0.6)
    return tuple(by_key[m] for m in matches)


def mismatch_advice(built_for: str, device_id: int, device_soc: str) -> str:
    """For a run that failed where the .om was converted for another chip than the device's."""
    return (f"The .om was converted for {built_for} (--soc_version) but Ascend device {device_id} "
            f"is {device_soc}: an offline model runs on the chip it was converted for. Convert "
            f"for this device: --soc-version={device_soc} (soc_version={device_soc!r} in "
            f"AscendBackend(...)), or leave --soc-version out to use the chip the device "
            f"reports.")
