"""Read an ATC ``--insert_op_conf`` AIPP file with its real syntax, and write a corrected copy.

The file is protobuf text format for CANN's ``InsertNewOps`` message (``insert_op.proto``):
one or more ``aipp_op { key: value ... }`` blocks (or ``aipp_op < ... >``, or a list
``aipp_op: [{...}, {...}]``, as TextFormat allows), ``#`` comments, one block per model input
chosen by ``related_input_rank`` (ATC guide, "Static AIPP" and "Configuration File Template":
hiascend.com ... devaids/atc/atctool_0020.html, atlasatc_16_0025.html). Key names, kinds and
defaults are in :mod:`.keys`; tokens and how a value is read (quoted only for strings, octal
``010``, int32/uint32 ranges) in :mod:`.textformat`.

Everything the emulator cannot apply faithfully is a :class:`ConfigError` naming the file, the
line and the key: unknown keys (with the closest real names), values of the wrong kind (a
quoted enum, bool or number included: TextFormat refuses them), a key given twice in one block
(TextFormat refuses a second value of a non-repeated field; GE one of a repeated field: "can
not be configed repeatedly"), dynamic AIPP, input formats
other than YUV420SP_U8 / RGB888_U8 / XRGB8888_U8 / YUV400_U8, resize, rotation and single-line
mode, CSC to gray (one channel) or on YUV400_U8, crop windows outside the source image, odd crop
offsets for YUV420SP_U8, and what the AIPP operator refuses at conversion (:mod:`.ranges`:
``mean_chn``/``min_chn`` outside 0..255, padding over 32, a crop size of 0 with padding, crop or
padding without ``src_image_size``).
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, replace
from typing import Dict, List, Mapping, Optional, Tuple

from ..errors import ConfigError
from .keys import (DEFAULTS, ENUMS, KEY_KINDS, REGISTER_RANGES, REPEATED_KEYS, RGB2YUV_DEFAULTS,
                   SUPPORTED_FORMATS, UINT32_KEYS, closest_names)
from .mean_fraction import min_chn_in_block, split_mean_hint
from .ranges import check_operator_ranges
# (aipp_value_text: fix_comments and image_size import it from here)
from .textformat import (BOOL_WORDS, Tok, aipp_value_text, parse_float, parse_int,  # noqa: F401
                         tokens, unquoted_hint)

_FP16_MAX = 65504.0


@dataclass
class AippOp:
    """One ``aipp_op`` block: its values (typed), where each key sits, where the block ends."""

    path: str
    values: Dict[str, object]
    lines: Dict[str, int]
    spans: Dict[str, Tuple[int, int]]
    start_line: int
    close_offset: int
    #: the model input's height and width, which a crop size of 0 takes (ATC: from
    #: ``--input_shape``, ascend-opp ``aipp_comm.py``: ``if crop_size_h == 0: crop_size_h = H``);
    #: None where the block is read without its model
    model_hw: Optional[Tuple[int, int]] = None

    def get(self, key: str):
        """The value of ``key`` (the template's default when the file leaves it out; for the
        CSC matrix, the one GE fills in for this input format)."""
        if key in self.values:
            return self.values[key]
        if key in RGB2YUV_DEFAULTS and self.values.get("input_format") != "YUV420SP_U8":
            return RGB2YUV_DEFAULTS[key]
        return DEFAULTS.get(key)

    @property
    def rank(self) -> int:
        return int(self.get("related_input_rank"))

    @property
    def input_format(self) -> str:
        return str(self.values["input_format"])

    @property
    def channels(self) -> int:
        """Channels of the model input this block makes: 1 for YUV400_U8, else 3."""
        return 1 if self.input_format == "YUV400_U8" else 3

    def with_values(self, changes: Mapping[str, object]) -> "AippOp":
        """A copy with some values replaced (what-if configurations for the mistake search)."""
        return replace(self, values={**self.values, **changes})

    def with_model_hw(self, hw: Optional[Tuple[int, int]]) -> "AippOp":
        """A copy that knows its model input's height and width (what a crop size of 0 is)."""
        hw = None if hw is None or None in tuple(hw) else (int(hw[0]), int(hw[1]))
        return replace(self, model_hw=hw)

    def crop_size(self, axis: str) -> Optional[int]:
        """The crop's size along ``axis`` ('h' or 'w'): ``crop_size_*``, or for 0 the model
        input's (None while that is not known)."""
        given = int(self.get(f"crop_size_{axis}"))
        if given or self.model_hw is None:
            return given or None
        return self.model_hw[0 if axis == "h" else 1]

    @property
    def shown(self) -> str:
        """The file as messages print it (``shown_path``)."""
        return shown_path(self.path)

    def where(self, key: Optional[str] = None) -> str:
        line = self.lines.get(key, self.start_line) if key else self.start_line
        return f"{self.shown}:{line}"

    def error(self, key: Optional[str], problem: str) -> ConfigError:
        return ConfigError(self.where(key), f"{key}: {problem}" if key else problem)


