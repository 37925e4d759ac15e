"""Which AIPP fields, corrected how, make the AIPP output agree with the reference?

The search covers the classic mistakes of an ``insert_op_conf`` file written by hand:

- discrete choices, tried exhaustively: ``rbuv_swap_switch`` (R/B or U/V order),
  ``ax_swap_switch`` (XRGB vs RGBX), and for YUV input the colour-space conversion matrix and
  biases: the file's own, and each standard one (BT.601/BT.709, full/narrow range) with rows in
  R, G, B or B, G, R order (:data:`.keys.YUV2RGB_STANDARDS`);
- the crop window: its size from the reference's shape, its offset located by correlating the
  reference with every window of the (swap- and CSC-converted) image;
- the padding split and value: the sizes read off the references' constant borders, when they
  keep the file's totals, and ``padding_value`` as the border holds it (output units: AIPP pads
  after normalisation);
- the normalisation, solved rather than guessed: for each channel the reference is a linear
  function of the pixels the normaliser receives, ``ref = a * pixel + b``, fitted by least
  squares over all images; then ``var_reci_chn = a`` and ``mean_chn + min_chn = -b / a``.
  This finds std-instead-of-reciprocal, ``1/std**2``, zeroed means, mean and std swapped and
  channel-order mix-ups alike, and each gets a sentence saying which mistake it looks like
  (:mod:`.fix_comments`). A fitted value is then replaced by the one the user most likely
  meant where that verifies too (:mod:`.norm_values`: with CSC the fit absorbs the device's
  rounding, so 123.687 stands for the reference's 123.675), and a field whose own value
  already agrees is left alone.

A border padded before normalisation (one value per channel) is outside what any field can
express; :mod:`.padding_note` says so instead of "compare by hand".

The discrete hypothesis whose fit leaves the least unexplained variance wins (ties go to the
one changing fewest fields); its corrections are verified by applying the corrected block to
every image and judging it with :func:`.agreement.judge_image`. A correction that does
not verify is offered as the closest one only when it brings every image within ``_CLOSE``
tolerances; otherwise the mistake lies outside the search and no fields are named.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .agreement import judge_image
from .apply import csc, csc_matrix, decode, pixels_before_normalisation
from .config import AippOp
from .keys import YUV2RGB_STANDARDS, matrix_keys
from .fix_comments import FieldFix, describe_fixes
from .norm_values import fitted_reasons, snap_normalisation, split_offset
from .padding_note import per_channel_border_note
from .ranges import offset_advice, offset_fields

_MAX_OFFSETS = 1500
_SAMPLE = 4096  # reference positions correlated per crop offset
#: an unverified correction is still shown as "closest" only when it leaves every image within
#: this many tolerances; beyond it the fitted fields are noise (the mistake is outside the search)
_CLOSE = 10.0
#: a normalisation fit this good (unexplained variance fraction) is the reference's own
_GOOD_FIT = 1e-3


@dataclass
class Correction:
    """The best correction found: the fixes, the corrected block, whether it verifies."""

    fixes: List[FieldFix]
    op: AippOp
    agreements: list
    verified: bool
    #: a line naming a mistake the fields alone do not say (mean and std swapped), or, with no
    #: fields, why none can fix it (a border padded before normalisation)
    note: str = ""


def find_correction(op: AippOp, images: Sequence[np.ndarray], refs: Sequence[np.ndarray]) -> Correction:
    """Search the likely mistakes (module docstring) for a correction that makes them agree."""
    channels = refs[0].shape[0]
    ref_hw = tuple(int(d) for d in refs[0].shape[1:])
    # AIPP's output is the model input's size (ATC); where that is not known,
    # ``check_preprocessing`` gave the op the reference's
    if op.model_hw is not None and ref_hw != tuple(op.model_hw):
        (mh, mw), (rh, rw) = op.model_hw, ref_hw
        return Correction([], op, [], False, (
            f"the reference makes {rw}x{rh} images but the model input is {mw}x{mh}, the size "
            f"AIPP's output must have (ATC refuses another): no field of the file makes the "
            f"reference's; it is another model's pre-processing, or the model is to be "
            f"converted at {rw}x{rh} (input_shape)"))
    src_hw = decode(op, images[0]).shape[:2]
    size_changes, size_why = _crop_size_changes(op, src_hw, refs[0].shape[1:])
    if size_changes is None:
        return Correction([], op, [], False)
    attempts = [size_changes] if size_changes or not op.get("crop") else [{}]
    pad_changes = _padding_changes(op, refs)
    if pad_changes:
        attempts.append({**attempts[0], **pad_changes})
    best: Optional[Correction] = None
    for crop_changes in attempts + [None]:
        if crop_changes is None:  # second pass: locate the crop window
            if not (op.get("crop") or size_changes):
                break
            base = op.with_values(size_changes)
            y, x = _locate_crop(base, images[0], refs[0])
            crop_changes = dict(size_changes, load_start_pos_h=y, load_start_pos_w=x)
        candidate = _best_for_crop(op, crop_changes, images, refs, channels, size_why)
        if best is None or candidate.verified or _worst(candidate) < _worst(best):
            best = candidate
        if candidate.verified:
            break
    if best is not None and not best.verified and _worst(best) > _CLOSE:  # no fields to offer
        return Correction([], op, best.agreements, False,
                          per_channel_border_note(op, images, refs) or best.note)
    if best is not None and not best.verified:
        best.note = best.note or per_channel_border_note(op, images, refs)
    return best


def _worst(c: Correction) -> float:
    return max((a.worst for a in c.agreements), default=float("inf"))


def _best_for_crop(op: AippOp, crop_changes: Dict[str, object], images, refs, channels: int,
                   size_why: str) -> Correction:
    scored = []
    for changes in _discrete_hypotheses(op):
        trial = op.with_values({**crop_changes, **changes})
        fit = _fit_normalisation(trial, images, refs, channels)
        if fit is None:
            continue
        n_changed = sum(1 for k, v in {**crop_changes, **changes}.items() if op.get(k) != v)
        scored.append((fit[0], n_changed, changes, fit[1]))
    if not scored:
        return Correction([], op, [], False)
    best_score = min(s[0] for s in scored)
    near = [s for s in scored if s[0] <= best_score * 1.05 + 1e-12]
    _, _, changes, params = min(near, key=lambda s: (s[1], s[0]))
    norm = _normalisation_changes(op, params)
    all_changes = {**crop_changes, **changes, **norm}
    agreements = _agree_all(op.with_values(all_changes), images, refs)
    if all(a.ok for a in agreements):  # drop fitted changes the verdict does not need
        for group in _groups(norm):
            trial = {k: v for k, v in all_changes.items() if k not in group}
            trial_agreements = _agree_all(op.with_values(trial), images, refs)
            if all(a.ok for a in trial_agreements):
                all_changes, agreements = trial, trial_agreements
        all_changes, agreements, reasons = snap_normalisation(
            op, all_changes, agreements, params, lambda trial: _agree_all(trial, images, refs))
    else:  # not verified: the values stay as fitted
        reasons = fitted_reasons(op, all_changes, params)
    fixes, note = describe_fixes(op, all_changes, size_why, reasons)
    verified = all(a.ok for a in agreements)
    if not verified and best_score < _GOOD_FIT:
        note = note or _unheld_offsets(op, params)
    return Correction(fixes, op.with_values(all_changes), agreements, verified, note)


def _unheld_offsets(op: AippOp, params) -> str:
    """Why a well-fitted normalisation is no correction: the channels whose offset no accepted
    ``mean_chn`` / ``min_chn`` holds (:func:`.ranges.offset_advice`), or ''."""
    out = []
    for c, (a, b) in enumerate(params):
        if a and offset_fields(-b / a) is None:
            out.append(f"channel {c}: the reference's offset is {-b / a:.6g}; "
                       f"{offset_advice(c, -b / a)}")
    if not out:
        return ""
    return ("no AIPP file reproduces the reference's normalisation (ATC refuses mean_chn and "
            "min_chn outside 0..255): " + "; ".join(out))


def _groups(norm: Dict[str, object]) -> List[Tuple[str, ...]]:
    """Fitted changes in removable groups: per channel its offset (mean + min) and its scale."""
    groups = []
    for c in range(4):
        offset = tuple(k for k in (f"mean_chn_{c}", f"min_chn_{c}") if k in norm)
        if offset:
            groups.append(offset)
        if f"var_reci_chn_{c}" in norm:
            groups.append((f"var_reci_chn_{c}",))
    return groups


def _agree_all(op: AippOp, images, refs) -> list:
    return [_agree(op, img, ref) for img, ref in zip(images, refs)]


def _agree(op: AippOp, image, ref):
    return judge_image(op, image, ref)


def _discrete_hypotheses(op: AippOp) -> List[Dict[str, object]]:
    swap = [{}]
    if op.input_format != "YUV400_U8":
        swap.append({"rbuv_swap_switch": not op.get("rbuv_swap_switch")})
    ax = [{}]
    if op.input_format == "XRGB8888_U8":
        ax.append({"ax_swap_switch": not op.get("ax_swap_switch")})
    matrices = [{}]
    if op.input_format == "YUV420SP_U8":
        own = csc_matrix(op).tolist()
        for name, (rows, bias) in YUV2RGB_STANDARDS.items():
            for order in (rows, rows[::-1]):
                m = {k: v for k, v in zip(matrix_keys(), [x for row in order for x in row])}
                m.update({f"input_bias_{i}": bias[i] for i in range(3)})
                if not op.get("csc_switch"):
                    m["csc_switch"] = True
                elif [list(r) for r in order] == own and all(op.get(f"input_bias_{i}") == bias[i]
                                                              for i in range(3)):
                    continue
                matrices.append(m)
    return [{**a, **b, **c} for a, b, c in product(swap, ax, matrices)]


def _fit_normalisation(op: AippOp, images, refs, channels: int):
    """(unexplained variance fraction, [(a, b) per channel]) for ``ref = a * pixel + b``."""
    px, rs = [], []
    for img, ref in zip(images, refs):
        p = pixels_before_normalisation(op, img, exact=True)  # CSC truncation is no offset
        interior = _interior(op, ref)
        if p.shape[-1] != channels or p.shape[:2] != interior.shape[1:]:
            return None
        px.append(p.reshape(-1, channels).astype(np.float64))
        rs.append(np.moveaxis(interior, 0, -1).reshape(-1, channels).astype(np.float64))
    p, r = np.concatenate(px), np.concatenate(rs)
    params, ss_res, ss_tot = [], 0.0, 0.0
    for c in range(channels):
        pc, rc = p[:, c], r[:, c]
        pvar = float(np.var(pc))
        if pvar > 1e-12:
            a = float(np.mean((pc - pc.mean()) * (rc - rc.mean())) / pvar)
        else:  # a flat channel cannot show its scale: keep the file's
            a = float(np.float16(op.get(f"var_reci_chn_{c}")))
        b = float(np.mean(rc - a * pc))
        ss_res += float(np.sum((rc - a * pc - b) ** 2))
        ss_tot += float(np.sum((rc - rc.mean()) ** 2)) + 1e-12
        params.append((a, b))
    return ss_res / ss_tot, params


def _interior(op: AippOp, ref: np.ndarray) -> np.ndarray:
    if not op.get("padding"):
        return ref
    t, b = op.get("top_padding_size"), op.get("bottom_padding_size")
    left, r = op.get("left_padding_size"), op.get("right_padding_size")
    return ref[:, t:ref.shape[1] - b, left:ref.shape[2] - r]


def _normalisation_changes(op: AippOp, params) -> Dict[str, object]:
    out: Dict[str, object] = {}
    for c, (a, b) in enumerate(params):
        old_var = float(op.get(f"var_reci_chn_{c}"))
        new_var = float(f"{a:.5g}")
        if np.float16(new_var) != np.float16(old_var) and abs(new_var - old_var) > 1e-3 * abs(new_var):
            out[f"var_reci_chn_{c}"] = new_var
        if a == 0:
            continue
        total = -b / a
        if abs(total - (float(op.get(f"mean_chn_{c}")) + float(op.get(f"min_chn_{c}")))) <= 0.07:
            continue
        # ATC takes mean_chn and min_chn 0..255 each (:mod:`.ranges`): an offset outside 0..510
        # is no correction (a hypothesis that explains nothing, or a reference no file matches)
        out.update(split_offset(op, c, total, tolerance=0.01) or {})
    return out


def _padding_changes(op: AippOp, refs) -> Dict[str, object]:
    """Padding sizes and value read off the references' constant borders: the sizes when they
    keep the file's totals (the output size) but split them differently, ``padding_value``
    when the border holds another value (padding comes after normalisation, so the value is
    in output units: a letterbox gray of 114 then /255 is 0.447059, not 114); {} otherwise."""
    if not op.get("padding"):
        return {}
    sides = ("top_padding_size", "bottom_padding_size", "left_padding_size", "right_padding_size")
    found = [min(_constant_run(r, axis, reverse) for r in refs)
             for axis, reverse in ((1, False), (1, True), (2, False), (2, True))]
    old = [int(op.get(k)) for k in sides]
    if found[0] + found[1] != old[0] + old[1] or found[2] + found[3] != old[2] + old[3]:
        return {}
    changes: Dict[str, object] = {k: v for k, v, o in zip(sides, found, old) if v != o}
    value = _border_value(refs, found)
    if value is not None and np.float16(value) != np.float16(op.get("padding_value")):
        changes["padding_value"] = float(f"{value:.6g}")
    return changes


def _border_value(refs, sizes) -> Optional[float]:
    """The one value of every reference's border (``sizes``: top, bottom, left, right), None
    without a border or when the references' borders differ."""
    top, bottom, left, right = sizes
    values = set()
    for ref in refs:
        h, w = ref.shape[1:]
        mask = np.zeros((h, w), dtype=bool)
        mask[:top], mask[h - bottom:], mask[:, :left], mask[:, w - right:] = True, True, True, True
        border = ref[:, mask]
        if border.size == 0 or float(np.max(border)) != float(np.min(border)):
            return None
        values.add(float(border.flat[0]))
    return values.pop() if len(values) == 1 else None


