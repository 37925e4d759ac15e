"""``ascend-accuracy diagnose --aipp F --images DIR --reference MODULE:FN``: step 5 from the shell.

The AIPP file is applied to each raw image of ``DIR`` (``*.npy``, uint8 HWC; NV12 rows for
YUV420SP_U8) and compared with ``FN(image)``, the reference network's own pre-processing
(``MODULE`` an importable module or a ``path/to/file.py``). On mismatch the fields to correct
are printed and the corrected AIPP file is written to ``--out`` (default: next to the AIPP
file, ``<name>.corrected.cfg``); the rest of the flow then does not run, since every operator
after a wrong pre-processing fails for that reason alone.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Callable, List, Optional, Tuple

import numpy as np

from ..errors import ConfigError


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("step 5: AIPP / pre-processing (needs all three)")
    g.add_argument("--aipp", metavar="FILE", help="the ATC --insert_op_conf AIPP file to check")
    g.add_argument("--images", metavar="DIR", help="raw uint8 images as .npy files (HWC; NV12 rows)")
    g.add_argument("--reference", metavar="MODULE:FN",
                   help="the reference pre-processing: FN(image) -> float CHW tensor "
                        "(MODULE importable or a path/to/file.py)")
    g.add_argument("--aipp-input", type=int, default=0, metavar="RANK",
                   help="which aipp_op block (related_input_rank, default 0)")


def wanted(args: argparse.Namespace) -> bool:
    """True when step 5 was asked for; a partial set of its options is a usage error."""
    given = [n for n in ("aipp", "images", "reference") if getattr(args, n, None)]
    if given and len(given) < 3:
        missing = [f"--{n}" for n in ("aipp", "images", "reference") if n not in given]
        raise ConfigError("diagnose", f"the AIPP check needs --aipp, --images and --reference; "
                                      f"missing {', '.join(missing)}")
    return bool(given)


def run(args: argparse.Namespace) -> Tuple[bool, str]:
    """Run the check; returns (passed, text to print)."""
    from ..aipp import check_preprocessing

    images = load_images(args.images)
    reference = load_reference(args.reference)
    result = check_preprocessing(args.aipp, images, reference, rank=args.aipp_input)
    written = None
    if not result.passed and result.fixes:
        out_dir = Path(args.out) if getattr(args, "out", None) else Path(args.aipp).resolve().parent
        out_dir.mkdir(parents=True, exist_ok=True)
        written = result.write_corrected(out_dir / f"{Path(args.aipp).stem}.corrected.cfg")
    return result.passed, f"step 5 (pre-processing / AIPP): {result.report(corrected_path=written)}\n"


def load_images(directory: str) -> List[np.ndarray]:
    d = Path(directory)
    if not d.is_dir():
        raise ConfigError(directory, "--images: not a directory")
    files = sorted(d.glob("*.npy"))
    if not files:
        raise ConfigError(directory, "--images: no .npy image files in the directory")
    out = []
    for f in files:
        try:
            out.append(np.load(f, allow_pickle=False))
        except (OSError, ValueError) as exc:
            raise ConfigError(str(f), f"not a readable .npy array ({exc})") from None
    return out


def load_reference(spec: str) -> Callable[[np.ndarray], np.ndarray]:
    module_name, sep, fn_name = spec.rpartition(":")
    if not sep or not module_name or not fn_name:
        raise ConfigError("--reference", f"expected MODULE:FN, got {spec!r}")
    module = _import(module_name)
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        import difflib

        names = [n for n in dir(module) if callable(getattr(module, n, None)) and not n.startswith("_")]
        close = difflib.get_close_matches(fn_name, names, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise ConfigError("--reference", f"{module_name} has no function {fn_name!r}{hint}")
    return fn


def _import(name: str):
    if name.endswith(".py") or os.sep in name:
        path = Path(name)
        if not path.is_file():
            raise ConfigError("--reference", f"no such file {name!r}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules.setdefault(path.stem, module)
        spec.loader.exec_module(module)
        return module
    sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ConfigError("--reference", f"cannot import {name!r}: {exc}") from None
    finally:
        if sys.path and sys.path[0] == os.getcwd():
            sys.path.pop(0)