@dataclass
class AippConfig:
    """A parsed AIPP file: its text (for corrected copies) and its ``aipp_op`` blocks."""

    path: str
    text: str
    ops: List[AippOp] = field(default_factory=list)

    @property
    def shown(self) -> str:
        """The file as messages print it (``shown_path``)."""
        return shown_path(self.path)

    def for_input(self, rank: int) -> Optional[AippOp]:
        """The block applied to model input number ``rank`` (``related_input_rank``)."""
        for op in self.ops:
            if op.rank == rank:
                return op
        return None

    def corrected_text(self, changes: Mapping[int, Mapping[str, object]]) -> str:
        """The file's text with ``changes`` ({rank: {key: value}}) applied in place: a key in
        the file gets its value replaced on its own line, comments and layout kept; a missing
        key is added at the end of its block."""
        edits: List[Tuple[int, int, str]] = []
        for rank, fields in changes.items():
            op = self.for_input(rank)
            if op is None:
                raise ConfigError(self.shown, f"no aipp_op block with related_input_rank {rank}")
            added = []
            indent = _indent_of(self.text, op)
            for key, value in fields.items():
                if key not in KEY_KINDS:
                    raise ConfigError(self.shown, f"cannot set unknown key {key!r}")
                text = aipp_value_text(value)
                if key in op.spans:
                    s, e = op.spans[key]
                    edits.append((s, e, text))
                else:
                    added.append(f"{indent}{key}: {text}\n")
            if added:
                before = self.text[:op.close_offset]
                lead = "" if before.rstrip(" \t").endswith("\n") or not before.strip() else "\n"
                edits.append((op.close_offset, op.close_offset, lead + "".join(added)))
        out = self.text
        for s, e, text in sorted(edits, key=lambda t: t[0], reverse=True):
            out = out[:s] + text + out[e:]
        return out


def _indent_of(text: str, op: AippOp) -> str:
    """The indentation of the block's first key line when that line holds only keys."""
    if op.spans:
        first = min(s for s, _ in op.spans.values())
        line_start = text.rfind("\n", 0, first) + 1
        line = text[line_start:first]
        stripped = line.lstrip(" \t")
        if not any(ch in line for ch in "{}"):
            return line[:len(line) - len(stripped)] or "    "
    return "    "


def shown_path(path: str) -> str:
    """``path`` as the errors and reports print it: relative to the current directory, where
    pytest or the command runs, for a file under it (README: "the paths the plugin prints are
    relative to where pytest ran"; the plugin resolves ``aipp=`` to an absolute path, which its
    errors printed), else as given; ``<aipp>`` (text parsed with no file) as is."""
    if not path or path.startswith("<") or not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if rel.split(os.sep)[0] == os.pardir else rel.replace(os.sep, "/")


