"""The conversion mode an ATC command line asks for (an om json's ``atc_cmdline`` attr), in
this package's ``Mode`` terms, and what of it a ``Mode`` cannot carry.

``ascend-accuracy compare`` prints a ``diagnose`` command to paste: it must start from the mode
the dump was converted with, else it diagnoses the default conversion and may say PASSES of a
model whose fusion-off conversion fails (a diagnose trial). The precision mode
(``--precision_mode`` or ``--precision_mode_v2``, ``PRECISION_MODE_V2``) and
``--buffer_optimize`` map onto a ``Mode``; a ``--fusion_switch_file`` or ``--keep_dtype`` file is
read where its path is at hand (absolute, or relative to the working directory or to one of
the ``bases`` given, e.g. the om json's folder), else it is named as not carried.
"""
from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from .modes import BUFFER_OPTIMIZE, PRECISION_MODE_FROM_V2, PRECISION_MODES, Mode

#: ``--precision_mode`` value -> ``--precision_mode_v2`` value (HD atlasatcparam_16_0068/0069).
PRECISION_MODE_V2 = {
    "force_fp16": "fp16",
    "must_keep_origin_dtype": "origin",
    "force_fp32": "cube_fp16in_fp32out",
    "cube_fp16in_fp32out": "cube_fp16in_fp32out",
    "allow_mix_precision": "mixed_float16",
    "allow_mix_precision_fp16": "mixed_float16",
    "allow_mix_precision_bf16": "mixed_bfloat16",
}
#: options of an ATC command line that are not the conversion mode: the model, its inputs
#: (``input_shape`` is carried as diagnose's own --input-shape, ``input_shape_of``), where the
#: results go, and options that change no value (the plugin's ``NEUTRAL_OPTIONS``, compile
#: caches and debug output); every other option is the mode's, or named as not carried
NOT_MODE_OPTIONS = frozenset({
    "model", "weight", "framework", "output", "soc_version", "input_shape", "input_format",
    "dynamic_batch_size", "dynamic_image_size", "dynamic_dims", "out_nodes", "log", "json",
    "om", "mode", "host_env_os", "host_env_cpu", "core_type", "aicore_num",
    "display_model_info", "op_compiler_cache_mode", "op_compiler_cache_dir", "debug_dir",
    "status_check", "op_debug_level", "dump_mode"})


def atc_options(cmdline: str) -> List[Tuple[str, str]]:
    """``(name, value)`` of every ``--name=value`` / ``--name value`` option of ``cmdline``."""
    try:
        words = shlex.split(cmdline or "")
    except ValueError:
        words = (cmdline or "").split()
    out: List[Tuple[str, str]] = []
    k = 0
    while k < len(words):
        word = words[k]
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            if not eq and k + 1 < len(words) and not words[k + 1].startswith("--"):
                value, k = words[k + 1], k + 1
            out.append((name, value))
        k += 1
    return out


def mode_of_cmdline(cmdline: str, bases: Sequence = ()) -> Tuple[Optional[Mode], List[str]]:
    """(the ``Mode`` the command line converts with, or None when it asks for the default; the
    mode options it gives that no ``Mode`` here carries, as ``--name=value``). Relative file
    paths are looked for in the working directory, then in ``bases``."""
    fields: dict = {}
    left: List[str] = []
    for name, value in atc_options(cmdline):
        if name == "precision_mode" and value in PRECISION_MODES:
            fields["precision_mode"] = value
        elif name == "precision_mode_v2" and value in PRECISION_MODE_FROM_V2:
            fields["precision_mode"] = PRECISION_MODE_FROM_V2[value]
        elif name == "buffer_optimize" and value in BUFFER_OPTIMIZE:
            fields["buffer_optimize"] = value
        elif name == "keep_dtype":
            names = _lines(_found(value, bases))
            if names is None:
                left.append(f"--{name}={value}")
            elif names:
                fields["keep_dtype"] = tuple(names)
        elif name == "fusion_switch_file":
            switch = _fusion_switch(_found(value, bases))
            if switch is None:
                left.append(f"--{name}={value}")
            elif switch is False:
                fields["fusion"] = False
            elif switch:  # single rules: named, not carried (a backend may not know a rule:
                # the emulator imitates a few, and a pasted command naming another failed)
                rules = ", ".join(json.dumps(r) for r in switch)
                left.append(f"--{name}={value} (rules off: {', '.join(switch)}; where the "
                            f"backend knows them: --mode '{{fusion_rules_off: [{rules}]}}')")
        elif name not in NOT_MODE_OPTIONS:  # precision values unknown here, other options
            left.append(f"--{name}={value}")
    mode = Mode(**fields) if fields else None
    return (None if mode == Mode() else mode), left


