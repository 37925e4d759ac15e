"""``ascend-accuracy dataset MODEL SAMPLES``: a dataset metric on the device against the reference.

SAMPLES is a directory of ``.npz`` files (one sample each, arrays keyed by input name; ids are
the file stems). ``--labels`` reads a JSON file (``{sample id: label}`` or a list in sample
order) or a ``.npy`` array in sample order. ``--metric`` is top1, top5, agreement, map, or
``MODULE:FUNCTION`` for a callable ``metric(list_of_output_dicts, labels) -> float``;
``--postprocess MODULE:FUNCTION`` turns outputs into detections for map (``MODULE`` importable
or a ``path/to/file.py``, as ``diagnose --reference`` takes it). An option the metric does not
read (``--labels`` for agreement, ``--postprocess`` but for map, ``--output`` for map) is
refused. ``--higher-is-better false`` reads a callable's figure the other way round (a loss:
the drop is device - reference). ``--mode`` takes what ``diagnose --mode`` takes (``mode_arg``):
a preset, a YAML mapping, or a mode's printed name (``keep_dtype(scale,fc)``). Exit status 0
when the drop is within ``--max-drop``, 1 when not, 2 on bad input (a metric function that
raises or returns NaN, a reference output holding NaN included). Without ``--input-shape`` a
model with dynamic dimensions converts at each sample's shape (``dataset.PerShapeDeviceModel``).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..errors import ConfigError
from .app import (DEFAULT_SCALE_TOLERANCE, EXIT_FAILED, EXIT_OK, SCALE_OFF, Command,
                  backend_options, make_cli_backend, add_command, scale_tolerance_arg)
from .mode_arg import mode_arg


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="the ONNX model (the reference runs it in fp32)")
    p.add_argument("samples", help="directory of .npz samples (arrays keyed by input name)")
    p.add_argument("--metric", default="top1",
                   help="top1 | top5 | agreement | map | MODULE:FUNCTION (default top1; "
                        "MODULE importable or a path/to/file.py)")
    p.add_argument("--labels", metavar="FILE.json|FILE.npy",
                   help="labels: JSON {sample id: label} or list, or .npy in sample order")
    p.add_argument("--max-drop", type=float, default=0.01,
                   help="largest allowed drop: reference - device, or device - reference with "
                        "--higher-is-better false (default 0.01)")
    p.add_argument("--higher-is-better", default="true", choices=("true", "false"),
                   help="false for a MODULE:FUNCTION metric where lower is better, such as a "
                        "loss (default true; the built-in metrics are better higher)")
    p.add_argument("--output", help="the model output the metric reads (default: the only one)")
    p.add_argument("--postprocess", metavar="MODULE:FUNCTION",
                   help="outputs -> COCO detections, for --metric map (MODULE importable or "
                        "a path/to/file.py)")
    p.add_argument("--mode", default="default",
                   help="conversion mode, as diagnose --mode takes it: a preset (default, "
                        "high_precision, buffer_off, fusion_off, 'buffer_off+fusion_off'), a "
                        "mapping such as '{base: fusion_off, keep_dtype: [\"fc\"]}', or a "
                        "printed mode name such as 'keep_dtype(scale,fc)'")
    p.add_argument("--threshold", type=float, default=0.95,
                   help="per-operator cosine threshold for tracing a flipped sample (default 0.95)")
    p.add_argument("--scale-tolerance", metavar="T", default=None,
                   help="scale guard of the traced sample, as the plugin's scale_tolerance=: a "
                        "tensor whose L2 norm is not within 1/T..T times the golden's fails "
                        f"(default {DEFAULT_SCALE_TOLERANCE:g}; {SCALE_OFF}: off)")
    p.add_argument("--input-shape", metavar="'in1:1,3,224,224;in2:1,10'",
                   help="input shapes, ATC syntax, one conversion for every sample (without "
                        "it, a model with dynamic dimensions converts at each sample's shape)")
    p.add_argument("--batch-axis", metavar="AXIS|none", default="auto",
                   help="the axis of the metric's output that holds the samples (default: the "
                        "axis of the inputs' batch size, axis 0 first; 'none': the output has "
                        "no batch axis, one row per sample); e.g. 1 for a time-major [T, N, C]")
    p.add_argument("--json", metavar="OUT", help="write the figures as JSON")
    p.add_argument("--cache-dir", default=".ascend-accuracy", help="conversion/reference cache")
    backend_options(p)


def _load_callable(spec: str, option: str):
    """``MODULE:FUNCTION`` by the loader ``diagnose --reference`` uses: an importable module
    (found from the working directory first) or a ``path/to/file.py``."""
    import functools

    from ..aipp.user_files import load_reference

    try:
        fn = load_reference(spec, where=option)
    except ConfigError as exc:
        raise ConfigError(option, f"cannot load {spec!r}: {exc.problem}") from exc
    except Exception as exc:  # the module's own code failed while it was imported
        raise ConfigError(option, f"cannot load {spec!r}: importing it raised "
                                  f"{type(exc).__name__}: {exc}") from exc

    @functools.wraps(fn)  # its name and signature (checked before any sample runs)
    def named(*args):
        return fn(*args)

    # errors name it as typed (``my.py:fn``), not by the module name the loader gave it
    named.__module__, _, named.__qualname__ = spec.rpartition(":")
    return named


#: the check's argument names and Python spellings in its errors, as this command spells them
#: (it printed "postprocess: metric "map" needs postprocess(outputs) -> ..." and
#: "higher_is_better=False", which no option of the command takes)
CLI_WORDS = (("higher_is_better=False", "--higher-is-better false"),
             ("needs postprocess(outputs)", "needs --postprocess MODULE:FUNCTION, a "
                                            "FUNCTION(outputs)"),
             ("with output=...", "with --output NAME"),
             ("use metric='top1' or 'agreement'", "use --metric top1 or --metric agreement"),
             ("use metric='agreement'", "use --metric agreement"),
             ("a callable metric(outputs, labels)", "--metric MODULE:FUNCTION, a "
                                                    "FUNCTION(outputs, labels)"),
             ("(or a callable)", "(or MODULE:FUNCTION)"),
             ("give a max_drop below", "give a --max-drop below"),
             ("and max_drop is", "and --max-drop is"), ("within max_drop", "within --max-drop"),
             ("batch_axis=None", "--batch-axis none"), ("batch_axis=", "--batch-axis "))
CLI_WHERE = {"postprocess": "--postprocess", "higher_is_better": "--higher-is-better",
             "max_drop": "--max-drop", "output": "--output", "metric": "--metric",
             "threshold": "--threshold", "scale_tolerance": "--scale-tolerance",
             "labels": "--labels", "samples": "SAMPLES", "batch_axis": "--batch-axis"}


def _run(args: argparse.Namespace) -> int:
    try:
        return _check(args)
    except ConfigError as exc:
        problem = cli_words(exc.problem)
        known = exc.where in CLI_WHERE
        if exc.cli_text is not None or not (known or problem != exc.problem):
            raise
        # a sample's error ("sample 'b': ... batch_axis=1") keeps its place, in these words
        where = (args.samples if exc.where == "samples" else
                 CLI_WHERE[exc.where] if known else exc.where)
        raise ConfigError(exc.where, exc.problem, cli_text=f"{where}: {problem}") from None


def cli_words(text: str) -> str:
    """``text`` with the check's Python spellings as this command's options (``CLI_WORDS``)."""
    for python, cli in CLI_WORDS:
        text = text.replace(python, cli)
    return text


def _batch_axis(text: str):
    """``--batch-axis``: an int, 'none' (no batch axis) or 'auto'."""
    from ..dataset.batch_axis import AUTO

    word = text.strip().lower()
    if word in (AUTO, "none"):
        return None if word == "none" else AUTO
    try:
        return int(word)
    except ValueError:
        raise ConfigError("--batch-axis", f"expected an axis of the output (0, 1, ..., -1 for "
                                          f"the last), 'none' or 'auto', got {text!r}") from None


def _check(args: argparse.Namespace) -> int:
    from ..core.cache import Cache
    from ..dataset import load_device_model, run_dataset_check
    from ..dataset.check import check_arguments, refuse_unread, unread_options
    from ..dataset.samples import read_labels

    if not os.path.isfile(args.model):
        from ..core.closest_paths import closest_in_folder

        raise ConfigError(args.model, "no such model file"
                          + closest_in_folder(args.model, False, args.model, (".onnx",)))
    metric = args.metric
    if ":" in metric:
        metric = _load_callable(metric, "--metric")
    postprocess = _load_callable(args.postprocess, "--postprocess") if args.postprocess else None
    given = {"labels": args.labels, "postprocess": args.postprocess, "output": args.output}
    refuse_unread(metric, [f"--{k}" for k in unread_options(metric, given)])
    labels = read_labels(args.labels) if args.labels else None
    if labels is None and metric in ("top1", "top5", "map"):  # before converting anything
        raise ConfigError("--labels", f"metric {metric} needs labels: --labels FILE.json "
                                      "({sample id: label} or a list in sample order) or "
                                      "FILE.npy; --metric agreement needs none")
    higher_is_better = args.higher_is_better == "true"
    scale_tolerance = scale_tolerance_arg(args.scale_tolerance)
    batch_axis = _batch_axis(args.batch_axis)
    check_arguments(args.samples, metric, args.max_drop, args.threshold,  # before converting
                    postprocess=postprocess, higher_is_better=higher_is_better,
                    scale_tolerance=scale_tolerance, batch_axis=batch_axis)
    mode = mode_arg(args.mode, args.model, command="dataset")
    cache = Cache(Path(args.cache_dir))
    backend = make_cli_backend(args, cache)
    interactive = sys.stderr.isatty()

    def progress(done, total):
        of = f"/{total}" if total else ""
        end = "\r" if interactive and done != total else "\n"
        if interactive or done == total:
            print(f"[dataset] {done}{of} samples", end=end, file=sys.stderr, flush=True)

    om = None
    try:
        om = load_device_model(backend, args.model, mode, input_shape=args.input_shape)
        result, _, _ = run_dataset_check(om, args.samples, metric=metric, labels=labels,
                                         max_drop=args.max_drop, output=args.output,
                                         postprocess=postprocess, cache=cache,
                                         threshold=args.threshold, progress=progress,
                                         higher_is_better=higher_is_better,
                                         scale_tolerance=scale_tolerance,
                                         converted_by="--input-shape", batch_axis=batch_axis)
    finally:
        if om is not None:
            om.close()  # the traced sample's dump directory
        close = getattr(backend, "close", None)
        if close:
            close()
    _in_cli_words(result, args)
    print(result.message())
    if args.json:
        data = dict(result.properties(), flipped=list(result.flipped),
                    nonfinite=list(result.nonfinite), model=result.model, mode=result.mode)
        from ..core.atomic_files import atomic_write_text

        atomic_write_text(args.json, json.dumps(data, indent=1))
        print(f"wrote {args.json}")
    return EXIT_OK if result.passed else EXIT_FAILED


def _in_cli_words(result, args: argparse.Namespace) -> None:
    """The result's note and next step as this command spells them: the modes to try as this
    command with ``--mode`` (they were ``modes=[keep_dtype([...])]``, pytest code: audit 32)."""
    from dataclasses import replace

    from .dataset_advice import cli_next_step, output_command

    result.layout_note = cli_words(result.layout_note)
    parser = argparse.ArgumentParser()
    _configure(parser)
    defaults = vars(parser.parse_args(["MODEL", "SAMPLES"]))
    result.track_lines = tuple(output_command(args, defaults, name)
                               for name in result.track_outputs)
    culprit = result.culprit
    if culprit is not None:  # "threshold=1.000000 names it": the command's --threshold (a review)
        import re

        named = re.compile(r"\bthreshold=(\S+) names it")
        culprit = result.culprit = replace(
            culprit, reason=named.sub(r"--threshold \1 names it", culprit.reason),
            note=named.sub(r"--threshold \1 names it", culprit.note))
    if culprit is None or culprit.hint is None:
        return
    result.culprit = replace(culprit, next_step=cli_next_step(culprit.hint, args, defaults,
                                                              culprit.sample))


add_command(Command("dataset", "a dataset metric (top1/top5/agreement/map) on the device against "
                    "the onnxruntime fp32 reference", _configure, _run))
