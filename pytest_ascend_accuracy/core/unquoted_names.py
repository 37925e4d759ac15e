"""A name YAML read as something else: an op or tensor name written unquoted in a suite.

ONNX exports often name tensors by number (ddddocr's ``common.onnx`` outputs ``387``), and
YAML reads ``per_op: {387: 0.999}`` or ``ignore: [387]`` as the number 387 (``yes``/``on`` as
a boolean, ``2024-01-01`` as a date). An audit saw "per_op keys must be op names, got 387",
which did not say why 387 is not a name nor what to write. These words say it, with the entry
as it should be written (``core.yaml_text``: the name double-quoted); the quoted name is then
checked against the model as any other (a tensor's name is told to name its op).
"""
from __future__ import annotations

import datetime
import numbers
from typing import Any, Iterable, List, Mapping, Optional


def _kind(value: Any) -> Optional[str]:
    """What YAML made of an unquoted name, or None where it was not a plain scalar."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, numbers.Number):
        return "a number"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return "a date"
    return None


def _quoted(value: Any) -> Optional[str]:
    """The name ``value`` was most likely written as, double-quoted, where its text is sure:
    an integer or a date (a float's or boolean's spelling is lost: ``1e3``, ``on``)."""
    from .yaml_text import yaml_quoted

    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return yaml_quoted(str(int(value)))
    if isinstance(value, (datetime.date, datetime.datetime)):
        return yaml_quoted(value.isoformat())
    return None


def _shown(value: Any) -> str:
    """``value`` as YAML would print it: 387, 1.5, true, 2024-01-01."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return repr(value)


def unquoted_name_note(value: Any, snippet: str = "") -> str:
    """``"a number: YAML reads an unquoted 387 as one; quote it as the model spells it: "387"
    (SNIPPET)"`` for a name YAML read as a number, boolean or date; ``""`` for anything else.
    "As the model spells it": YAML reads ``017``, ``0x0F``, ``1_5`` and ``+15`` as 15 too, and
    the quoted "15" would name another tensor (a review)."""
    kind = _kind(value)
    if kind is None:
        return ""
    quoted = _quoted(value)
    if quoted is None:
        spelled = {"a boolean": "true, false, yes, no, on or off"}.get(kind, _shown(value))
        return (f"{kind}: YAML reads an unquoted {spelled} as one; quote the name as the "
                f"model spells it, in double quotes")
    return (f"{kind}: YAML reads an unquoted {quoted[1:-1]} as one; quote it as the model "
            f"spells it: {quoted}"
            + (f" ({snippet})" if snippet else ""))


def quoted_list(key: str, items: Iterable[Any]) -> str:
    """``ignore: ["387", Conv_1]``: the list with each integer or date quoted, or ``""`` where
    some item's spelling cannot be told (a float, a boolean, a mapping)."""
    from .yaml_text import yaml_flow_list

    out = []
    for item in items:
        if isinstance(item, str):
            out.append(item)
        else:
            quoted = _quoted(item)
            if quoted is None:
                return ""
            out.append(quoted[1:-1])
    return f"{key}: {yaml_flow_list(out)}"


def list_note(key: str, items: Any) -> str:
    """``"; 387 is a number: ..."``: the note for the first item of ``items`` YAML read as a
    number, boolean or date, with the list as it should be written; ``""`` where none is."""
    if not isinstance(items, (list, tuple)):
        return ""
    for item in items:
        if _kind(item) is not None:
            note = unquoted_name_note(item, quoted_list(key, items))
            return f"; {_shown(item)} is {note}"
    return ""


def mapping_key_note(key: str, name: Any, mapping: Mapping) -> str:
    """``", a number: ..."``: the note for a key of ``mapping`` YAML read as a number, boolean
    or date, with that entry as it should be written (``per_op: {"387": 0.999}``); ``""`` for
    any other key."""
    from .yaml_text import yaml_value

    quoted, value = _quoted(name), mapping.get(name)
    snippet = ""
    if quoted is not None and isinstance(value, (numbers.Real, Mapping)):  # (a Threshold: no)
        snippet = f"{key}: {{{quoted}: {yaml_value(value)}}}"
    note = unquoted_name_note(name, snippet)
    return f", {note}" if note else ""


def op_name_list(value: Any, at: str) -> List[str]:
    """A YAML list of op names at ``at`` (``models[0].ignore``): null is none, one string is one
    name; anything else a ``ConfigError`` (a name YAML read as a number said so: ``list_note``)."""
    from ..errors import ConfigError

    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(at, f"must be a list of op names, got {value!r}"
                          + list_note(at.rsplit(".", 1)[-1], value))
    return list(value)


__all__ = ["list_note", "mapping_key_note", "op_name_list", "quoted_list", "unquoted_name_note"]
