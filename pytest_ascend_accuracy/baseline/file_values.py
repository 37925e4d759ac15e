"""A baseline file's values as the text ``baseline.file.render`` writes them, by hand rather
than by a YAML emitter, so the same values always give the same bytes: every string
double-quoted (``core.yaml_text.yaml_quoted``), floats as ``core.yaml_text.yaml_float``, keys
bare only where YAML reads them back as themselves."""
from __future__ import annotations

from typing import Mapping

from ..core.yaml_text import yaml_float, yaml_quoted


def scalar(value) -> str:
    """One value in flow style: null, booleans, ints, floats, quoted strings, lists, mappings."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return yaml_float(value)
    if isinstance(value, str):
        return yaml_quoted(value)
    if isinstance(value, Mapping):
        return ("{" + ", ".join(f"{yaml_quoted(str(k))}: {scalar(v)}" for k, v in value.items())
                + "}")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(scalar(v) for v in value) + "]"
    raise TypeError(f"cannot store {type(value).__name__} {value!r} in a baseline")


def key_text(key: str) -> str:
    """An environment or info key: bare where YAML reads it back as that string (every key
    ``environment_for`` writes), quoted otherwise (``on``, ``null``, ``a b``: ``on: 1`` read
    as ``True: 1``, and no check could read that baseline again)."""
    import yaml

    bare = key.isidentifier() and yaml.resolver.Resolver().resolve(
        yaml.ScalarNode, key, (True, False)) == "tag:yaml.org,2002:str"
    return key if bare else yaml_quoted(key)


def count_value(value):
    """A count as it renders and reads back: a numpy integer is the int it prints as."""
    import numbers

    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    return value


__all__ = ["count_value", "key_text", "scalar"]
