"""``ascend-accuracy diagnose --aipp F --images DIR --reference MODULE:FN``: step 5 from the shell.

The AIPP file is applied to each raw image of ``DIR`` (``*.npy``, uint8 HWC; NV12 rows for
YUV420SP_U8), or of one ``.npy`` file of N frames (as ``check_preprocessing`` takes an array of
frames and a YAML suite's ``{x: frames.npy}``), and compared with ``FN(image)``, the reference
network's own pre-processing (``MODULE`` an importable module or a ``path/to/file.py``). On
mismatch the fields to correct are printed and the corrected AIPP file is written to ``--out``
(default: next to the AIPP file, ``<name>.corrected.cfg``), its path printed relative to where
the command runs; the rest of the flow then does not run, since every operator after a wrong
pre-processing fails for that reason alone.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Tuple

import numpy as np

from ..errors import ConfigError


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("step 5: AIPP / pre-processing (needs all three)")
    g.add_argument("--aipp", metavar="FILE", help="the ATC --insert_op_conf AIPP file to check")
    g.add_argument("--images", metavar="DIR|FILE.npy",
                   help="raw uint8 images: a directory of .npy files, one image each (HWC; NV12 "
                        "rows), or one .npy of N images")
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

    from ..aipp.user_files import load_reference

    images = _images(args.images)
    reference = load_reference(args.reference)
    result = check_preprocessing(args.aipp, images, reference, rank=args.aipp_input)
    written = None
    if not result.passed and result.fixes:
        out_dir = Path(args.out) if getattr(args, "out", None) else Path(args.aipp).resolve().parent
        out_dir.mkdir(parents=True, exist_ok=True)
        written = result.write_corrected(out_dir / f"{Path(args.aipp).stem}.corrected.cfg")
    if written is not None:  # pasted where the command ran, as the plugin prints it
        from ..core.locations import shown

        written = shown(written, os.getcwd())
    return result.passed, f"step 5 (pre-processing / AIPP): {result.report(corrected_path=written)}\n"


def _images(path: str):
    """``--images``: a directory of ``.npy`` images (``aipp.user_files.load_images``), or one
    ``.npy`` file of N frames (or one frame), as ``check_preprocessing`` takes an array."""
    from ..aipp.user_files import load_images
    from ..dump.user_arrays import read_npy

    p = Path(path)
    if p.is_dir():
        return load_images(path)
    if p.is_file() and p.suffix == ".npy":
        frames = read_npy(p, "a readable .npy of images")
        if frames.dtype != np.uint8:
            raise ConfigError(path, f"--images: not raw images: AIPP reads uint8 bytes (N x H x W "
                                    f"x C frames, HWC; NV12 rows for YUV420SP_U8), this file "
                                    f"holds {frames.dtype}")
        return frames
    what = "not a .npy file" if p.is_file() else "no such directory or file"
    near = ""
    if not p.is_file() and p.parent.is_dir():
        import difflib

        names = sorted(e.name for e in p.parent.iterdir() if e.is_dir() or e.suffix == ".npy")
        close = difflib.get_close_matches(p.name, names, n=3)
        if close:
            near = f" (closest: {', '.join(str(p.parent / c) for c in close)})"
    raise ConfigError(path, f"--images: {what}{near}: give a directory of .npy images (one "
                            f"image each, HWC uint8; NV12 rows for YUV420SP_U8) or one .npy "
                            f"of N images")
