"""Step 5 of the flow as a library call: the AIPP file against the reference pre-processing.

``check_preprocessing(config, images, reference)`` applies the file's static AIPP block to each
raw image (:mod:`.apply`), compares it with ``reference(image)`` scale-sensitively
(:mod:`.agreement`) and, when they disagree, searches the likely mistakes (:mod:`.mistakes`) for
the fields whose correction makes every image agree. The result renders the failure text and can
write the corrected AIPP file; the pytest fixture raises with that text.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import ConfigError
from .agreement import Agreement, judge_image
from .apply import _is_single_image, crop, decode
from .config import AippConfig, AippOp, read_aipp_config
from .mistakes import FieldFix, find_correction


@dataclass
class PreprocessingCheck:
    """The verdict of one check: per-image agreement, and the correction when they disagree."""

    config: AippConfig
    op: AippOp
    agreements: List[Agreement]
    fixes: List[FieldFix] = field(default_factory=list)
    fixed_agreements: List[Agreement] = field(default_factory=list)
    verified: bool = False
    #: a mistake the fields do not say (mean and std swapped), or why none fixes it
    note: str = ""

    @property
    def passed(self) -> bool:
        return all(a.ok for a in self.agreements)

    def corrected_text(self) -> Optional[str]:
        """The AIPP file with the fixes applied (None when there is nothing to fix)."""
        if not self.fixes:
            return None
        return self.config.corrected_text({self.op.rank: {f.key: f.new for f in self.fixes}})

    def write_corrected(self, path) -> Optional[str]:
        """Write the corrected AIPP file to ``path`` atomically; returns the path (None if no fix)."""
        text = self.corrected_text()
        if text is None:
            return None
        from ..core.atomic_files import atomic_write_text

        path = os.fspath(path)
        atomic_write_text(path, text)
        return path

    def where(self, show: Optional[Callable[[str], str]] = None) -> str:
        """``file:line`` of the checked ``aipp_op`` block, the file spelled by ``show``."""
        where = self.op.where()
        if show is None or not where.startswith(self.op.shown):
            return where
        return show(self.op.path) + where[len(self.op.shown):]

    def report(self, corrected_path: Optional[str] = None,
               show: Optional[Callable[[str], str]] = None) -> str:
        """The verdict's text; ``show`` spells the AIPP file's path (the plugin: relative to
        where pytest ran)."""
        n, bad = len(self.agreements), [i for i, a in enumerate(self.agreements) if not a.ok]
        head = (f"pre-processing check {'passed' if self.passed else 'FAILED'}: AIPP file "
                f"{self.where(show)} (aipp_op for input {self.op.rank}, {self.op.input_format}) "
                f"vs the reference pre-processing: {n - len(bad)} of {n} image(s) agree")
        lines = [head]
        for i, a in enumerate(self.agreements[:8]):
            lines.append(f"  image {i:<3} {'ok    ' if a.ok else 'DIFFER'} {a.describe()}")
        if len(self.agreements) > 8:
            lines.append(f"  ... {len(self.agreements) - 8} more")
        if self.passed:
            return "\n".join(lines)
        if self.fixes:
            worst = max((a.worst for a in self.fixed_agreements), default=float("nan"))
            state = (f"with them all {n} image(s) agree (worst {worst:.3g}x the tolerance)" if self.verified
                     else f"closest correction found; images still differ (worst {worst:.3g}x the tolerance)")
            lines += [self.note] if self.note else []
            lines.append(f"AIPP fields to correct ({state}):")
            width = max(len(str(f)) for f in self.fixes)
            for f in self.fixes:
                lines.append(f"  {str(f):<{width}}  # {f.why}")
        elif self.note:  # why no field fixes it
            lines.append(self.note)
        else:
            lines.append("no correction of the likely mistakes (channel swap, CSC matrix, crop, "
                         "padding, mean/min/var_reci) makes them agree: compare the reference "
                         "pre-processing with the file by hand")
        if corrected_path:
            lines.append(f"corrected AIPP file: {corrected_path}")
        lines.append("the operators after AIPP are not to blame until this passes")
        return "\n".join(lines)


def check_preprocessing(config: Union[AippConfig, str, "os.PathLike[str]"], images,
                        reference: Callable[[np.ndarray], np.ndarray], *, rank: int = 0,
                        search: bool = True, inputs: Sequence[str] = (),
                        model_hw: Optional[Tuple[int, int]] = None) -> PreprocessingCheck:
    """Compare the AIPP output of each raw image with ``reference(image)`` (float CHW, or NCHW
    with N = 1); on mismatch search the fields to correct (``search=False`` skips that).
    ``inputs``: the model's input names in order (errors name the input, not its rank). The
    images are checked against the block (layout, ``src_image_size``, the crop) before the
    reference sees them: a wrong layout is the file's error, not a crash inside the reference.
    ``model_hw``: the model input's height and width, where a converted model gives them: a
    crop size of 0 is that (H109: taken from the reference, a reference of another size passed
    a file whose device output differs); without it, the reference's."""
    cfg = config if isinstance(config, AippConfig) else read_aipp_config(config)
    op = cfg.for_input(rank)
    if op is None:
        raise missing_block(cfg, rank, inputs)
    if model_hw is not None:
        op = op.with_model_hw(model_hw)
    name = inputs[rank] if rank < len(inputs) else None
    imgs = _image_list(op, images)
    sized = not op.get("crop") or all(op.crop_size(axis) for axis in ("h", "w"))
    # raises naming the file's key and the images' shape or size, each image decoded once
    pixels = [decode(op, img, name=name) for img in imgs]
    for px in pixels if sized else ():
        crop(op, px)
    refs = [_reference_tensor(reference, img, i) for i, img in enumerate(imgs)]
    if op.model_hw is None:  # the reference makes the model input: a crop size of 0 is its
        op = op.with_model_hw(refs[0].shape[1:])
    for px in () if sized else pixels:
        crop(op, px)
    agreements = [judge_image(op, img, ref, name=name) for img, ref in zip(imgs, refs)]
    result = PreprocessingCheck(cfg, op, agreements)
    if not result.passed and search:
        corr = find_correction(op, imgs, refs)
        result.fixes, result.fixed_agreements, result.verified = corr.fixes, corr.agreements, corr.verified
        result.note = corr.note
    return result


