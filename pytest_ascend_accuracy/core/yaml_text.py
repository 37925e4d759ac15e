"""YAML the product prints for a user to paste (``then write inputs: {...}``, ``add to the
entry: input_shape: {...}``, ``YAML: per_op: {...}``, ``ignore: [...]``): each name and value
written so that YAML reads back exactly what was meant, in one line of flow style.

A name is written plain where PyYAML's ``safe_load`` reads it back as that same string and it
cannot end or split a flow collection (``x``, ``data/x_1.npy``, ``/attn/q/MatMul``), else
double-quoted (``yaml_quoted``). Printed plain, ``on`` read back as ``True`` (``no model input
named 'True'``), ``data/x,a.npy`` split into two keys and ``data/x #1.npy`` lost its end to a
comment (an audit, H325). Words YAML 1.1 or 1.2 readers take for a boolean or null (``y``,
``No``, ``NULL``, in any case) and names starting with a digit, a sign or an indicator are
quoted too, whatever PyYAML makes of them: a suite may be read by another tool.

Numbers are written as YAML 1.1 reads them back: ``1.0e-07``, not Python's ``1e-07`` (a
string to PyYAML, whose floats need a dot). A baseline file (``baseline.file``) writes its
strings with ``yaml_quoted`` and its floats with ``yaml_float`` too: one spelling of each,
whatever prints it.
"""
from __future__ import annotations

import math
import numbers
import re
from typing import Iterable, Mapping, Optional

#: plain where the whole name is of these characters and starts with one of the first set (and
#: is not dots alone: ``...`` ends a document where a line starts with it)
_PLAIN = re.compile(r"[A-Za-z_./<][A-Za-z0-9_./<>-]*")

#: booleans and null in YAML 1.1 or 1.2, compared lower-cased (PyYAML reads ``oN`` as a string,
#: another reader may not)
_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})


def yaml_quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar that loads back to exactly ``text``: printable
    characters kept (non-ASCII ones too), everything else escaped (JSON's ``\\ud83d\\ude00``
    for one character outside the BMP loads back as two in YAML, and JSON leaves DEL raw,
    which YAML refuses)."""
    out = ['"']
    for ch in str(text):
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif (code >= 0xA0 and ch.isprintable() and not 0xD800 <= code <= 0xDFFF
              and code not in (0xFEFF, 0xFFFE, 0xFFFF)):
            out.append(ch)
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def yaml_scalar(text: str) -> str:
    """``text`` (a name, a path) plain where YAML reads it back as that string and it cannot
    break a flow collection, else double-quoted."""
    text = str(text)
    if not _PLAIN.fullmatch(text) or text.lower() in _WORDS or not text.strip("."):
        return yaml_quoted(text)
    import yaml

    tag = yaml.resolver.Resolver().resolve(yaml.ScalarNode, text, (True, False))
    return text if tag == "tag:yaml.org,2002:str" else yaml_quoted(text)


def yaml_float(value: float, fmt: Optional[str] = None) -> str:
    """A float as YAML 1.1 reads it back: ``.nan``, ``.inf``, ``-.inf``, else ``format(value,
    fmt)`` (the shortest text that is that float where no ``fmt``: ``repr``) with the dot and
    the exponent's sign YAML 1.1 floats need: ``1.0e-07``, ``1.0e+16``, ``1.000e-03``."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = format(value, fmt) if fmt else repr(float(value))
    mantissa, e, exponent = text.partition("e")
    if e and "." not in mantissa:
        mantissa += ".0"
    if e and exponent[:1] not in ("+", "-"):
        exponent = "+" + exponent
    return mantissa + e + exponent


def yaml_number(value) -> str:
    """A bool, int or float as YAML reads it back (a float as ``yaml_float``: ``1.0e-07``,
    ``1.0``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    return yaml_float(float(value))


def yaml_value(value) -> str:
    """One value in flow style: a string as ``yaml_scalar``, a number as ``yaml_number``,
    None as null, a mapping and a list as ``yaml_flow_map`` and ``yaml_flow_list``."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return yaml_scalar(value)
    if isinstance(value, (bool, numbers.Real)):
        return yaml_number(value)
    if isinstance(value, Mapping):
        return yaml_flow_map(value)
    if isinstance(value, (list, tuple)):
        return yaml_flow_list(value)
    return yaml_scalar(str(value))


def yaml_flow_map(mapping: Mapping) -> str:
    """``{x: data/x_1.npy, "on": [1, 4]}``: a mapping as one line of YAML."""
    return "{" + ", ".join(f"{yaml_value(k)}: {yaml_value(v)}" for k, v in mapping.items()) + "}"


def yaml_flow_list(items: Iterable) -> str:
    """``[1, 4]``, ``[a, "b c"]``: a list as one line of YAML."""
    return "[" + ", ".join(yaml_value(v) for v in items) + "]"
