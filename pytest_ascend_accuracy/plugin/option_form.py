"""A plugin option whose value is given as the next argument and names an existing path
(``--accuracy-cache-dir ../cache``): pytest looks for its ini file and rootdir before this
plugin's options are known, takes such a value for a path to test, and searches from the
common folder of those paths, so the project's ini file was silently not read (every
``ascend_accuracy_*`` setting with it, the cache's size bound among them), or the rootdir moved
(the default cache and baselines with it), and under ``-n`` workers that saw the folder appear
disagreed on their tests' ids (pytest-dev/pytest#8846; a review). Found by asking pytest's own
``determine_setup`` what it reads from the arguments that are paths to test once this plugin's
options are known (``config.option.file_or_dir``), and refused where that differs from what it
read, naming both and the ``=`` form to write.
"""
from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Optional, Tuple

#: this plugin's options that take a value
VALUE_OPTIONS = ("--accuracy-cache-dir", "--accuracy-report", "--accuracy-backend",
                 "--accuracy-threshold", "--accuracy-diagnose-budget", "--accuracy-dump-mode",
                 "--ascend-device", "--ascend-precision-policy", "--soc-version")


def check_option_form(config) -> None:
    """``pytest.UsageError`` where pytest's rootdir or ini file is not the one the command line
    gives once this plugin's options are known (module doc)."""
    import pytest

    base = Path(config.invocation_params.dir)
    values = (getattr(config.option, o[2:].replace("-", "_"), None) for o in VALUE_OPTIONS)
    if not any(v is not None and (base / str(v)).exists() for v in values):
        return  # no value pytest can have taken for a path: no ini search done again
    meant = _meant_setup(config)
    if meant is None:
        return
    read = (Path(config.rootpath), Path(config.inipath) if config.inipath else None)
    if _same(meant, read):
        return
    given = [f"{o} {v}" for o, v in _separate_values(config)]
    how = ("; write " + ", ".join(g.replace(" ", "=", 1) for g in given) if given
           else "; give this plugin's options as --option=VALUE")
    raise pytest.UsageError(
        f"{', '.join(given) or 'an option value given as the next argument'}: pytest took "
        f"{'it' if len(given) < 2 else 'them'} for a path to test, so it read "
        f"{_setup_text(read, base)} instead of {_setup_text(meant, base)}, which the command "
        f"line gives (its ascend_accuracy_* settings, and the default cache and baselines under "
        f"its rootdir, were not used){how}")


def _meant_setup(config) -> Optional[Tuple[Path, Optional[Path]]]:
    """(rootdir, ini file) pytest's ``determine_setup`` gives for the paths to test alone; None
    where this pytest's function cannot be called so (an older or newer signature)."""
    try:
        from _pytest.config.findpaths import determine_setup
    except ImportError:
        return None
    option = config.option
    kwargs = dict(inifile=getattr(option, "inifilename", None),
                  args=[str(a) for a in getattr(option, "file_or_dir", None) or ()],
                  rootdir_cmd_arg=getattr(option, "rootdir", None) or None,
                  invocation_dir=Path(config.invocation_params.dir))
    for extra in ({"override_ini": getattr(option, "override_ini", None)}, {}):
        try:
            found = determine_setup(**kwargs, **extra)
        except TypeError:
            continue
        except Exception:  # (refused by pytest itself, which says why)
            return None
        return Path(found[0]), Path(found[1]) if found[1] else None
    return None


def _same(a, b) -> bool:
    return all((x.resolve() if x else None) == (y.resolve() if y else None) for x, y in zip(a, b))


def _separate_values(config):
    """(option, value) of this plugin's value options given as two arguments."""
    args = [str(a) for a in config.invocation_params.args]
    args = shlex.split(os.environ.get("PYTEST_ADDOPTS", "")) + args
    return [(o, v) for o, v in zip(args, args[1:]) if o in VALUE_OPTIONS]


def _setup_text(setup, base: Path) -> str:
    root, ini = setup

    def shown(path: Path) -> str:
        return os.path.relpath(path, base) if base == path or base in path.parents else str(path)
    return (f"{shown(ini)} (rootdir {shown(root)})" if ini is not None
            else f"no ini file (rootdir {shown(root)})")