def read_aipp_config(path) -> AippConfig:
    """Parse the AIPP file at ``path``; a missing or unreadable file is a ConfigError."""
    path = os.fspath(path)
    try:
        with open(path, "r", encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        from ..core.closest_paths import closest_in_folder

        near = closest_in_folder(path, False, shown_path(path), None) if not os.path.exists(
            path) else ""
        raise ConfigError(shown_path(path), f"cannot read the AIPP file: {e.strerror or e}"
                                            f"{near}") from None
    except UnicodeDecodeError:
        raise ConfigError(shown_path(path), "the AIPP file is not UTF-8 text") from None
    return parse_aipp_config(text, path)


def parse_aipp_config(text: str, path: str = "<aipp>") -> AippConfig:
    """Parse AIPP file text (see the module docstring for what is an error); errors name the
    file as ``shown_path`` prints it."""
    try:
        return _parse(text, path)
    except ConfigError as exc:
        where = str(exc.where or "")
        rest = where[len(path):]
        if not path or not where.startswith(path) or rest[:1] not in ("", ":"):
            raise
        raise ConfigError(shown_path(path) + rest, exc.problem, cli_text=exc.cli_text) from None


def _parse(text: str, path: str) -> AippConfig:
    toks = tokens(text, path)
    cfg = AippConfig(path=path, text=text)
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind != "word" or t.text != "aipp_op":
            hint = closest_names(t.text, ["aipp_op"]) if t.kind == "word" else ""
            raise ConfigError(f"{path}:{t.line}", f"expected an 'aipp_op {{ ... }}' block, found "
                                                  f"{t.text!r}{hint}")
        i += 1
        if i < len(toks) and toks[i].text == ":":
            i += 1
        if i < len(toks) and toks[i].text == "[" and toks[i].kind == "punct":
            i = _block_list(toks, i + 1, path, t.line, cfg.ops)  # aipp_op: [{...}, {...}]
        else:
            if i >= len(toks) or toks[i].text not in _CLOSE or toks[i].kind != "punct":
                raise ConfigError(f"{path}:{t.line}", "aipp_op: expected '{' after aipp_op")
            op, i = _block(toks, i + 1, path, t.line, _CLOSE[toks[i].text])
            cfg.ops.append(op)
        i = _skip_separator(toks, i)
    if not cfg.ops:
        raise ConfigError(path, "no aipp_op block in the file")
    ranks: Dict[int, AippOp] = {}
    for op in cfg.ops:
        _validate(op)
        if op.rank in ranks:
            raise op.error("related_input_rank", f"input {op.rank} already has an aipp_op block "
                                                 f"(line {ranks[op.rank].start_line})")
        ranks[op.rank] = op
    return cfg


#: a message's opening brace -> its closing one (TextFormat takes ``{ }`` and ``< >``)
_CLOSE = {"{": "}", "<": ">"}


def _block_list(toks: List[Tok], i: int, path: str, line: int, ops: List["AippOp"]) -> int:
    """``aipp_op: [{...}, <...>]``: TextFormat's list of messages for a repeated field."""
    while i < len(toks) and toks[i].text != "]":
        if toks[i].text not in _CLOSE or toks[i].kind != "punct":
            raise ConfigError(f"{path}:{toks[i].line}", f"aipp_op: expected '{{' in the list, "
                                                        f"found {toks[i].text!r}")
        op, i = _block(toks, i + 1, path, toks[i].line, _CLOSE[toks[i].text])
        ops.append(op)
        if i < len(toks) and toks[i].text == ",":
            i += 1
        elif i < len(toks) and toks[i].text != "]":
            raise ConfigError(f"{path}:{toks[i].line}", "aipp_op: expected ',' or ']' in the list")
    if i >= len(toks):
        raise ConfigError(f"{path}:{line}", "aipp_op: the list is not closed with ']'")
    return i + 1


def _block(toks: List[Tok], i: int, path: str, start_line: int, close: str = "}"):
    values: Dict[str, object] = {}
    lines: Dict[str, int] = {}
    spans: Dict[str, Tuple[int, int]] = {}
    while True:
        if i >= len(toks):
            raise ConfigError(f"{path}:{start_line}",
                              f"aipp_op: block is not closed with '{close}'")
        t = toks[i]
        if t.text == close and t.kind == "punct":
            return AippOp(path, values, lines, spans, start_line, t.start), i + 1
        where = f"{path}:{t.line}"
        if t.kind != "word":
            raise ConfigError(where, f"expected a key, found {t.text!r}")
        key = t.text
        if key not in KEY_KINDS:
            raise ConfigError(where, f"{key}: unknown AIPP key{closest_names(key, KEY_KINDS)}")
        if i + 1 < len(toks) and toks[i + 1].text in _CLOSE:
            raise ConfigError(where, f"{key}: expected 'key: value', found a nested block")
        if i + 2 >= len(toks) or toks[i + 1].text != ":":
            raise ConfigError(where, f"{key}: expected ':' and a value after the key")
        given, i = _values(key, toks, i + 2, where)
        for v in given:
            if key == "input_edge_idx" and key in values:
                continue  # several edges are allowed; the key is refused as not emulated
            if key in values and (key in REPEATED_KEYS or not _proto_default(values[key])):
                first = f"first on line {lines[key]}"
                raise ConfigError(f"{path}:{v.line}", (
                    f"{key}: given twice in one aipp_op block ({first}; GE refuses it: \"The "
                    f"parameter {key} can not be configed repeatedly\")" if key in REPEATED_KEYS
                    else f"{key}: given twice in one aipp_op block ({first}; protobuf text "
                         f"format refuses a second value of a non-repeated field)"))
            values[key] = _convert(key, v, path, min_chn_in_block(key, values, toks[i:], close))
            lines[key] = v.line
            spans[key] = v.span
        i = _skip_separator(toks, i)


def _proto_default(value) -> bool:
    """A proto3 scalar at its default (0, false, +0.0) is 'not set' to TextFormat: a second
    value of that key replaces it (the parser refuses a second value only of a field it has
    set: C++ ``HasField``)."""
    if isinstance(value, float):
        return value == 0.0 and math.copysign(1.0, value) > 0
    return value is False or value == 0


def _values(key: str, toks: List[Tok], i: int, where: str):
    """The value tokens after ``key:`` (a repeated field may list them: ``key: [v, ...]``) and
    where the field ends."""
    v = toks[i]
    if v.kind == "punct" and v.text == "[" and key in REPEATED_KEYS:
        given, i = [], i + 1
        while i < len(toks) and toks[i].text != "]":
            if toks[i].kind == "punct":
                raise ConfigError(where, f"{key}: expected a value in the list, "
                                         f"found {toks[i].text!r}")
            given.append(toks[i])
            i += 1
            if i < len(toks) and toks[i].text == ",":
                i += 1
                if i < len(toks) and toks[i].text == "]":
                    raise ConfigError(where, f"{key}: a value is missing after the last ','")
            elif i < len(toks) and toks[i].text != "]":
                raise ConfigError(where, f"{key}: expected ',' or ']' in the list")
        if i >= len(toks):
            raise ConfigError(where, f"{key}: the list is not closed with ']'")
        return given, i + 1
    if v.kind == "punct":
        if v.text == "[":
            one = (f": {key}: {toks[i + 1].text}" if i + 2 < len(toks)
                   and toks[i + 1].kind == "word" and toks[i + 2].text == "]" else "")
            raise ConfigError(where, f"{key}: not a repeated field, so protobuf text format "
                                     f"refuses a [list]: give one value without brackets{one}")
        raise ConfigError(where, f"{key}: missing value")
    return [v], i + 1


def _skip_separator(toks: List[Tok], i: int) -> int:
    """Protobuf text format lets a field end with ``;`` or ``,`` (TextFormat's parser consumes
    either after a field), so ``aipp_mode: static;`` is a valid line for ATC."""
    if i < len(toks) and toks[i].kind == "punct" and toks[i].text in (";", ","):
        return i + 1
    return i


def _convert(key: str, tok: Tok, path: str, min_now: Optional[float] = None):
    """A value token as TextFormat reads it into the key's field (:mod:`.textformat`);
    ``min_now``: a ``mean_chn_N``'s block's ``min_chn_N``, which its fraction's advice adds to."""
    kind = KEY_KINDS[key]
    s = tok.text
    where = f"{path}:{tok.line}"
    choices = ENUMS[kind[5:]] if kind.startswith("enum:") else ()
    if kind == "str":
        if tok.kind != "str":
            raise ConfigError(where, f"{key}: a string is quoted in protobuf text format: "
                                     f"{key}: \"{s}\"")
        return s
    if tok.kind == "str":
        raise ConfigError(where, unquoted_hint(key, tok, kind, choices))
    if kind == "bool":  # exactly what protobuf's TextFormat parser takes for a bool
        if s in BOOL_WORDS:
            return BOOL_WORDS[s]
        raise ConfigError(where, f"{key}: expected true or false (protobuf text format takes "
                                 f"true, True, t, 1 or false, False, f, 0), found {s!r}")
    if kind == "int":
        try:
            value = parse_int(s, "uint32" if key in UINT32_KEYS else "int32")
        except ValueError as exc:
            raise ConfigError(where, f"{key}: {exc}") from None
        if value is None:
            raise ConfigError(where, f"{key}: expected an integer, found {s!r}"
                                     f"{split_mean_hint(key, s, min_now)}")
        return value
    if kind == "float":
        value = parse_float(s)
        if value is None:
            raise ConfigError(where, f"{key}: expected a number, found {s!r}")
        if value != value or abs(value) == float("inf"):
            raise ConfigError(where, f"{key}: expected a finite number, found {s!r}")
        return value
    if s in choices:
        return s
    number = parse_int(s, "int32") if re.fullmatch(r"-?(0|[1-9]\d*|0[xX][0-9a-fA-F]+)", s) else None
    if number is not None and 1 <= number <= len(choices):
        return choices[number - 1]  # TextFormat takes an enum's number too (proto order)
    numbered = ", ".join(f"{name} ({n})" for n, name in enumerate(choices, 1))
    unset = (f" ({s} is insert_op.proto's 'not set' value 0, which GE refuses for {key})"
             if number == 0 or s.lower() == "undefined" else "")
    same = [c for c in choices if c.lower() == s.lower()]  # enum names are case-sensitive
    hint = f" (did you mean {same[0]}?)" if same else closest_names(s, choices)
    raise ConfigError(where, f"{key}: {s!r} is not one of {numbered}{unset or hint}")


def _validate(op: AippOp) -> None:
    if "aipp_mode" not in op.values:
        raise op.error("aipp_mode", "missing: every aipp_op block sets aipp_mode (static)")
    if op.values["aipp_mode"] == "dynamic":
        raise op.error("aipp_mode", "dynamic AIPP is not supported: its parameters come at run "
                                    "time (aclmdlSetInputAIPP), so neither the emulator nor "
                                    "check_preprocessing can apply them; use aipp_mode: static")
    if "related_input_name" in op.values:  # it would win over related_input_rank on the device
        raise op.error("related_input_name", "applies to Caffe models only (ATC guide, AIPP "
                                             "configuration: it takes precedence over "
                                             "related_input_rank there); for an ONNX model name "
                                             "the input by position: related_input_rank: N")
    if "input_edge_idx" in op.values:  # AIPP for some consumers of the input only
        raise op.error("input_edge_idx", "not emulated: on the device AIPP then feeds only the "
                                         "input's consumers listed, and the emulator applies it "
                                         "to the whole input; leave it out to convert as checked")
    if "input_format" not in op.values:
        raise op.error("input_format", "missing: static AIPP requires input_format")
    fmt = op.values["input_format"]
    if fmt not in SUPPORTED_FORMATS:
        raise op.error("input_format", f"{fmt} is not supported by the emulator; supported: "
                                       f"{', '.join(SUPPORTED_FORMATS)}")
    for key in ("resize", "single_line_mode", "support_rotation"):
        if op.get(key):
            raise op.error(key, "not supported (reserved in CANN's static AIPP or not emulated); "
                                "set it to false")
    if op.get("csc_switch"):
        _validate_csc_output(op)
    for key, kind in KEY_KINDS.items():
        value = op.values.get(key)
        if value is None:
            continue
        if kind == "int" and key.endswith(("_size_w", "_size_h", "_pos_w", "_pos_h", "_padding_size",
                                           "related_input_rank")) and value < 0:
            raise op.error(key, f"must be >= 0, found {value}")
        # (min_chn: its operator range 0..255 says more, ``check_operator_ranges``)
        if key.startswith(("var_reci_chn", "padding_value")) and abs(value) > _FP16_MAX:
            raise op.error(key, f"{value:g} is outside float16's range (the device stores it as "
                                f"float16, max {_FP16_MAX:g})")
        low, high = REGISTER_RANGES.get(key, (value, value))
        if not low <= value <= high:
            kept = value & 0xff if high == 255 else ((value & 0xffff) ^ 0x8000) - 0x8000
            raise op.error(key, f"{value} does not fit the device's register ({low}..{high}): "
                                f"the device would use {kept}, not {value}")
    if op.get("crop"):
        _validate_crop(op)
    check_operator_ranges(op)


def _validate_csc_output(op: AippOp) -> None:
    """CSC that the emulator cannot apply as the device does: on one-channel YUV400_U8 input,
    or to a gray (one-channel) output, a matrix whose rows 1 and 2 are all zero (the ATC
    guide's RGB/YUV -> gray tables: 76/150/30 or 256/0/0 in row 0). Which channel the device
    writes into a C = 1 model input is not documented, so gray output is refused, as resize
    and rotation are, rather than checked against a guess."""
    if op.input_format == "YUV400_U8":
        raise op.error("csc_switch", "YUV400_U8 has one channel (Y); colour-space conversion "
                                     "needs three: set csc_switch: false")
    rows = [[op.get(f"matrix_r{r}c{c}") for c in range(3)] for r in (1, 2)]
    if not any(v for row in rows for v in row):
        explicit = [k for k in (f"matrix_r{r}c{c}" for r in (1, 2) for c in range(3))
                    if k in op.values]
        raise op.error(explicit[0] if explicit else "csc_switch",
                       "matrix rows 1 and 2 are all zero: a conversion to gray (one channel, a "
                       "model input with C = 1), which is not supported (not emulated; the "
                       "device's one-channel AIPP output is not documented clearly): feed "
                       "YUV400_U8 gray images, or give the model a three-channel input")


def _validate_crop(op: AippOp) -> None:
    # the ATC guide (crop_padding_config.md, "Crop/Padding配置说明"): for YUV420SP_U8
    # load_start_pos_w/h must be even; the crop size may be odd
    for key in ("load_start_pos_w", "load_start_pos_h"):
        if op.input_format == "YUV420SP_U8" and op.get(key) % 2:
            raise op.error(key, f"{op.get(key)} is odd; YUV420SP_U8 crops start at even "
                                f"offsets (load_start_pos_w and load_start_pos_h)")
    for axis in ("w", "h"):
        src, pos, size = (op.get(f"src_image_size_{axis}"), op.get(f"load_start_pos_{axis}"),
                          op.get(f"crop_size_{axis}"))
        if src and size and pos + size > src:
            raise op.error(f"crop_size_{axis}", f"load_start_pos_{axis} {pos} + crop_size_{axis} "
                                                f"{size} exceeds src_image_size_{axis} {src}")
