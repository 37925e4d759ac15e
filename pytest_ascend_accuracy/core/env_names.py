"""The ``ASCEND_ACCURACY_*`` environment variables this package reads (README, "Environment
variables"), and the check that refuses any other name with that prefix: a misspelled one
(``ASCEND_ACCURACY_ORT_THREAD=2``) changed nothing, with nothing said. The plugin checks at a
session's start, the CLI before a command runs; both check ``ASCEND_ACCURACY_RUNTIME``'s value
too, on the emulator as well: ``acll``, set for an NPU run, passed unsaid on a laptop and failed
only on the NPU machine."""
from __future__ import annotations

import os
from typing import Mapping, Optional

from ..errors import ConfigError, closest_text

PREFIX = "ASCEND_ACCURACY_"
#: every variable read, by the module that reads it
KNOWN = ("ASCEND_ACCURACY_ORT_THREADS",  # plugin.xdist_support (pytest sessions)
         "ASCEND_ACCURACY_RUNTIME",  # backends.ascend.runtime
         "ASCEND_ACCURACY_NUMPY_KERNEL",  # core.compiled_modules
         "ASCEND_ACCURACY_NUMPY_LAYOUT")  # core.compiled_modules


RUNTIME_ENV = "ASCEND_ACCURACY_RUNTIME"
#: the values it takes (``backends.ascend.runtime``)
RUNTIMES = ("auto", "acl", "ais_bench")


def check_runtime(choice: str, from_env: bool) -> str:
    """``choice`` when it is one of ``RUNTIMES``; a ConfigError naming the closest otherwise."""
    if choice not in RUNTIMES:
        raise ConfigError("runtime", f"expected one of {', '.join(RUNTIMES)}, got {choice!r}"
                          + (f" (from ${RUNTIME_ENV})" if from_env else "")
                          + closest_text(choice, RUNTIMES))
    return choice


def check_env_names(environ: Optional[Mapping[str, str]] = None) -> None:
    """Refuse a set ``ASCEND_ACCURACY_*`` variable this package does not read, and a runtime
    it does not know."""
    env = os.environ if environ is None else environ
    if env.get(RUNTIME_ENV):
        check_runtime(env[RUNTIME_ENV], from_env=True)
    unknown = sorted(name for name in env if name.startswith(PREFIX) and name not in KNOWN)
    if unknown:  # (closest by what follows the prefix: every name shares it)
        near = closest_text(unknown[0][len(PREFIX):], [k[len(PREFIX):] for k in KNOWN])
        near = near.replace("'", "'" + PREFIX, 1) if near else ""
        raise ConfigError("environment", f"unknown variable {unknown[0]}{near}; this package "
                                         f"reads {', '.join(KNOWN)}; unset it if it is not "
                                         f"meant for this package")


__all__ = ["KNOWN", "PREFIX", "RUNTIMES", "RUNTIME_ENV", "check_env_names", "check_runtime"]
