"""Op names <-> file-name stems of golden ``.npy`` dumps, injective (issue 13 D3).

msit's golden naming (docs/formats.md §7) writes node ``N`` as ``sanitize(N)`` (``.``, ``/``, ``\\`` and
space -> ``_``) and the node's inputs as ``input_{sanitize(N)}``. That is not injective: ``a.b``
and ``a_b`` share a stem, an op named ``input_x`` reads back as the inputs of op ``x``, and a name
with a newline matches no golden file pattern. Each such op lost its golden, and a fault in it
went unseen. The writer here keeps msit's form wherever it is unambiguous (so msaccucmp still
finds those goldens) and escapes the rest:

* plain: ``sanitize(N)`` when ``N`` is non-empty, consists of ``[A-Za-z0-9_-./\\ ]``, no earlier
  op of the directory took that stem, and it is not ``input_R`` of an earlier op's stem ``R``
  nor ``R`` of an earlier op's ``input_R`` (those files would read as ``R``'s inputs): an op
  ``input_proj/Relu`` stays plain where no op ``proj/Relu`` comes before it, so msaccucmp finds
  its golden;
* escaped: ``%`` + ``N``'s UTF-8 bytes with every byte outside ``[A-Za-z0-9_-]`` written ``%XX``
  (``input_x`` after an op ``x`` -> ``%input_x``, ``a\\nb`` -> ``%a%0Ab``); decoded back exactly;
* when a later op collides with an earlier plain stem whose real name differs from it (``a.b``
  then ``a_b``), the later one is escaped and the earlier one's real name is recorded in
  ``op_names.csv`` (rows ``stem,real name``), so reading gives both their real names.

Readers decode escaped stems, apply ``op_names.csv`` and keep every other stem as it is (a
directory msit wrote reads as before).
"""
from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Dict, Optional, Set

from ..errors import DumpFormatError
from .layout import name_table_rows, sanitize

NAMES_FILE = "op_names.csv"
INPUT_PREFIX = "input_"
_MSIT_SAFE = re.compile(r"[A-Za-z0-9_\-./\\ ]+")
_KEEP = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ESCAPED = re.compile(r"%(?:[A-Za-z0-9_-]|%[0-9A-F]{2})*")


def escape(name: str) -> str:
    """``%`` + the name's UTF-8 bytes, those outside ``[A-Za-z0-9_-]`` as ``%XX``."""
    return "%" + "".join(chr(b) if b in _KEEP else f"%{b:02X}"
                         for b in str(name).encode("utf-8", "surrogatepass"))


def unescape(stem: str) -> Optional[str]:
    """The name an escaped stem stands for; None when ``stem`` is not one."""
    if not _ESCAPED.fullmatch(stem):
        return None
    # the pattern admits only [A-Za-z0-9_-] and %XX: after each "%" come two hex digits, then
    # kept (ASCII) characters up to the next "%"
    first, *rest = stem[1:].split("%")
    out = bytearray(first.encode("ascii"))
    for part in rest:
        out.append(int(part[:2], 16))
        out += part[2:].encode("ascii")
    try:
        return out.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None


class StemAllocator:
    """Gives each op of one golden directory its stem (see module doc); ``recorded`` receives
    the (stem, real name) rows ``op_names.csv`` needs."""

    def __init__(self, directory):
        self.directory = Path(directory)
        self._owner: Dict[str, str] = {}  # plain stem -> real name that took it
        self._recorded: Set[str] = set()

    def stem(self, name: str) -> str:
        plain = sanitize(name)
        if (name and _MSIT_SAFE.fullmatch(name) and plain not in self._owner
                and not self._reads_as_inputs(plain)):
            self._owner[plain] = name
            return plain
        owner = self._owner.get(plain)
        if owner is not None and owner != plain and plain not in self._recorded:
            self._record(plain, owner)
        return escape(name)

    def _reads_as_inputs(self, plain: str) -> bool:
        """Whether files of stem ``plain`` would read as another op's inputs, or make another
        op's files read so: ``input_R`` is op ``R``'s inputs when ``R`` has output files
        (``output_stems``), so of ``input_R`` and ``R`` only the first to come stays plain."""
        if plain.startswith(INPUT_PREFIX) and plain[len(INPUT_PREFIX):] in self._owner:
            return True
        return INPUT_PREFIX + plain in self._owner

    def _record(self, stem: str, real: str) -> None:
        self._recorded.add(stem)
        with open(self.directory / NAMES_FILE, "a", newline="", encoding="utf-8") as f:
            csv.writer(f).writerow([stem, real])


def read_names(directory) -> Dict[str, str]:
    """``op_names.csv`` of ``directory`` as {stem: real name}; {} when absent."""
    path = Path(directory) / NAMES_FILE
    if not path.is_file():
        return {}
    names: Dict[str, str] = {}
    for line, row in name_table_rows(path):
        if len(row) != 2:
            raise DumpFormatError(path, f"line {line}: expected 'stem,real name', "
                                        f"got {len(row)} fields")
        names[row[0]] = row[1]
    return names


def output_stems(stems) -> Set[str]:
    """The stems among ``stems`` whose files are an op's outputs (msit's rule, applied down a
    chain of prefixes): ``input_R`` is op ``R``'s inputs when ``R`` is such a stem, else an op
    of its own (``input_x`` with no op ``x``; its own inputs are then ``input_input_x``)."""
    stems = set(stems)
    out: Set[str] = set()
    for stem in sorted(stems, key=len):  # a stem's rest is shorter: decided before it
        rest = stem[len(INPUT_PREFIX):] if stem.startswith(INPUT_PREFIX) else None
        if rest is None or not (rest in out or (rest.startswith("%") and unescape(rest))):
            out.add(stem)
    return out


def op_of_stem(stem: str, output_stems, names: Dict[str, str]):
    """(op name, "output" | "input") for a golden file stem. ``output_stems``: the stems that
    have output files (``output_stems``; msit's rule: ``input_X`` is X's input when X has
    outputs)."""
    real = unescape(stem) if stem.startswith("%") else None
    if real is not None:
        return real, "output"
    if stem.startswith(INPUT_PREFIX):
        rest = stem[len(INPUT_PREFIX):]
        real = unescape(rest) if rest.startswith("%") else None
        if real is not None:
            return real, "input"
        if rest in output_stems:
            return names.get(rest, rest), "input"
    return names.get(stem, stem), "output"


__all__ = ["NAMES_FILE", "escape", "unescape", "StemAllocator", "read_names", "op_of_stem",
           "output_stems"]
