"""The AIPP file a dump's ATC command line names: the one this run's model was converted with.

Conversions are cached by the AIPP file's content (``aipp.emulation.conversion_aipp``), so a
second file of the same content reuses the first one's cache entry, and the entry's om json
records the first conversion's command line (``atc_cmdline``), naming the first file.
"""
from __future__ import annotations

import os

from ..core.atc_cmdline import atc_options


def name_conversion_aipp(dump, path) -> None:
    """Make ``dump``'s ``atc_cmdline`` (its om json's) name ``path``, the AIPP file this run's
    model was converted with. Conversions are cached by the file's content, so a second file
    of the same content reuses the first one's entry, whose command line names the first file:
    the AIPP hint of a failed check then told the user to check and diagnose that other file
    (a trial: first.cfg and second.cfg, one content; the second test's hint named first.cfg).
    Nothing changes without a path, a command line or an ``--insert_op_conf=`` option in it."""
    meta = getattr(dump, "meta", None)
    cmdline = str((meta or {}).get("atc_cmdline") or "")
    if not path or not cmdline:
        return
    old = [v for k, v in atc_options(cmdline) if k == "insert_op_conf" and v]
    given = f"--insert_op_conf={os.fspath(path)}"
    if old and f"--insert_op_conf={old[-1]}" in cmdline and old[-1] != os.fspath(path):
        meta["atc_cmdline"] = cmdline.replace(f"--insert_op_conf={old[-1]}", given)
