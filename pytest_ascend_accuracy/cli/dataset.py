"""``ascend-accuracy dataset MODEL SAMPLES``: a dataset metric on the device against the reference.

SAMPLES is a directory of ``.npz`` files (one sample each, arrays keyed by input name; ids are
the file stems). ``--labels`` reads a JSON file (``{sample id: label}`` or a list in sample
order) or a ``.npy`` array in sample order. ``--metric`` is top1, top5, agreement, map, or
``MODULE:FUNCTION`` for a callable ``metric(list_of_output_dicts, labels) -> float``;
``--postprocess MODULE:FUNCTION`` turns outputs into detections for map. Exit status 0 when
the drop is within ``--max-drop``, 1 when not, 2 on bad input.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from pathlib import Path

from ..errors import ConfigError
from .app import (EXIT_FAILED, EXIT_OK, Command, backend_options, make_cli_backend,
                  register)


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="the ONNX model (the reference runs it in fp32)")
    p.add_argument("samples", help="directory of .npz samples (arrays keyed by input name)")
    p.add_argument("--metric", default="top1",
                   help="top1 | top5 | agreement | map | MODULE:FUNCTION (default top1)")
    p.add_argument("--labels", metavar="FILE.json|FILE.npy",
                   help="labels: JSON {sample id: label} or list, or .npy in sample order")
    p.add_argument("--max-drop", type=float, default=0.01,
                   help="largest allowed reference - device drop (default 0.01)")
    p.add_argument("--output", help="the model output the metric reads (default: the only one)")
    p.add_argument("--postprocess", metavar="MODULE:FUNCTION",
                   help="outputs -> COCO detections, for --metric map")
    p.add_argument("--mode", default="default",
                   help="conversion mode: default, high_precision, buffer_off, fusion_off, a+b")
    p.add_argument("--threshold", type=float, default=0.95,
                   help="per-operator cosine threshold for tracing a flipped sample (default 0.95)")
    p.add_argument("--input-shape", metavar="'in1:1,3,224,224;in2:1,10'",
                   help="input shapes, ATC syntax (needed for dynamic dimensions)")
    p.add_argument("--json", metavar="OUT", help="write the figures as JSON")
    p.add_argument("--cache-dir", default=".ascend-accuracy", help="conversion/reference cache")
    backend_options(p)


def _load_callable(spec: str, option: str):
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise ConfigError(option, f"expected MODULE:FUNCTION, got {spec!r}")
    sys.path.insert(0, os.getcwd())
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(option, f"cannot load {spec!r}: {exc}") from exc
    finally:
        sys.path.pop(0)
    if not callable(fn):
        raise ConfigError(option, f"{spec!r} is not callable")
    return fn


def _read_labels(path: str):
    p = Path(path)
    if not p.is_file():
        raise ConfigError(path, "labels file not found")
    if p.suffix == ".npy":
        from ..dump.user_arrays import read_npy

        return read_npy(p, "a readable labels array")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: runaway nesting
        raise ConfigError(path, f"cannot read labels as JSON: {exc}") from exc
    if not isinstance(data, (dict, list)):
        raise ConfigError(path, "labels JSON must be {sample id: label} or a list")
    return data


def _run(args: argparse.Namespace) -> int:
    from ..core.cache import Cache
    from ..dataset import load_device_model, run_dataset_check
    from ..dataset.check import check_arguments

    if not os.path.isfile(args.model):
        raise ConfigError(args.model, "no such model file")
    metric = args.metric
    if ":" in metric:
        metric = _load_callable(metric, "--metric")
    postprocess = _load_callable(args.postprocess, "--postprocess") if args.postprocess else None
    labels = _read_labels(args.labels) if args.labels else None
    if labels is None and metric in ("top1", "top5", "map"):  # before converting anything
        raise ConfigError("--labels", f"metric {metric} needs labels: --labels FILE.json "
                                      "({sample id: label} or a list in sample order) or "
                                      "FILE.npy; --metric agreement needs none")
    check_arguments(args.samples, metric, args.max_drop, args.threshold)  # before converting
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
        om = load_device_model(backend, args.model, args.mode, input_shape=args.input_shape)
        result, _, _ = run_dataset_check(om, args.samples, metric=metric, labels=labels,
                                         max_drop=args.max_drop, output=args.output,
                                         postprocess=postprocess, cache=cache,
                                         threshold=args.threshold, progress=progress)
    finally:
        if om is not None:
            om.close()  # the traced sample's dump directory
        close = getattr(backend, "close", None)
        if close:
            close()
    print(result.message())
    if args.json:
        data = dict(result.properties(), flipped=list(result.flipped),
                    nonfinite=list(result.nonfinite), model=result.model, mode=result.mode)
        from ..core.atomic_files import atomic_write_text

        atomic_write_text(args.json, json.dumps(data, indent=1))
        print(f"wrote {args.json}")
    return EXIT_OK if result.passed else EXIT_FAILED


register(Command("dataset", "a dataset metric (top1/top5/agreement/map) on the device against "
                            "the onnxruntime fp32 reference", _configure, _run))