def missing_block(cfg: AippConfig, rank: int, inputs: Sequence[str] = ()) -> ConfigError:
    """No ``aipp_op`` block for input ``rank``: the inputs the file's blocks are for, and the
    ``rank=`` (command line: ``--aipp-input``) that checks one of them."""
    def label(r: int) -> str:
        return f"input {r} ({inputs[r]!r})" if r < len(inputs) else f"input {r}"

    ranks = sorted(o.rank for o in cfg.ops)
    model = (f"; the model's inputs: {', '.join(f'{k} {n!r}' for k, n in enumerate(inputs))}"
             if inputs else "")
    head = (f"no aipp_op block for {label(rank)} (related_input_rank: {rank}); the file's "
            f"block{'s are' if len(ranks) > 1 else ' is'} for {', '.join(map(label, ranks))}"
            f"{model}: check ")
    which = " or ".join(f"rank={r}" for r in ranks)
    return ConfigError(cfg.shown, f"{head}{'it' if len(ranks) == 1 else 'one'} with {which}",
                       cli_text=f"{cfg.shown}: {head}{'it' if len(ranks) == 1 else 'one'} with "
                                + " or ".join(f"--aipp-input {r}" for r in ranks))


def _image_list(op: AippOp, images) -> List[np.ndarray]:
    if isinstance(images, np.ndarray):
        imgs = [images] if _is_single_image(op, images) else list(images)
    else:
        imgs = [np.asarray(i) for i in _iterate(images)]
    if not imgs:
        raise ConfigError(op.where(), "check_preprocessing needs at least one image")
    for i, img in enumerate(imgs):
        if img.dtype != np.uint8:
            raise ConfigError(op.where("input_format"), f"input_format: image {i} must be raw uint8 "
                                                        f"bytes, got {img.dtype}")
    return imgs


def _iterate(images) -> Iterable:
    if isinstance(images, dict):
        raise ConfigError(None, "check_preprocessing: pass the images as a list or an array, not a dict")
    return images


def _reference_tensor(reference, image: np.ndarray, i: int) -> np.ndarray:
    ref = np.asarray(reference(image), dtype=np.float32)
    if ref.ndim == 4 and ref.shape[0] == 1:
        ref = ref[0]
    if ref.ndim != 3:
        raise ConfigError(None, f"reference(image {i}) must return a CHW (or 1xCxHxW) tensor, "
                                f"got shape {tuple(ref.shape)}")
    return ref
