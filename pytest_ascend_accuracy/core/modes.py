"""Conversion modes: immutable values that say how a model is converted.

A ``Mode`` mirrors the ATC options that matter for accuracy (docs/formats.md §5) and renders them as
ATC arguments plus the config files they point to. Presets: ``default`` (ATC default,
``force_fp16``), ``high_precision`` (``allow_fp32_to_fp16``), ``buffer_off``, ``fusion_off``;
``keep_dtype(ops)`` keeps named ops (or ``OpType::X`` entries) in their original dtype. Modes
combine with ``|``: ``FUSION_OFF | keep_dtype(["Mul_3"])``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import ConfigError, closest_text
from . import fusion_passes
from .ascend_optypes import OPTYPE_PREFIX, parser_type, to_ascend_entry
from .keyword_names import closest_keywords
from .mode_extra import option_pairs, yaml_extra_pairs
from .unquoted_names import list_note
from .yaml_text import yaml_quoted, yaml_value

#: ``--precision_mode`` values documented for ATC (docs/formats.md §5).
PRECISION_MODES = (
    "force_fp16",
    "allow_fp32_to_fp16",
    "must_keep_origin_dtype",
    "force_fp32",
    "cube_fp16in_fp32out",
    "allow_mix_precision",
    "allow_mix_precision_fp16",
    "allow_mix_precision_bf16",
    "allow_fp32_to_bf16",
)
#: precision modes under which ATC keeps fp32 for vector ops (high precision family).
HIGH_PRECISION_MODES = frozenset(
    {"allow_fp32_to_fp16", "must_keep_origin_dtype", "force_fp32", "cube_fp16in_fp32out"}
)
#: modes in which ATC ignores ``--keep_dtype`` (docs/formats.md §5).
KEEP_DTYPE_IGNORED = frozenset({"must_keep_origin_dtype"})
BUFFER_OPTIMIZE = ("l2_optimize", "l1_optimize", "off_optimize")
DEFAULT_PRECISION = "force_fp16"
DEFAULT_BUFFER = "l2_optimize"

KEEP_DTYPE_FILE = "keep_dtype.cfg"
FUSION_SWITCH_FILE = "fusion_switch.cfg"


@dataclass(frozen=True)
class Mode:
    """One way of converting a model. Immutable and hashable; ``key()`` is stable across runs."""

    precision_mode: str = DEFAULT_PRECISION
    keep_dtype: Tuple[str, ...] = ()
    buffer_optimize: str = DEFAULT_BUFFER
    fusion: bool = True
    #: individual fusion rules switched off while fusion stays on (GraphFusion/UBFusion names).
    fusion_rules_off: Tuple[str, ...] = ()
    #: extra ATC options as (option, value) pairs, e.g. (("log", "info"),); core.atc_option_check
    extra: Tuple[Tuple[str, str], ...] = ()
    label: Optional[str] = field(default=None, compare=False)

    def __post_init__(self):
        if self.precision_mode not in PRECISION_MODES:
            raise ConfigError("mode", f"unknown precision_mode {self.precision_mode!r}"
                              f"{closest_text(self.precision_mode, PRECISION_MODES)}; "
                              f"known: {', '.join(PRECISION_MODES)}")
        if self.buffer_optimize not in BUFFER_OPTIMIZE:
            raise ConfigError("mode", f"unknown buffer_optimize {self.buffer_optimize!r}"
                              f"{closest_text(self.buffer_optimize, BUFFER_OPTIMIZE)}; "
                              f"known: {', '.join(BUFFER_OPTIMIZE)}")
        # OpType:: entries in ATC's spelling (ONNX types mapped to Ascend IR types, see
        # core.ascend_optypes): the keep_dtype file holds what ATC matches
        object.__setattr__(self, "keep_dtype", _clean_names(
            [to_ascend_entry(e) if isinstance(e, str) else e
             for e in ([self.keep_dtype] if isinstance(self.keep_dtype, str) else self.keep_dtype)],
            "keep_dtype"))
        object.__setattr__(self, "fusion_rules_off",
                           _clean_names(self.fusion_rules_off, "fusion_rules_off"))
        for rule in self.fusion_rules_off:
            _check_rule_section(rule)
        object.__setattr__(self, "extra", tuple(sorted(option_pairs(self.extra))))
        # the command line would carry the mode's own value too (two precision options ATC
        # refuses together), or drop this one: either way not what the mode says
        given = [(key, value) for key, value in self.extra if key in MODE_FIELD_OPTIONS]
        if given:
            names = ", ".join(repr(key) for key, _ in given)
            raise ConfigError("mode", f"extra ATC option{'s' * (len(given) > 1)} {names} "
                                      f"{'are' if len(given) > 1 else 'is'} what the mode itself "
                                      f"sets: {own_field_advice(self, given)}")

    # -- identity -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """Readable id, used for test ids (``default``, ``high_precision``, ``fusion_off+keep_dtype``)."""
        if self.label:
            return self.label
        parts = []
        if self.precision_mode == "allow_fp32_to_fp16":
            parts.append("high_precision")
        elif self.precision_mode != DEFAULT_PRECISION:
            parts.append(self.precision_mode)
        if self.buffer_optimize == "off_optimize":
            parts.append("buffer_off")
        elif self.buffer_optimize != DEFAULT_BUFFER:
            parts.append(self.buffer_optimize)
        if not self.fusion:
            parts.append("fusion_off")
        if self.fusion_rules_off:
            parts.append("rules_off(" + ",".join(self.fusion_rules_off) + ")")
        if self.keep_dtype:
            parts.append("keep_dtype(" + ",".join(self.keep_dtype) + ")")
        if self.extra:
            parts.append("+".join(f"{k}={v}" for k, v in self.extra))
        return "+".join(parts) or "default"

    def key(self) -> Dict[str, object]:
        """Canonical, JSON-serialisable description used in cache keys (label excluded)."""
        return {
            "precision_mode": self.precision_mode,
            "keep_dtype": list(self.keep_dtype),
            "buffer_optimize": self.buffer_optimize,
            "fusion": self.fusion,
            "fusion_rules_off": list(self.fusion_rules_off),
            "extra": [list(p) for p in self.extra],
        }

    @property
    def is_high_precision(self) -> bool:
        return self.precision_mode in HIGH_PRECISION_MODES

    def __str__(self) -> str:
        return self.name

    # -- combination ------------------------------------------------------------------------
    def __or__(self, other: "Mode") -> "Mode":
        """Combine two modes: non-default settings of either win; keep_dtype lists are merged."""
        if not isinstance(other, Mode):
            return NotImplemented
        prec = other.precision_mode if other.precision_mode != DEFAULT_PRECISION else self.precision_mode
        buf = other.buffer_optimize if other.buffer_optimize != DEFAULT_BUFFER else self.buffer_optimize
        return Mode(
            precision_mode=prec,
            keep_dtype=self.keep_dtype + other.keep_dtype,
            buffer_optimize=buf,
            fusion=self.fusion and other.fusion,
            fusion_rules_off=self.fusion_rules_off + other.fusion_rules_off,
            extra=tuple(dict(self.extra + other.extra).items()),
        )

    def with_keep_dtype(self, ops: Iterable[str]) -> "Mode":
        return replace(self, keep_dtype=tuple(ops), label=None)

    def keeps_fp32(self, op_name: str, op_type: str) -> bool:
        """Whether ATC would keep this op (ONNX type ``op_type``) in its original dtype under
        this mode's keep_dtype: by name, or by the type its parser gives it."""
        if self.precision_mode in KEEP_DTYPE_IGNORED:
            return True
        return (op_name in self.keep_dtype
                or f"{OPTYPE_PREFIX}{parser_type(op_type)}" in self.keep_dtype)

    # -- rendering for people (hints) -------------------------------------------------------
    def python_expr(self) -> str:
        """This mode as code to paste into ``modes=[...]`` (names from ``pytest_ascend_accuracy``):
        ``FUSION_OFF | keep_dtype(['p2o.BatchNormalization.1'])``."""
        parts = []
        base = replace(self, keep_dtype=(), label=None)
        for preset, const in ((HIGH_PRECISION, "HIGH_PRECISION"), (BUFFER_OFF, "BUFFER_OFF"),
                              (FUSION_OFF, "FUSION_OFF")):
            if getattr(base, _PRESET_FIELD[const]) == getattr(preset, _PRESET_FIELD[const]):
                parts.append(const)
        rebuilt = DEFAULT
        for const in parts:
            rebuilt = rebuilt | _CONSTS[const]
        if replace(rebuilt, label=None) != base:  # settings no preset spells: the full Mode
            fields = [f"{k}={v!r}" for k, v in (
                ("precision_mode", self.precision_mode), ("buffer_optimize", self.buffer_optimize),
                ("fusion", self.fusion), ("fusion_rules_off", list(self.fusion_rules_off)),
                ("extra", [tuple(p) for p in self.extra])) if v != getattr(DEFAULT, k)
                and not (k in ("fusion_rules_off", "extra") and not v)]
            parts = [f"Mode({', '.join(fields)})"]
        if self.keep_dtype:
            parts.append(f"keep_dtype({list(self.keep_dtype)!r})")
        return " | ".join(parts) or "DEFAULT"

    def python_imports(self) -> List[str]:
        """The names ``python_expr`` uses, to import from ``pytest_ascend_accuracy``."""
        import re

        used = set(re.findall(r"\b[A-Za-z_]+\b(?=\(| \||$)", self.python_expr()))
        return [n for n in ("DEFAULT", "HIGH_PRECISION", "BUFFER_OFF", "FUSION_OFF", "Mode",
                            "keep_dtype") if n in used]

    def yaml_form(self) -> str:
        """This mode as one entry of a YAML suite's ``modes:`` list (flow style)."""
        base = replace(self, keep_dtype=(), label=None)
        base_name = _preset_combination(base)
        if base_name is not None and not self.keep_dtype:
            return base_name
        if base_name is None:
            items = [f"{k}: {_yaml_value(v)}" for k, v in (
                ("precision_mode", self.precision_mode), ("buffer_optimize", self.buffer_optimize),
                ("fusion", self.fusion), ("fusion_rules_off", list(self.fusion_rules_off)))
                if v != getattr(DEFAULT, k) and v != []]
            if self.extra:  # (its ATC options: the YAML form without them converted otherwise)
                items.append("extra: {" + ", ".join(f"{_yaml_value(k)}: {_yaml_value(v)}"
                                                    for k, v in self.extra) + "}")
        else:
            items = [] if base_name == "default" else [f"base: {base_name}"]
        if self.keep_dtype:
            items.append(f"keep_dtype: {_yaml_value(list(self.keep_dtype))}")
        return "{" + ", ".join(items) + "}"

    # -- rendering for ATC ------------------------------------------------------------------
    def config_files(self) -> Dict[str, str]:
        """Config files this mode needs, as {file name: text}. Empty for plain modes."""
        files: Dict[str, str] = {}
        if self.keep_dtype:
            files[KEEP_DTYPE_FILE] = "".join(op + "\n" for op in self.keep_dtype)
        if not self.fusion or self.fusion_rules_off:
            files[FUSION_SWITCH_FILE] = fusion_switch_json(self.fusion, self.fusion_rules_off)
        return files

    def atc_options(self, config_dir: Optional[str] = None) -> List[Tuple[str, str]]:
        """ATC options as (name, value) pairs, names without dashes, config files under config_dir."""
        import os

        def at(name):
            return os.path.join(config_dir, name) if config_dir else name

        opts: List[Tuple[str, str]] = [("precision_mode", self.precision_mode)]
        if self.keep_dtype:
            opts.append(("keep_dtype", at(KEEP_DTYPE_FILE)))
        if self.buffer_optimize != DEFAULT_BUFFER:
            opts.append(("buffer_optimize", self.buffer_optimize))
        if not self.fusion or self.fusion_rules_off:
            opts.append(("fusion_switch_file", at(FUSION_SWITCH_FILE)))
        opts.extend(self.extra)
        return opts