def _constant_run(ref: np.ndarray, axis: int, reverse: bool) -> int:
    """How many leading (trailing with ``reverse``) rows (axis 1) or columns (axis 2) of a CHW
    tensor hold one value, the same in every channel."""
    lines = np.moveaxis(ref, axis, 0)
    if reverse:
        lines = lines[::-1]
    n = 0
    for line in lines:
        if line.size == 0 or float(np.max(line)) != float(np.min(line)):
            break
        if n and float(line.flat[0]) != float(lines[0].flat[0]):
            break
        n += 1
    return n


def _crop_size_changes(op: AippOp, src_hw, ref_hw) -> Tuple[Optional[Dict[str, object]], str]:
    """Crop changes forced by the reference's spatial size ({} when the size already fits;
    None when no crop can produce it)."""
    pads_h = pads_w = 0
    if op.get("padding"):
        pads_h = op.get("top_padding_size") + op.get("bottom_padding_size")
        pads_w = op.get("left_padding_size") + op.get("right_padding_size")
    want_h, want_w = ref_hw[0] - pads_h, ref_hw[1] - pads_w
    h, w = src_hw
    if op.get("crop"):
        cur_h, cur_w = op.crop_size("h"), op.crop_size("w")
    else:
        cur_h, cur_w = h, w
    if (cur_h, cur_w) == (want_h, want_w):
        return {}, ""
    if want_h > h or want_w > w or want_h <= 0 or want_w <= 0:
        return None, ""
    changes: Dict[str, object] = {"crop_size_h": want_h, "crop_size_w": want_w}
    if not op.get("crop"):
        changes["crop"] = True
    for axis, size in (("h", h), ("w", w)):  # ATC refuses a crop without the source size
        if not op.get(f"src_image_size_{axis}"):
            changes[f"src_image_size_{axis}"] = size
    return changes, f"the reference is {want_w}x{want_h} before padding"


