"""Protobuf text format as ATC reads an ``--insert_op_conf`` file: its tokens and its values.

ATC reads the file into ``InsertNewOps`` (``insert_op.proto``) with protobuf's C++
``TextFormat::Parse``; the rules here are that parser's (``text_format.cc``:
``ConsumeFieldValue``, ``ConsumeSignedInteger``, ``ConsumeDouble``), checked case by case
against python ``google.protobuf.text_format`` on a message built from the proto's field list
(``tests/aipp/test_aipp_textformat.py``). Where the two parsers differ this module refuses
what either refuses, so a file it takes is one ATC takes:

- a quoted value is a string: an enum, bool or number in quotes is refused ("Expected integer
  or identifier", "Couldn't parse integer"), and a string field needs the quotes;
- integers: decimal, ``0x`` hex, or octal with a leading ``0`` (``010`` is 8); a leading ``-``
  only (python also takes ``+5`` and ``1_000``, the C++ parser does not); within the field's
  int32 / uint32 range;
- floats: decimal with an optional exponent and ``f`` suffix, ``inf``/``infinity``/``nan``
  in any case; not hex or octal (``010``, ``0x10``);
- bools: ``true``, ``True``, ``t``, ``1`` / ``false``, ``False``, ``f``, ``0`` (the C++ parser
  also takes ``0x1`` and ``00``, python does not);
- enums: a value name, or its number (``input_format: 3``), not ``01``-style octal (python
  refuses it).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Sequence

from ..errors import ConfigError

_TOKEN = re.compile(r'\s*(?:(#[^\n]*)|([{}<>\[\]:;,])|("(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\')'
                    r'|([A-Za-z0-9_.+\-]+)|(\S))')
_INT = re.compile(r"-?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fF]?|(inf|infinity|nan)f?)", re.I)
_RANGES = {"int32": (-2 ** 31, 2 ** 31 - 1), "uint32": (0, 2 ** 32 - 1)}
#: a UTF-8 byte-order mark (invisible in an editor): TextFormat reads tokens with protobuf's
#: ``Tokenizer::Next``, which skips no BOM (only ``NextWithComments``, the .proto parser's,
#: does: ``io/tokenizer.cc``), so ATC refuses the file at its first character
_BOM = ("the file starts with a UTF-8 byte-order mark (BOM, the bytes EF BB BF that an editor's "
        "'UTF-8 with BOM' encoding writes, invisible in the editor), which protobuf text format, "
        "as ATC reads the file, refuses: save the file as UTF-8 without BOM")
BOOL_WORDS = {"true": True, "True": True, "t": True, "1": True,
              "false": False, "False": False, "f": False, "0": False}


@dataclass
class Tok:
    text: str  # a string token's text is its content, without the quotes
    kind: str  # "punct", "word", "str"
    line: int
    start: int
    end: int

    @property
    def span(self):
        """Where the value stands in the file, quotes included (for in-place corrections)."""
        return (self.start - 1, self.end + 1) if self.kind == "str" else (self.start, self.end)


def tokens(text: str, path: str) -> List[Tok]:
    """The file's tokens; ``#`` comments dropped; an unexpected character or an unclosed
    quote is a ConfigError naming the line."""
    out: List[Tok] = []
    pos, line, last = 0, 1, 0
    while True:
        m = _TOKEN.match(text, pos)
        if m is None or m.lastindex is None:  # only whitespace is left
            break
        start, end = m.start(m.lastindex), m.end(m.lastindex)
        line += text.count("\n", last, start)
        last = start
        if m.group(2):
            out.append(Tok(m.group(2), "punct", line, start, end))
        elif m.group(3):
            out.append(Tok(m.group(3)[1:-1], "str", line, start + 1, end - 1))
        elif m.group(4):
            out.append(Tok(m.group(4), "word", line, start, end))
        elif m.group(5):
            ch = m.group(5)
            problem = (f"a string's closing quote {ch} is missing on this line" if ch in "\"'"
                       else "'//' comments are not protobuf text format: start a comment with #"
                       if text.startswith("//", start) else _BOM if ch == "\ufeff" and not start
                       else f"unexpected character {ch!r}")
            raise ConfigError(f"{path}:{line}", problem)
        pos = end
    return out


def parse_int(s: str, proto_type: str) -> Optional[int]:
    """An integer token's value as TextFormat reads it (None: not an integer it takes).
    Out of the field's range is a ValueError naming the range."""
    if not _INT.fullmatch(s):
        return None
    digits = s.lstrip("-")
    if digits[:2] in ("0x", "0X"):
        value = int(digits, 16)
    elif len(digits) > 1 and digits[0] == "0":
        value = int(digits, 8)
    else:
        value = int(digits)
    value = -value if s.startswith("-") else value
    low, high = _RANGES[proto_type]
    if not low <= value <= high:
        raise ValueError(f"{s} is out of {proto_type}'s range {low}..{high}")
    return value


def parse_float(s: str) -> Optional[float]:
    """A float token's value as TextFormat reads it (None: not a float it takes)."""
    m = _FLOAT.fullmatch(s)
    if not m:
        return None
    digits = s.lstrip("-")
    if re.fullmatch(r"0\d+", digits):  # "010": the C++ parser wants a decimal number here
        return None
    body = s[:-1] if s[-1] in "fF" and not s.lower().endswith("inf") else s
    return float(body)


def unquoted_hint(key: str, tok: Tok, kind: str, choices: Sequence[str] = ()) -> str:
    """Why a quoted value is refused for a non-string field, and the line that works."""
    what = {"bool": "a bool", "int": "an integer", "float": "a number"}.get(kind, "an enum")
    refusal = ("Expected integer or identifier" if what == "an enum" else
               'Expected "true" or "false"' if what == "a bool" else "Couldn't parse integer"
               if what == "an integer" else "Couldn't parse float")
    head = (f"{key}: \"{tok.text}\" is quoted, but {key} is {what}: protobuf text format, which "
            f"ATC reads the file with, takes a quoted value as a string and refuses it here "
            f"({refusal}); ")
    word = tok.text.strip()
    if what == "an enum":
        same = ([c for c in choices if c == word]
                or [c for c in choices if c.lower() == word.lower()])
        if not same:
            return head + f"write one of {', '.join(choices)} without quotes"
        word = same[0]
    elif what == "a bool" and word not in BOOL_WORDS:
        return head + f"write it without quotes: {key}: true (or false)"
    elif what == "an integer" and not _INT.fullmatch(word):
        return head + f"write an integer without quotes: {key}: 0"
    elif what == "a number" and parse_float(word) is None:
        return head + f"write a number without quotes: {key}: 0.0"
    return head + f"write it without quotes: {key}: {word}"


def aipp_value_text(value) -> str:
    """A value as the file writes it (``true``/``false``, integers, short floats)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.8g}"
    return str(value)
