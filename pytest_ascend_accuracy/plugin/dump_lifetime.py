"""How long pytest keeps a failing test's dumps, said where ``dump kept: DIR`` names them.

A test's dumps live in its ``tmp_path``, which pytest keeps as its temp folder's settings say,
not as this plugin does: the numbered ``pytest-of-USER/pytest-N`` folder of a session is removed
by a later session that makes a temp folder (one that uses ``tmp_path``, of any project: they
share the root), by that session's own ``tmp_path_retention_count`` (3 by default: the 3rd such
session; a later session's count, not this one's, decides, H101), at once when this session ends
under ``tmp_path_retention_policy = none`` (or a count of 0), and a ``--basetemp`` folder is
emptied by the next session given the same ``--basetemp``. ``dump kept: DIR`` and
``ascend-accuracy compare DIR GOLDEN`` read as lasting; after a few more runs the folder was
gone (H99). The line after it says which case holds, with the option that keeps the folder
where one does."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

#: pytest's own numbered session folder (``make_numbered_dir_with_cleanup``'s prefix)
_NUMBERED = re.compile(r"pytest-\d+")


@dataclass(frozen=True)
class DumpLifetime:
    """The temp folder settings of this pytest process, read when a note is made (a failure):
    its TempPathFactory is made after this plugin's ``pytest_configure``."""

    config: object = None

    def _ini(self, name: str, default):
        try:
            return self.config.getini(name)
        except (AttributeError, ValueError):  # a pytest without the key (before 7.3)
            return default

    def note(self, folder) -> Optional[str]:
        """The line after ``dump kept: folder``, or None where ``folder`` is not in pytest's
        temp folder (a dump folder the test chose)."""
        factory = getattr(self.config, "_tmp_path_factory", None)
        base = getattr(factory, "_basetemp", None)  # (never made here: see above)
        if base is None:
            return None
        base = Path(base)
        try:
            Path(folder).resolve().relative_to(base.resolve())
        except (OSError, ValueError):
            return None
        copy = "copy it elsewhere to compare it later"
        if not _numbered(self.config, factory, base):
            return ("  (under --basetemp, which the next pytest session given the same "
                    f"--basetemp empties: {copy})")
        policy = str(self._ini("tmp_path_retention_policy", "all"))
        try:
            count = int(self._ini("tmp_path_retention_count", 3))
        except (TypeError, ValueError):
            count = 3
        if policy == "none" or count <= 0:
            setting = "tmp_path_retention_policy = none" if policy == "none" else \
                "tmp_path_retention_count = 0"
            return (f"  (in pytest's temp folder, removed when this session ends ({setting}): "
                    "run with -o tmp_path_retention_policy=failed -o tmp_path_retention_count=3 "
                    "to keep a failing test's folder)")
        return ("  (in pytest's temp folder, which later pytest sessions of any project prune "
                "by their own tmp_path_retention_count: at the default 3, the 3rd one after "
                f"this one that makes a temp folder (tmp_path) removes it; {copy}, or run with "
                "--basetemp=DIR, a folder no other session prunes)")  # (audit 33: a shared
        # machine's other sessions removed a kept dump within minutes)


def _numbered(config, factory, base: Path) -> bool:
    """Whether ``base`` is (in) one of pytest's numbered session folders, not a --basetemp:
    an xdist worker's base temp is always given (``popen-gwN`` under its controller's)."""
    if hasattr(config, "workerinput"):
        session = base.parent
        return bool(_NUMBERED.fullmatch(session.name)) and \
            session.parent.name.startswith("pytest-of-")
    return getattr(factory, "_given_basetemp", None) is None and \
        not getattr(getattr(config, "option", None), "basetemp", None)
