"""The next step of a failed ``ascend-accuracy dataset`` run, as commands to paste in a shell.

The traced sample's hint (``report.hints.Hint``) is the plugin's: its modes were printed as
``modes=[keep_dtype([...])]`` with a Python import, which a shell user cannot paste (audit 32,
F5). Here each mode is the same ``ascend-accuracy dataset`` command again with its ``--mode``
(the options given, those left at their defaults left out; ``--json`` too, so the rerun does
not write over the figures of this one), and ``--accuracy-diagnose`` (a pytest option) is the
``ascend-accuracy diagnose`` command on the traced sample's own ``.npz`` file.
"""
from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import List, Optional

#: (option, Namespace attribute) the dataset command carries into a rerun, when not at its
#: default; ``--mode`` is the advised one
RERUN_OPTIONS = (("--metric", "metric"), ("--labels", "labels"), ("--max-drop", "max_drop"),
                 ("--higher-is-better", "higher_is_better"), ("--output", "output"),
                 ("--postprocess", "postprocess"), ("--threshold", "threshold"),
                 ("--scale-tolerance", "scale_tolerance"), ("--input-shape", "input_shape"),
                 ("--batch-axis", "batch_axis"), ("--cache-dir", "cache_dir"),
                 ("--backend", "backend"), ("--device", "device"),
                 ("--soc-version", "soc_version"))
#: the options ``diagnose`` takes as ``dataset`` does, carried into its command
DIAGNOSE_OPTIONS = ("--threshold", "--scale-tolerance", "--input-shape", "--cache-dir",
                    "--backend", "--device", "--soc-version")
DIAGNOSE_FLAG = "--accuracy-diagnose"


def _given(args: argparse.Namespace, defaults: dict, keep=None) -> List[str]:
    out = []
    for option, dest in RERUN_OPTIONS:
        if keep is not None and option not in keep:
            continue
        value = getattr(args, dest, None)
        if value is None or value == defaults.get(dest):
            continue
        out += [option, _text(value)]
    return out


def _text(value) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def rerun_command(args: argparse.Namespace, defaults: dict, mode: str) -> str:
    """``ascend-accuracy dataset MODEL SAMPLES [the options given] --mode MODE``."""
    words = ["ascend-accuracy", "dataset", args.model, args.samples]
    words += _given(args, defaults) + ["--mode", mode]
    return shlex.join(words)


def output_command(args: argparse.Namespace, defaults: dict, output: str) -> str:
    """``ascend-accuracy dataset MODEL SAMPLES [the options given] --output OUTPUT``: a
    callable metric's run again with its flips tracked on ``output``."""
    words = ["ascend-accuracy", "dataset", args.model, args.samples] + _given(args, defaults)
    if args.mode != defaults.get("mode"):
        words += ["--mode", args.mode]
    return shlex.join(words + ["--output", output])


def diagnose_command(args: argparse.Namespace, defaults: dict, sample: str) -> str:
    """``ascend-accuracy diagnose MODEL --inputs SAMPLES/ID.npz`` in the run's mode and with
    its threshold, scale guard, shapes, cache and backend."""
    words = ["ascend-accuracy", "diagnose", args.model, "--inputs",
             str(Path(args.samples) / f"{sample}.npz")]
    if args.mode != defaults.get("mode"):
        words += ["--mode", args.mode]
    words += _given(args, defaults, DIAGNOSE_OPTIONS)
    return shlex.join(words)


def _shell_words(text: str) -> str:
    """The plugin's spellings in prose as this command's: ``modes=[HIGH_PRECISION |
    BUFFER_OFF]`` (presets) as ``--mode high_precision+buffer_off``, ``--ascend-device=N`` as
    ``--backend ascend --device N``."""
    import re

    def mode(match) -> str:
        names = [n.strip().lower() for n in match.group(1).split("|")]
        return "--mode " + shlex.quote("+".join(names))

    text = re.sub(r"modes=\[([A-Z_]+(?: \| [A-Z_]+)*)\]", mode, text)
    return text.replace("--ascend-device=N", "--backend ascend --device N")


def cli_next_step(hint, args: argparse.Namespace, defaults: dict,
                  sample: Optional[str]) -> str:
    """The ``next step:`` block of ``hint`` with its modes as dataset commands and
    ``--accuracy-diagnose`` as the diagnose command on ``sample`` (the traced one)."""
    diagnose = diagnose_command(args, defaults, sample) if sample is not None else None
    below = "the diagnose command below" if diagnose else "ascend-accuracy diagnose"
    reason = _shell_words(hint.reason).replace(DIAGNOSE_FLAG, below)
    advice = _shell_words(hint.advice).replace(DIAGNOSE_FLAG, below)
    if hint.modes:
        lines = [f"next step: {reason}; {advice}:"]
        lines += [("  " if k == 0 else "  or ") + rerun_command(args, defaults, m.yaml_form())
                  for k, m in enumerate(hint.modes)]
    else:
        lines = [f"next step: {reason}{': ' + advice if advice else ''}"]
    if diagnose and DIAGNOSE_FLAG in hint.reason + hint.advice:
        lines += [f"the diagnose command, on sample {sample} (the one traced):", f"  {diagnose}"]
    return "\n".join(lines)
