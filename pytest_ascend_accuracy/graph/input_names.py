"""The input names a user gives (an ``input_shape``, an inputs mapping, a sample's keys),
checked against the model's: a name the model does not have is refused naming the closest
and all of them, wherever it is given (``golden_dump(m, x, input_shape=...)`` dropped an
unknown name silently, and ``accuracy_inputs(m, inputs=...)`` took it as given).
"""
from __future__ import annotations

from typing import Callable, Iterable, Sequence

from ..errors import ConfigError, closest_text


def check_input_names(given: Iterable, inputs: Sequence[str], where: str) -> None:
    """Refuse a name of ``given`` that is not one of the model's ``inputs`` (in their order)."""
    unknown = sorted(str(k) for k in set(given) - set(inputs))
    if unknown:
        raise ConfigError(where, f"no model input named {unknown[0]!r}"
                                 f"{closest_text(unknown[0], inputs)}; inputs: "
                                 f"{', '.join(inputs) or '(none)'}")


def require_mapping(inputs, input_names: Callable[[], Sequence[str]], where: str) -> None:
    """Refuse ``inputs`` that are not a mapping ``{input name: array}`` (a bare array for a
    one-input model, a list), naming the model's inputs (``input_names()``, asked only then) as
    the mapping to give."""
    from collections.abc import Mapping

    if isinstance(inputs, Mapping):
        return
    names = list(input_names())
    spelled = ", ".join(f"{n!r}: ..." for n in names)
    raise ConfigError(where, f"expected a mapping {{input name: array}}, got "
                             f"{type(inputs).__name__}; the model's inputs: "
                             f"{', '.join(names) or '(none)'} (give {{{spelled}}})")


__all__ = ["check_input_names", "require_mapping"]
