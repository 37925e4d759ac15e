"""A misspelled keyword argument of the API a test calls (``Mode(fusion_rules_of=...)``,
``check_dataset(..., outptu="y")``, ``accuracy_inputs(model, sed=1)``) is a ``ConfigError``
naming the closest real argument and all of them: Python's own ``TypeError: ... got an
unexpected keyword argument`` named no argument it takes. A function that takes ``**kwargs``
(``ascend_model``'s ATC options, checked by ``core.atc_option_check``) is left as it is."""
from __future__ import annotations

import functools
import inspect
from typing import Callable

from ..errors import ConfigError, closest_text


def closest_keywords(fn: Callable, where: str) -> Callable:
    """``fn``, refusing an unknown keyword argument as a ``ConfigError`` at ``where``."""
    params = inspect.signature(fn).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return fn
    names = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
             and p.name != "self"]
    known = frozenset(names)

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        __tracebackhide__ = True
        if not known.issuperset(kwargs):
            unknown = [k for k in kwargs if k not in known]
            raise ConfigError(where, f"unknown argument {unknown[0]!r}"
                                     f"{closest_text(unknown[0], names)}; it takes "
                                     f"{', '.join(names)}")
        return fn(*args, **kwargs)

    return checked