Mode.__init__ = closest_keywords(Mode.__init__, "Mode")  # Mode(fusion_rules_of=...): closest


def fusion_switch_json(fusion: bool, rules_off: Iterable[str] = ()) -> str:
    """The fusion switch file: ``ALL: off`` for both sections when fusion is off, otherwise
    individual rules switched off (docs/formats.md §5)."""
    graph: Dict[str, str] = {}
    ub: Dict[str, str] = {}
    if not fusion:
        graph["ALL"] = ub["ALL"] = "off"
    for rule in rules_off:  # "UBFusion:Name" / "GraphFusion:Name": its section (bare: Graph)
        section, _, rule_name = rule.rpartition(":")  # LayerNormFusionPass: with the ONNX pass
        for name in fusion_passes.switch_names(rule_name):  # (ATC fuses ONNX by that)
            (ub if section == "UBFusion" else graph)[name] = "off"
    switch = {}
    if graph:
        switch["GraphFusion"] = graph
    if ub:
        switch["UBFusion"] = ub
    return json.dumps({"Switch": switch}, indent=2, sort_keys=False) + "\n"


def _preset_combination(mode: Mode) -> Optional[str]:
    """``high_precision+fusion_off`` when ``mode`` is exactly that combination of presets."""
    names = [n for n, const in (("high_precision", "HIGH_PRECISION"), ("buffer_off", "BUFFER_OFF"),
                                ("fusion_off", "FUSION_OFF"))
             if getattr(mode, _PRESET_FIELD[const]) == getattr(_CONSTS[const], _PRESET_FIELD[const])]
    rebuilt = DEFAULT
    for n in names:
        rebuilt = rebuilt | PRESETS[n]
    if replace(rebuilt, label=None) != replace(mode, label=None):
        return None
    return "+".join(names) or "default"


