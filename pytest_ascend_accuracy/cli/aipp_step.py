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
from pathlib import Path
from typing import Tuple

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

    from ..aipp.user_files import load_images, load_reference

    images = load_images(args.images)
    reference = load_reference(args.reference)
    result = check_preprocessing(args.aipp, images, reference, rank=args.aipp_input)
    written = None
    if not result.passed and result.fixes:
        out_dir = Path(args.out) if getattr(args, "out", None) else Path(args.aipp).resolve().parent
        out_dir.mkdir(parents=True, exist_ok=True)
        written = result.write_corrected(out_dir / f"{Path(args.aipp).stem}.corrected.cfg")
    return result.passed, f"step 5 (pre-processing / AIPP): {result.report(corrected_path=written)}\n"
