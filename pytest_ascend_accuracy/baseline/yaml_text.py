"""Values as YAML text that loads back as exactly that value: what a baseline file is rendered
from (``baseline.file.render``), by hand rather than by a YAML emitter, so the same values always
give the same bytes."""
from __future__ import annotations

import math
from typing import Mapping, Optional


def quote(text: str) -> str:
    """A YAML double-quoted scalar that loads back to exactly ``text``: printable characters
    are kept (non-ASCII ones too, for readable diffs), everything else is escaped."""
    out = ['"']
    for ch in str(text):
        code = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code >= 0xA0 and ch.isprintable() and not 0xD800 <= code <= 0xDFFF \
                and code not in (0xFEFF, 0xFFFE, 0xFFFF):
            out.append(ch)
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def float_text(value: float, fmt: Optional[str] = None) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = format(value, fmt) if fmt else repr(float(value))
    if "e" in text and "." not in text:  # YAML 1.1 floats need a dot
        mant, exp = text.split("e")
        text = f"{mant}.0e{exp}"
    if "e" in text:
        mant, exp = text.split("e")
        if exp[0] not in "+-":
            exp = "+" + exp
        text = f"{mant}e{exp}"
    return text


def scalar(value) -> str:
    """One value in flow style: null, booleans, ints, floats, quoted strings, lists, mappings."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return float_text(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{quote(str(k))}: {scalar(v)}" for k, v in value.items()) + "}"
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
    return key if bare else quote(key)


def count_value(value):
    """A count as it renders and reads back: a numpy integer is the int it prints as."""
    import numbers

    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    return value


__all__ = ["count_value", "float_text", "key_text", "quote", "scalar"]