def _yaml_value(v) -> str:
    """A YAML flow-style value; strings double-quoted (``core.yaml_text.yaml_quoted``: safe
    for dots and colons, and a name outside the BMP loads back as itself, where JSON's
    ``\\ud83d\\ude00`` loaded as two surrogates)."""
    if isinstance(v, str):
        return yaml_quoted(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_yaml_value(x) for x in v) + "]"
    return yaml_value(v)


#: ATC options a mode's own fields set: never among its ``extra`` options
MODE_FIELD_OPTIONS = ("precision_mode", "precision_mode_v2", "keep_dtype", "buffer_optimize",
                      "fusion_switch_file")
#: ``--precision_mode_v2`` value -> the ``--precision_mode`` value of the same effect
PRECISION_MODE_FROM_V2 = {"fp16": "force_fp16", "origin": "must_keep_origin_dtype",
                          "cube_fp16in_fp32out": "cube_fp16in_fp32out",
                          "mixed_float16": "allow_mix_precision",
                          "mixed_bfloat16": "allow_mix_precision_bf16"}


def own_field_advice(mode: Mode, given: Sequence[Tuple[str, str]], bases: Sequence = ()) -> str:
    """What to write instead of ATC options ``given`` that ``mode`` carried as extra options
    while its own fields set them: the mode meant, whole (its base, other fields and other extra
    options kept), as a YAML ``modes`` entry or ``--mode`` takes it and as Python, each pasted
    whole; or why no mode can be named (a value no mode takes, a file not readable here)."""
    from .mode_files import found, fusion_switch_rules, keep_dtype_lines

    fields: dict = {}
    problems: List[str] = []
    for name, value in given:
        if name in ("precision_mode", "buffer_optimize"):
            known = PRECISION_MODES if name == "precision_mode" else BUFFER_OPTIMIZE
            if value in known:
                fields[name] = value
            else:
                problems.append(f"{value!r} is no --{name} value here{closest_text(value, known)}"
                                f"; known: {', '.join(known)}")
        elif name == "precision_mode_v2":
            if value in PRECISION_MODE_FROM_V2:
                fields["precision_mode"] = PRECISION_MODE_FROM_V2[value]
            else:
                problems.append(f"--precision_mode_v2={value} is no mode here"
                                f"{closest_text(value, PRECISION_MODE_FROM_V2)}; a mode converts "
                                f"with {', '.join(PRECISION_MODE_FROM_V2)}")
        elif name == "keep_dtype":
            names = keep_dtype_lines(found(value, bases))
            if names is None:
                problems.append(f"its file {value!r} cannot be read from here: give the mode the "
                                f"ops it lists as its keep_dtype")
            else:
                fields["keep_dtype"] = mode.keep_dtype + tuple(names)
        else:  # fusion_switch_file
            switch = fusion_switch_rules(found(value, bases))
            if switch is None:
                problems.append(f"its file {value!r} cannot be read from here, or switches off "
                                f"what no mode spells: give the mode fusion: false or the rules "
                                f"as its fusion_rules_off")
            elif switch is False:
                fields["fusion"] = False
            else:
                fields["fusion_rules_off"] = mode.fusion_rules_off + tuple(switch)
    if problems:
        return "; ".join(problems)
    names = {name for name, _ in given}
    meant = replace(mode, label=None, extra=tuple(p for p in mode.extra if p[0] not in names),
                    **fields)
    return (f"write it as the mode's own key, not in extra; the mode meant, whole: "
            f"{meant.yaml_form()} in a YAML suite's modes or --mode, {meant.python_expr()} in "
            f"Python")


