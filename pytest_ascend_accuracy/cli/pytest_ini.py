"""The pytest ini file and rootdir a ``pytest PATH`` run would use, found without importing
pytest (the CLI must not need it), so ``ascend-accuracy cache PATH`` looks at the cache that
run uses.

pytest's own rule (``_pytest.config.findpaths.locate_config``), followed here: from the
argument's directory upwards, the first of ``pytest.toml``, ``.pytest.toml`` (pytest 9, a
``[pytest]`` table), ``pytest.ini``, ``.pytest.ini``, ``pyproject.toml``
(with a ``[tool.pytest.ini_options]`` or ``[tool.pytest]`` table), ``tox.ini`` (with a
``[pytest]`` section) or ``setup.cfg`` (with ``[tool:pytest]``) is the ini file, and its
directory the rootdir; failing that, the first ``pyproject.toml`` without such a table (pytest
8.1 and later). Without any, the rootdir is the common ancestor of where pytest runs and its
argument (pytest then looks for a ``setup.py`` upwards; that only moves the rootdir of
projects without any of these files, and is not followed here).
"""
from __future__ import annotations

import configparser
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional, Tuple

from ..errors import ConfigError


@dataclass(frozen=True)
class PytestIni:
    """The rootdir, the ini file (None: there is none), its values (every key of its pytest
    section, as text: misspelled keys of ours are refused by ``core.ini_keys``) and its
    ``addopts`` split into arguments, as pytest splits them."""

    rootdir: Path
    inifile: Optional[Path] = None
    values: Dict[str, str] = field(default_factory=dict)
    addopts: Tuple[str, ...] = ()


def find_pytest_ini(start, invocation_dir=None) -> PytestIni:
    """The ini file and rootdir for ``pytest start`` run in ``invocation_dir`` (default: the
    current directory); ``start`` is a file or directory."""
    here = Path(start).expanduser().resolve()
    if here.is_file():
        here = here.parent
    first_pyproject = None
    for directory in (here, *here.parents):
        for name in ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml",
                     "tox.ini", "setup.cfg"):
            candidate = directory / name
            if candidate.is_file():
                values = _read(candidate)
                if values is not None:
                    addopts = values.pop("addopts", "")
                    return PytestIni(directory, candidate, values, _split(addopts, candidate))
                if name == "pyproject.toml" and first_pyproject is None:
                    first_pyproject = candidate
    if first_pyproject is not None:  # pytest >= 8.1: the first pyproject.toml, table or not
        return PytestIni(first_pyproject.parent, first_pyproject, {})
    # no ini file: the common ancestor of where pytest runs and its argument
    invocation = Path(invocation_dir or Path.cwd()).resolve()
    return PytestIni(Path(os.path.commonpath([str(invocation), str(here)])))


def _read(path: Path) -> Optional[Dict[str, str]]:
    """The file's pytest settings (``addopts`` as written: a TOML list stays one), or None when
    the file
    holds no pytest section (then it is not pytest's ini file)."""
    if path.name == "pyproject.toml":
        return _read_toml(path)
    if path.name in ("pytest.toml", ".pytest.toml"):  # pytest 9: a [pytest] table, always its own
        return _read_toml(path, table=("pytest",)) or {}
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), f"cannot be read as an ini file: {exc}") from None
    section = {"setup.cfg": "tool:pytest", "tox.ini": "pytest"}.get(path.name, "pytest")
    if not parser.has_section(section):
        # pytest.ini is pytest's even without a [pytest] section (pytest says so)
        return {} if path.name in ("pytest.ini", ".pytest.ini") else None
    return dict(parser.items(section))


def _read_toml(path: Path, table=("tool", "pytest")) -> Optional[Dict[str, str]]:
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - 3.10: pytest itself depends on tomli there
        try:
            import tomli as tomllib
        except ImportError:
            return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), f"cannot be read as TOML: {exc}") from None
    pytest_table = data
    for key in table:
        pytest_table = pytest_table.get(key) if isinstance(pytest_table, dict) else None
    if not isinstance(pytest_table, dict):
        return None
    table = pytest_table.get("ini_options", pytest_table)
    return {k: v if k == "addopts" and isinstance(v, list) else str(v) for k, v in table.items()}


def _split(addopts, inifile: Path) -> Tuple[str, ...]:
    """``addopts`` as pytest reads it (an ``args`` ini value): a TOML list as is, text split as
    a shell would (``shlex``)."""
    import shlex

    if isinstance(addopts, list):
        return tuple(str(a) for a in addopts)
    try:
        return tuple(shlex.split(addopts))
    except ValueError as exc:  # pytest fails on it too
        raise ConfigError(f"addopts in {inifile}", f"cannot be split into arguments: {exc}"
                          ) from None


__all__ = ["PytestIni", "find_pytest_ini"]
