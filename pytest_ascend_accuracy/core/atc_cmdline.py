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
import re
import shlex
from typing import List, Optional, Sequence, Tuple

from .mode_files import found, fusion_switch_rules, keep_dtype_lines
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


#: ATC options that build an .om for another host (CANN: the file is then named
#: ``<output>_<os>_<cpu>.om``, ``--host_env_os``/``--host_env_cpu`` pages): a check converts
#: and runs the model on one machine, so they are refused with ``HOST_ENV_REFUSAL``
HOST_ENV_OPTIONS = ("host_env_os", "host_env_cpu")
HOST_ENV_REFUSAL = ("ATC option {name}=... builds the .om for another host (ATC then names the "
                    "file <output>_<os>_<cpu>.om, e.g. model_linux_aarch64.om); a check converts "
                    "and runs the model on this machine, so leave it out")


def atc_options(cmdline: str) -> List[Tuple[str, str]]:
    """``(name, value)`` of every ``--name=value`` / ``--name value`` option of ``cmdline``.

    An om json's ``atc_cmdline`` is ATC's argv joined by spaces, unquoted (the emulator and the
    fake atc record theirs so too): a value holding a space (an AIPP file under ``My
    Projects/``) runs up to the next ``--`` word, its spacing kept; the AIPP hint named
    ``--aipp My`` of ``--insert_op_conf=/w/My Projects/aipp.cfg`` (a trial in such a folder).
    A command line with shell quotes is split as the shell would."""
    text = (cmdline or "").strip()
    if any(q in text for q in "'\"\\"):
        try:
            words = shlex.split(text)
        except ValueError:
            words = text.split()
    else:  # unquoted: each option's text is what lies between one " --" and the next
        words = re.split(r"\s+(?=--)", text)
    out: List[Tuple[str, str]] = []
    for word in words:
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            if not eq or re.search(r"\s", name):  # --name value (one word where unquoted)
                name, _, value = word[2:].partition(" ")
            out.append((name, value.strip()))
        elif out:  # a quoted command line's value that came apart, or --name's own value
            name, value = out[-1]
            out[-1] = (name, f"{value} {word}" if value else word)
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
            names = keep_dtype_lines(found(value, bases))
            if names is None:
                left.append(f"--{name}={value}")
            elif names:
                fields["keep_dtype"] = tuple(names)
        elif name == "fusion_switch_file":
            switch = fusion_switch_rules(found(value, bases))
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