#: the sections of a fusion switch file (docs/formats.md §5): ``Section:Rule`` picks one
FUSION_SECTIONS = ("GraphFusion", "UBFusion")


def _check_rule_section(rule: str) -> None:
    """A ``Section:Rule`` entry of ``fusion_rules_off`` names a section of the fusion switch
    file (a misspelled one would switch off nothing)."""
    import difflib

    section, sep, name = rule.rpartition(":")
    if not sep:
        return
    if section not in FUSION_SECTIONS or not name.strip():
        near = difflib.get_close_matches(section, FUSION_SECTIONS, n=1, cutoff=0.0)
        fixed = f"{near[0]}:{name}" if near and name.strip() else f"{FUSION_SECTIONS[0]}:Rule"
        raise ConfigError("mode", f"fusion_rules_off entry {rule!r}: a fusion switch file's "
                                  f"sections are {' and '.join(FUSION_SECTIONS)} (case matters), "
                                  f"so this would switch off nothing; closest: {fixed!r}, or "
                                  f"the rule name alone")


def _clean_names(values, what) -> Tuple[str, ...]:
    if isinstance(values, str):
        values = [values]
    out = []
    for v in values:
        if not isinstance(v, str) or not v.strip() or "\n" in v:
            raise ConfigError("mode", f"{what} entries must be non-empty single-line strings, got {v!r}")
        if v not in out:
            out.append(v)
    return tuple(out)


