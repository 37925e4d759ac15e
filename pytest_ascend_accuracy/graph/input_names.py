"""The input names a user gives (an ``input_shape``, an inputs mapping, a sample's keys),
checked against the model's: a name the model does not have is refused naming the closest
and all of them, wherever it is given (``golden_dump(m, x, input_shape=...)`` dropped an
unknown name silently, and ``accuracy_inputs(m, inputs=...)`` took it as given).
"""
from __future__ import annotations

from typing import Iterable, Sequence

from ..errors import ConfigError, closest_text


def check_input_names(given: Iterable, inputs: Sequence[str], where: str) -> None:
    """Refuse a name of ``given`` that is not one of the model's ``inputs`` (in their order)."""
    unknown = sorted(str(k) for k in set(given) - set(inputs))
    if unknown:
        raise ConfigError(where, f"no model input named {unknown[0]!r}"
                                 f"{closest_text(unknown[0], inputs)}; inputs: "
                                 f"{', '.join(inputs) or '(none)'}")


__all__ = ["check_input_names"]
