"""The arguments pytest adds to its command line before parsing it, read without pytest, so
``ascend-accuracy cache`` finds the cache directory a ``pytest`` run takes from them: the ini
file's ``addopts``, then ``PYTEST_ADDOPTS`` (``shlex``-split), then the command line itself
(``_pytest.config.Config._preparse``: the later wins). A CI trial set
``addopts = --accuracy-cache-dir=...``: pytest used that folder while the command listed and
pruned ``.ascend-accuracy``.
"""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import ConfigError
from .pytest_ini import PytestIni


@dataclass(frozen=True)
class Given:
    """A value given on pytest's (added) command line, and where: ``PYTEST_ADDOPTS`` or
    ``pytest.ini addopts``."""

    value: str
    where: str


def added_arguments(ini: PytestIni, shown_ini: str, environ: Optional[Mapping[str, str]] = None
                    ) -> List[Tuple[Sequence[str], str]]:
    """``(arguments, where)`` in the order pytest puts them before the command line's own."""
    environ = os.environ if environ is None else environ
    added = [(ini.addopts, f"{shown_ini} addopts")] if ini.addopts else []
    env = environ.get("PYTEST_ADDOPTS", "")
    if env:
        try:
            added.append((shlex.split(env), "PYTEST_ADDOPTS"))
        except ValueError as exc:  # pytest fails on it too
            raise ConfigError("PYTEST_ADDOPTS", f"cannot be split into arguments: {exc}"
                              ) from None
    return added


def option_given(added: List[Tuple[Sequence[str], str]], option: str) -> Optional[Given]:
    """The last ``option VALUE`` / ``option=VALUE`` of ``added`` (argparse: the last wins)."""
    found = None
    for args, where in added:
        for k, arg in enumerate(args):
            if arg == option and k + 1 < len(args):
                found = Given(args[k + 1], where)
            elif arg.startswith(option + "="):
                found = Given(arg[len(option) + 1:], where)
    return found


def overrides_given(added: List[Tuple[Sequence[str], str]]) -> Dict[str, Given]:
    """The ini values ``-o KEY=VALUE`` (``--override-ini``) of ``added`` give, the last of a
    key winning: pytest reads them instead of the ini file's."""
    found: Dict[str, Given] = {}
    for args, where in added:
        for k, arg in enumerate(args):
            text = None
            if arg in ("-o", "--override-ini") and k + 1 < len(args):
                text = args[k + 1]
            elif arg.startswith("--override-ini="):
                text = arg[len("--override-ini="):]
            elif arg.startswith("-o") and len(arg) > 2 and not arg.startswith("--"):
                text = arg[2:]
            if text is not None and "=" in text:
                key, _, value = text.partition("=")
                found[key.strip()] = Given(value, f"-o ({where})")
    return found


__all__ = ["Given", "added_arguments", "option_given", "overrides_given"]