DEFAULT = Mode(label="default")
HIGH_PRECISION = Mode(precision_mode="allow_fp32_to_fp16", label="high_precision")
BUFFER_OFF = Mode(buffer_optimize="off_optimize", label="buffer_off")
FUSION_OFF = Mode(fusion=False, label="fusion_off")
_CONSTS = {"HIGH_PRECISION": HIGH_PRECISION, "BUFFER_OFF": BUFFER_OFF, "FUSION_OFF": FUSION_OFF}
_PRESET_FIELD = {"HIGH_PRECISION": "precision_mode", "BUFFER_OFF": "buffer_optimize",
                 "FUSION_OFF": "fusion"}
PRESETS: Mapping[str, Mode] = {
    "default": DEFAULT,
    "high_precision": HIGH_PRECISION,
    "buffer_off": BUFFER_OFF,
    "fusion_off": FUSION_OFF,
}


def keep_dtype(ops: Iterable[str], base: Mode = DEFAULT) -> Mode:
    """A mode that keeps these ops (names or ``OpType::X``) in their original dtype; one name
    may be given alone (``keep_dtype("square")`` kept the ops 's', 'q', 'u', ... before)."""
    return replace(base, keep_dtype=(ops,) if isinstance(ops, str) else tuple(ops), label=None)


def resolve_mode(mode: Union[None, str, Mode], where: Optional[str] = None) -> Mode:
    """Turn a preset name or Mode into a Mode; None means ``default``."""
    if mode is None:
        return DEFAULT
    if isinstance(mode, Mode):
        return mode
    if isinstance(mode, str):
        if mode in PRESETS:
            return PRESETS[mode]
        if "+" in mode and "(" not in mode and "=" not in mode:  # e.g. "buffer_off+fusion_off"
            result = DEFAULT
            for part in mode.split("+"):
                result = result | resolve_mode(part, where)
            return replace(result, label=mode)
        _refuse_printed_name(mode, where)
        parts = [part.strip() for part in mode.split("|")]
        if len(parts) > 1 and all(part in PRESETS for part in parts):
            # Python's spelling between Mode objects, written into a string
            raise ConfigError(where, f"unknown mode {mode!r}: in a string, presets combine with "
                                     f"+ ({'+'.join(parts)!r}); | combines Mode objects "
                                     f"({' | '.join(part.upper() for part in parts)})")
        import difflib

        near = difflib.get_close_matches(mode, list(PRESETS), n=2, cutoff=0.6)
        raise ConfigError(where, f"unknown mode {mode!r}"
                          + (f"; closest: {', '.join(near)}" if near else "")
                          + f"; known: {', '.join(PRESETS)}")
    raise ConfigError(where, f"a mode is a preset name or a Mode object, got {type(mode).__name__}")


