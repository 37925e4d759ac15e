"""The ``ASCEND_ACCURACY_*`` environment variables this package reads (README, "Environment
variables"), and the check that refuses any other name with that prefix: a misspelled one
(``ASCEND_ACCURACY_ORT_THREAD=2``) changed nothing, with nothing said. The plugin checks at a
session's start, the CLI before a command runs."""
from __future__ import annotations

import os
from typing import Mapping, Optional

from ..errors import ConfigError, closest_text

PREFIX = "ASCEND_ACCURACY_"
#: every variable read, by the module that reads it
KNOWN = ("ASCEND_ACCURACY_ORT_THREADS",  # graph.onnx_graph
         "ASCEND_ACCURACY_RUNTIME",  # backends.ascend.runtime
         "ASCEND_ACCURACY_NUMPY_KERNEL",  # core.compiled_modules
         "ASCEND_ACCURACY_NUMPY_LAYOUT")  # core.compiled_modules


def check_env_names(environ: Optional[Mapping[str, str]] = None) -> None:
    """Refuse a set ``ASCEND_ACCURACY_*`` variable this package does not read."""
    env = os.environ if environ is None else environ
    unknown = sorted(name for name in env if name.startswith(PREFIX) and name not in KNOWN)
    if unknown:
        raise ConfigError("environment", f"unknown variable {unknown[0]}"
                                         f"{closest_text(unknown[0], KNOWN)}; this package reads "
                                         f"{', '.join(KNOWN)}")


__all__ = ["KNOWN", "PREFIX", "check_env_names"]