def input_shape_of(cmdline: str) -> Optional[str]:
    """The ``--input_shape`` value of an ATC command line (ATC syntax, as ``diagnose
    --input-shape`` takes it), or None: without it a pasted command refused a dynamic model."""
    for name, value in atc_options(cmdline):
        if name == "input_shape" and value:
            return value
    return None


def _found(path: str, bases: Sequence) -> str:
    """``path`` as given when it exists from here, else under the first of ``bases`` that
    holds it (as given when none does)."""
    if Path(path).is_absolute() or Path(path).exists():
        return path
    for base in bases:
        if base and (Path(base) / path).exists():
            return str(Path(base) / path)
    return path


def _text(path: str) -> Optional[str]:
    """A file's text, or None when it cannot be read from here."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _lines(path: str) -> Optional[List[str]]:
    """A keep_dtype file's entries, or None when it cannot be read from here."""
    text = _text(path)
    return None if text is None else [ln.strip() for ln in text.splitlines() if ln.strip()]


def _fusion_switch(path: str):
    """What a fusion switch file turns off: False for every graph and UB fusion, else the
    rules it switches off as ``fusion_rules_off`` entries (``UBFusion:Name``; ``()``: none);
    None when it cannot be read from here or says something else (not carried)."""
    text = _text(path)
    try:
        doc = json.loads(text) if text is not None else None
    except ValueError:
        return None
    switch = doc.get("Switch", doc) if isinstance(doc, dict) else None
    if not isinstance(switch, dict):
        return None
    sections = [switch.get("GraphFusion") or {}, switch.get("UBFusion") or {}]
    if not all(isinstance(s, dict) for s in sections):
        return None
    alls = [str(s.get("ALL", "")).lower() for s in sections]
    values = [str(v).lower() for s in sections for k, v in s.items() if k != "ALL"]
    if alls == ["off", "off"]:  # a rule switched back on beside ALL off is not fusion_off
        return False if "on" not in values else None
    known = all(str(v).lower() in ("on", "off") for s in sections for v in s.values())
    if any(a == "off" for a in alls) or not known:
        return None  # one section all off, or values this reader does not know
    graph, ub = sections
    return tuple([k for k, v in graph.items() if k != "ALL" and str(v).lower() == "off"]
                 + [f"UBFusion:{k}" for k, v in ub.items()
                    if k != "ALL" and str(v).lower() == "off"])


def own_field_advice(mode: Mode, given: Sequence[Tuple[str, str]], bases: Sequence = ()) -> str:
    """What to write instead of ATC options ``given`` that ``mode`` carried as extra options
    while its own fields set them: the mode meant, whole (its base, other fields and other extra
    options kept), as a YAML ``modes`` entry or ``--mode`` takes it and as Python, each pasted
    whole; or why no mode can be named (a value no mode takes, a file not readable here)."""
    from dataclasses import replace

    from ..errors import closest_text

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
            names = _lines(_found(value, bases))
            if names is None:
                problems.append(f"its file {value!r} cannot be read from here: give the mode the "
                                f"ops it lists as its keep_dtype")
            else:
                fields["keep_dtype"] = mode.keep_dtype + tuple(names)
        else:  # fusion_switch_file
            switch = _fusion_switch(_found(value, bases))
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