def _refuse_printed_name(text: str, where: Optional[str]) -> None:
    """A mode's printed name (a test id, the summary grid: ``buffer_off+keep_dtype(norm)``) is
    no preset name: refused with the mapping and the Python expression that convert as it says
    (``core.printed_modes``). Returns when ``text`` is not such a name, or names no mode."""
    from .printed_modes import printed_spec

    spec = printed_spec(text)
    if spec is None:
        return
    try:
        mode = mode_from_spec(spec, where)
    except ConfigError:
        return
    raise ConfigError(where, f"unknown mode {text!r}: that is a mode's printed name (as test ids "
                             f"and the summary write it); write it in a YAML suite: "
                             f"{mode.yaml_form()}; in Python (a modes=[...] entry, ascend_model's "
                             f"mode=): {mode.python_expr()} (from pytest_ascend_accuracy import "
                             f"{', '.join(mode.python_imports())})")


#: keys of a mode written as a mapping (YAML suites, ``ascend-accuracy diagnose --mode``)
MODE_KEYS = ("base", "name", "precision_mode", "keep_dtype", "buffer_optimize", "fusion",
             "fusion_rules_off", "extra")


def mode_from_spec(value, where: Optional[str] = None) -> Mode:
    """A mode as YAML writes it: a preset name (``fusion_off``, ``buffer_off+fusion_off``) or a
    mapping ``{base: fusion_off, keep_dtype: [...], ...}`` (keys ``MODE_KEYS``)."""
    if isinstance(value, str) or isinstance(value, Mode) or value is None:
        return resolve_mode(value, where)
    if not isinstance(value, Mapping):
        raise ConfigError(where, f"a mode is a preset name or a mapping, got {value!r}")
    at = where or "mode"
    for key in value:
        if key not in MODE_KEYS:
            import difflib

            near = difflib.get_close_matches(str(key), MODE_KEYS, n=2, cutoff=0.6)
            raise ConfigError(f"{at}.{key}", "unknown mode key"
                              + (f"; closest: {', '.join(near)}" if near else "")
                              + f"; known: {', '.join(MODE_KEYS)}")
    try:
        base = resolve_mode(value.get("base", "default"), f"{at}.base")
        fields = {k: value[k] for k in MODE_KEYS[2:] if k in value}
        for k in ("keep_dtype", "fusion_rules_off"):
            if k in fields:
                items = fields[k]
                items = [items] if isinstance(items, str) else items
                if not isinstance(items, list) or not all(isinstance(v, str) and v for v in items):
                    raise ConfigError(f"{at}.{k}", f"must be a list of op names, got {fields[k]!r}"
                                      + list_note(k, items))
                fields[k] = tuple(items)
        if "fusion" in fields and not isinstance(fields["fusion"], bool):
            raise ConfigError(f"{at}.fusion", f"must be true or false, got {fields['fusion']!r}")
        if "extra" in fields:  # extra ATC options, {option: value}, as Mode(extra=...) takes
            fields["extra"] = yaml_extra_pairs(fields["extra"], f"{at}.extra")
        mode = replace(base, label=None, **fields)
        if "keep_dtype" in fields:
            mode = replace(mode, keep_dtype=base.keep_dtype + fields["keep_dtype"])
        if value.get("name") is not None:
            mode = replace(mode, label=str(value["name"]))
        return mode
    except ConfigError as exc:
        if exc.where and exc.where.startswith(at):
            raise
        raise ConfigError(at, exc.problem) from None
    except TypeError as exc:
        raise ConfigError(at, str(exc)) from None