def _locate_crop(op: AippOp, image, ref) -> Tuple[int, int]:
    """The crop offset whose window best correlates with the reference (any channel order)."""
    full = csc(op, decode(op, image)).astype(np.float64)
    interior = _interior(op, ref)
    h, w = interior.shape[1:]
    # a fixed sample of the window's positions keeps each offset cheap on large images
    n = h * w
    pick = np.sort(np.random.default_rng(0).choice(n, _SAMPLE, replace=False)) if n > _SAMPLE else np.arange(n)
    py, px = pick // w, pick % w
    r = np.moveaxis(interior, 0, -1)[py, px].astype(np.float64)
    rc = r - r.mean(0)
    rn = np.sum(rc * rc, axis=0) + 1e-12
    step = 2 if op.input_format == "YUV420SP_U8" else 1
    ys = range(0, full.shape[0] - h + 1, step)
    xs = range(0, full.shape[1] - w + 1, step)
    stride = step
    while len(ys) * len(xs) > _MAX_OFFSETS:
        stride *= 2
        ys, xs = range(0, full.shape[0] - h + 1, stride), range(0, full.shape[1] - w + 1, stride)

    def score(y, x):
        win = full[y + py, x + px]
        wc = win - win.mean(0)
        cov = wc.T @ rc
        r2 = cov ** 2 / ((np.sum(wc * wc, axis=0) + 1e-12)[:, None] * rn[None, :])
        return float(np.sum(np.max(r2, axis=0)))

    best = max(((score(y, x), y, x) for y in ys for x in xs))
    if stride > step:  # refine around the coarse optimum
        _, by, bx = best
        near = [(score(y, x), y, x)
                for y in range(max(0, by - stride), min(full.shape[0] - h, by + stride) + 1, step)
                for x in range(max(0, bx - stride), min(full.shape[1] - w, bx + stride) + 1, step)]
        best = max(near + [best])
    return best[1], best[2]
