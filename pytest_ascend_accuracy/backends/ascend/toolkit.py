"""Finding the CANN toolkit: the ``atc`` executable, the installation root and its version.

Search order for ``atc`` (first hit wins):

1. an explicit path given by the caller (``AscendBackend(atc=...)``);
2. ``atc`` on ``PATH`` (what ``source set_env.sh`` sets up);
3. ``$ASCEND_TOOLKIT_HOME`` then ``$ASCEND_HOME_PATH`` (both exported by ``set_env.sh``), looking
   in ``bin/``, ``compiler/bin/`` and the older ``atc/bin/`` of each.

The installation root is the first ancestor of the ``atc`` executable that holds the install
record (as reached, ``.../latest/bin/atc``, then with symlinks resolved), else the first of
``$ASCEND_TOOLKIT_HOME``, ``$ASCEND_HOME_PATH`` that exists: the atc that runs decides. The
toolkit version is the ``version=`` line of ``<root>/<arch>-linux/ascend_toolkit_install.info``:
the file the CANN installation guides name as the record of "the package version, CPU
architecture and install path" and tell users to ``cat`` to check the version (hiascend.com
``instg_000125`` for 5.0.4, ``instg_0044``/``instg_0064`` for 8.0: ``<install>/ascend-toolkit/
latest/<arch>-linux/ascend_toolkit_install.info``; 8.5 keeps the same relative path under
``<install>/cann``). ``compiler/version.info`` and the other components' ``version.info`` files
are not read: they carry component numbers (e.g. ``Version=7.3.0.1.231`` inside a CANN 8.0
toolkit), not the CANN release that decides which ATC options exist. Without the install record
the version is unknown, and the backend then uses only options every release accepts.

Nothing here runs ``atc``; the version decides which ATC options are used
(``atc_command.precision_argument``, ``precision_modes``) and is part of the conversion cache key.
"""
from __future__ import annotations

import os
import platform
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Tuple

from ...core.versions import version_numbers
from ...errors import ConversionError

#: environment variables that name the toolkit root, in search order.
HOME_VARIABLES = ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH")
#: where ``atc`` lives below a toolkit root, newest layout first.
ATC_SUBDIRS = ("bin", "compiler/bin", "atc/bin")
#: the install record below a toolkit root (documented), and the key holding the version.
INSTALL_RECORD = "{arch}-linux/ascend_toolkit_install.info"
VERSION_KEY = "version"


@dataclass(frozen=True)
class Toolkit:
    """A located CANN toolkit. ``version`` is None when no version file could be read."""

    atc: Path
    home: Optional[Path] = None
    version: Optional[str] = None
    version_file: Optional[Path] = None

    @property
    def version_tuple(self) -> Optional[Tuple[int, ...]]:
        return parse_version(self.version) if self.version else None

    def identity(self) -> str:
        """What tells this toolkit from another in a cache key: its version when the install
        record names one; else the ``atc`` executable it runs (real path, size, modification
        time), so two installs of unknown version -- or one reinstalled -- never share a
        converted model."""
        if self.version:
            return self.version
        try:
            real = os.path.realpath(self.atc)
            st = os.stat(real)
        except OSError as exc:
            raise ConversionError(f"ATC {self.atc} cannot be read ({exc.strerror or exc})") from None
        return f"unknown version; atc {real} ({st.st_size} bytes, mtime_ns {st.st_mtime_ns})"

    def describe(self) -> str:
        where = f" at {self.home}" if self.home else ""
        version = self.version or "(version unknown: no <arch>-linux/ascend_toolkit_install.info)"
        return f"CANN toolkit {version}{where}, atc {self.atc}"


def find_atc(explicit: "str | os.PathLike[str] | None" = None,
             env: Optional[Mapping[str, str]] = None) -> Path:
    """The ``atc`` executable, or a ConversionError that lists every place searched."""
    env = os.environ if env is None else env
    searched = []
    if explicit is not None:
        path = Path(explicit)
        if path.is_dir():
            path = path / "atc"
        if _is_executable(path):
            return path
        raise ConversionError(f"ATC not found: {path} is not an executable file "
                              f"(given as atc={os.fspath(explicit)!r})")
    on_path = shutil.which("atc", path=env.get("PATH", ""))
    if on_path:
        return Path(on_path)
    searched.append("PATH")
    for var in HOME_VARIABLES:
        root = env.get(var)
        if not root:
            searched.append(f"${var} (unset)")
            continue
        for sub in ATC_SUBDIRS:
            candidate = Path(root) / sub / "atc"
            if _is_executable(candidate):
                return candidate
        searched.append(f"${var}={root} ({', '.join(s + '/atc' for s in ATC_SUBDIRS)})")
    raise ConversionError(
        "ATC not found: searched " + "; ".join(searched) + ". Install the CANN toolkit and "
        "`source <install dir>/set_env.sh`, or pass the path (AscendBackend(atc=...)).")


def find_toolkit(explicit_atc: "str | os.PathLike[str] | None" = None,
                 env: Optional[Mapping[str, str]] = None) -> Toolkit:
    """Locate ``atc``, the installation root and the toolkit version."""
    env = os.environ if env is None else env
    atc = find_atc(explicit_atc, env)
    home = toolkit_home(atc, env)
    version, source = read_toolkit_version(home) if home else (None, None)
    return Toolkit(atc=atc, home=home, version=version, version_file=source)


def toolkit_home(atc: Optional[Path] = None, env: Optional[Mapping[str, str]] = None) -> Optional[Path]:
    """The toolkit root: the ancestor of ``atc`` holding a version file, else the environment's.
    The atc that runs decides what a conversion is: with an old toolkit's set_env.sh sourced and
    a newer atc given (``AscendBackend(atc=...)``), the environment's root recorded the old
    toolkit's version in baselines and named its platform_config in advice (a review)."""
    env = os.environ if env is None else env
    if atc is not None:  # the path as reached first (``latest``, as set_env.sh exports it)
        for parent in (*Path(atc).absolute().parents, *Path(atc).resolve().parents):
            if _version_file(parent) is not None:
                return parent
    for var in HOME_VARIABLES:
        root = env.get(var)
        if root and Path(root).is_dir():
            return Path(root)
    return None


def read_toolkit_version(home: "str | os.PathLike[str]") -> Tuple[Optional[str], Optional[Path]]:
    """(version string, install record it came from), or (None, None) when the toolkit has no
    ``<arch>-linux/ascend_toolkit_install.info`` naming a version."""
    path = _version_file(Path(home))
    if path is None:
        return None, None
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None, None
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        value = value.strip().strip("'\"")
        if sep and name.strip().lower() == VERSION_KEY and value:
            return value, path
    return None, None


def parse_version(text: str) -> Tuple[int, ...]:
    """Leading numeric parts of a CANN version: ``8.0.RC2`` -> (8, 0), ``7.0.0.alpha003`` ->
    (7, 0, 0), ``6.3.RC2.alpha001`` -> (6, 3). Raises ValueError when it has none."""
    parts = version_numbers(text)
    if not parts:
        raise ValueError(f"not a CANN version: {text!r}")
    return parts


def _version_file(root: Path) -> Optional[Path]:
    path = root / INSTALL_RECORD.format(arch=platform.machine() or "x86_64")
    if path.is_file():
        return path
    # an install for another architecture (cross toolkit) still names its version
    for path in sorted(root.glob(INSTALL_RECORD.format(arch="*"))):
        if path.is_file():
            return path
    return None


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)
