"""``ascend-accuracy diagnose MODEL``: the debugging flow from the shell (see ``triage``)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Dict, List

import numpy as np

from . import aipp_step
from .mode_arg import mode_arg as _mode
from .app import (DEFAULT_METRIC, DEFAULT_SCALE_TOLERANCE, EXIT_FAILED, EXIT_OK, SCALE_OFF,
                  Command, backend_options, make_cli_backend, op_options, per_op_arg, add_command,
                  resolve_threshold, scale_tolerance_arg)
from ..backends import BackendKind
from ..dump.user_arrays import read_npy, read_npz
from ..errors import ConfigError


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", nargs="?", help="the ONNX model (optional with --aipp: step 5 only)")
    p.add_argument("--inputs", action="append", default=[], metavar="NAME=FILE.npy | FILE.npz",
                   help="model inputs (repeatable); default: seeded random inputs")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated inputs (default 0)")
    p.add_argument("--input-shape", metavar="'in1:1,3,224,224;in2:1,10'",
                   help="input shapes, ATC syntax (needed for dynamic dimensions)")
    p.add_argument("--mode", default="default",
                   help="the mode the failing test converted with, spelled as in a YAML suite: "
                        "a preset (default, high_precision, buffer_off, fusion_off, "
                        "'buffer_off+fusion_off') or a mapping such as "
                        "'{base: fusion_off, keep_dtype: [\"p2o.Conv.0\"]}'; every step varies it")
    p.add_argument("--threshold", type=float, default=None,
                   help="threshold for --metric (default 0.95 for cosine; required for the others)")
    p.add_argument("--metric", default=DEFAULT_METRIC, help="metric judged (default cosine)")
    op_options(p)
    p.add_argument("--scale-tolerance", metavar="T", default=None,
                   help="scale guard, as the plugin's scale_tolerance=: a tensor whose L2 norm is "
                        f"not within 1/T..T times the golden's fails (default "
                        f"{DEFAULT_SCALE_TOLERANCE:g}; {SCALE_OFF}: off)")
    p.add_argument("--budget", type=int, default=32,
                   help="most new conversions to spend (cached ones are free; default 32)")
    p.add_argument("--out", metavar="DIR",
                   help="write the fix files and reports here; atc_args.txt names them as "
                        "DIR's name/FILE: run atc from the folder holding DIR (its path may "
                        "hold only letters, digits, - . _ / and Chinese characters, as ATC's "
                        "config-file paths)")
    p.add_argument("--cache-dir", default=".ascend-accuracy", help="conversion/golden cache")
    backend_options(p)
    p.add_argument("--fault", action="append", default=[], metavar="KIND:TARGET[:EFFECT[:AMOUNT]]",
                   help="emulator only, for demonstrations: inject a fault (kind op|rule|buffer|input)")
    aipp_step.add_arguments(p)


def _read_inputs(items: List[str], model: str, input_shape) -> Dict[str, np.ndarray]:
    """``--inputs`` read and checked against the model's inputs, an error naming the file
    that holds a wrong or unknown input (it named only the input)."""
    inputs: Dict[str, np.ndarray] = {}
    files: Dict[str, str] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep:
            path = item
            if not path.endswith(".npz"):
                raise ConfigError("--inputs", f"{item!r}: give NAME=FILE.npy or a FILE.npz")
            arrays = read_npz(path, "a readable .npz of inputs")
            inputs.update(arrays)
            files.update(dict.fromkeys(arrays, path))
            continue
        inputs[name] = read_npy(path, f"a readable input {name!r}")
        files[name] = path
    if inputs:
        from ..graph.onnx_graph import check_inputs, load_model, resolve_input_shapes

        proto = load_model(model, weights=False)
        resolve_input_shapes(proto, input_shape, require_static=False, where="--input-shape")
        try:
            check_inputs(proto, inputs, where="--inputs")
        except ConfigError as exc:
            path = next((f for n, f in files.items() if repr(n) in exc.problem), None)
            if path is None:
                raise
            raise ConfigError(f"--inputs {path}", exc.problem) from None
    return inputs


def _faults(specs: List[str]):
    from ..backends.emulator.faults import Fault

    from ..backends.emulator.faults import EFFECTS

    out = []
    for spec in specs:
        kind, sep, rest = spec.partition(":")
        if not sep or not rest:
            raise ConfigError("--fault", f"{spec!r}: expected KIND:TARGET[:EFFECT[:AMOUNT]]")
        # the target may hold colons (an op named backbone/bn:1): EFFECT and AMOUNT are
        # taken from the right only when they are an effect and a number
        parts = rest.split(":")
        amount = 0.5 if kind == "input" else 1.0
        if len(parts) > 2 and parts[-2] in EFFECTS and _number(parts[-1]) is not None:
            amount, parts = _number(parts[-1]), parts[:-1]
        effect = "scale" if kind == "input" else "noise"
        if len(parts) > 1 and parts[-1] in EFFECTS:
            effect, parts = parts[-1], parts[:-1]
        target = ":".join(parts)
        if kind == "rule":  # GraphFusion:Rule, as diagnose prints rules: the rule's name
            target = target.rpartition(":")[2]
        out.append(Fault(kind, target, effect, amount))
    return out


def _number(text: str):
    try:
        return float(text)
    except ValueError:
        return None


def _run(args: argparse.Namespace) -> int:
    from ..core.cache import Cache
    from ..triage.flow import diagnose
    from ..triage.report import text

    resolve_threshold(args)  # before any conversion
    scale_tolerance = scale_tolerance_arg(args.scale_tolerance)
    if aipp_step.wanted(args):  # step 5 first: a wrong AIPP file makes every later step moot
        passed, report = aipp_step.run(args)
        sys.stdout.write(report)
        if not passed or not args.model:
            return EXIT_OK if passed else EXIT_FAILED
    if not args.model:
        raise ConfigError("diagnose", "give the ONNX model (or --aipp, --images and --reference)")
    if not os.path.isfile(args.model):
        from ..core.closest_paths import closest_in_folder

        raise ConfigError(args.model, "no such model file"
                          + closest_in_folder(args.model, False, args.model, (".onnx",)))
    mode = _mode(args.mode, args.model)
    if args.out:  # the fix's config files go there: ATC would refuse them, so say it now
        from ..triage.fix_folder import path_problem

        problem = path_problem(args.out)
        if problem:
            raise ConfigError("--out", f"{args.out!r} resolves to {problem}; pass a folder whose "
                                       f"path holds only those")
    per_op = per_op_arg(args.per_op)
    if per_op or args.ignore:  # names of the model's ops, or globs matching some
        from ..graph.op_catalogue import model_ops

        ops = model_ops(args.model)
        ops.check_names(per_op, "per_op entry", "--per-op")
        ops.check_names(args.ignore, "ignore entry", "--ignore")
    cache = Cache(Path(args.cache_dir))
    if args.fault and args.backend != BackendKind.EMULATOR:
        raise ConfigError("--fault", "faults exist only in the emulator backend")
    backend = make_cli_backend(args, cache, faults=_faults(args.fault))
    inputs = _read_inputs(args.inputs, args.model, args.input_shape) or None
    golden_inputs, atc_options, input_shape, note = None, None, args.input_shape, ""
    if aipp_step.wanted(args):  # convert as deployed: with the file, fed the raw images
        from .aipp_flow import aipp_flow_inputs

        inputs, golden_inputs, atc_options, input_shape, note = aipp_flow_inputs(args,
                                                                                 inputs or {})

    def progress(message: str) -> None:
        print(f"[diagnose] {message}", file=sys.stderr, flush=True)

    try:
        d = diagnose(args.model, inputs, backend, args.threshold, budget=args.budget, cache=cache,
                     input_shape=input_shape, metric=args.metric, seed=args.seed,
                     out_dir=args.out, progress=progress, mode=mode,
                     scale_tolerance=scale_tolerance, per_op=per_op or None,
                     ignore=tuple(args.ignore), atc_options=atc_options,
                     golden_inputs=golden_inputs)
    finally:
        close = getattr(backend, "close", None)
        if close:
            close()
    if note:
        print(f"[diagnose] {note}", file=sys.stderr, flush=True)
    sys.stdout.write(text(d))
    return EXIT_OK if d.fixed else EXIT_FAILED


add_command(Command("diagnose", "walk the precision-debugging flow for a model and name the fix",
                    _configure, _run))
