"""The values a fitted normalisation most likely stands for, and what to say about a fit.

The mistake search (:mod:`.mistakes`) solves each channel's ``ref = a * pixel + b`` and so reads
``var_reci_chn = a`` and ``mean_chn + min_chn = -b / a`` off the images. With colour-space
conversion that fit is taken on the exact CSC, not the device's integer matrix with its ``>> 8``
truncation, against a reference that decodes on its own terms (cv2 rounds its fixed-point
BT.601 to nearest): the fit then absorbs that rounding (123.687 for a reference subtracting
123.675; 0.017118 for its 1/58.395). Writing those numbers as "the reference subtracts 123.687"
is false. So before a fitted value is proposed, the values the user more likely meant are
tried, each verified on every image by the caller:

- values recovered from the file's own mistake: the reciprocal of a std written for
  ``var_reci_chn``, ``sqrt`` of a ``1/std**2``, a ``/255`` missing or applied twice, another
  channel's value (an order mix-up), the mean and std swapped (``1/var_reci`` is the mean);
- the standard statistics (:data:`STANDARD_STATS`: ImageNet, CLIP, ``(x - 0.5) / 0.5``), on the
  0..255 scale, in either channel order;
- the fit rounded to a whole pixel level, then to one and two decimals.

A value that is none of these is proposed as fitted, and its comment says that it is fitted and
what it absorbs.
"""
from __future__ import annotations

import math
from decimal import Decimal
from typing import Callable, Dict, List, Optional, Tuple

from .config import AippOp
from .hints import close
from .ranges import offset_fields

#: name -> (means, stds) on the 0..1 scale, channels R, G, B
STANDARD_STATS = {
    "ImageNet": ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    "CLIP": ((0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711)),
    "(x - 0.5) / 0.5": ((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
}

_CHANNEL = "RGB"


def file_offset(op: AippOp, c: int) -> float:
    """``mean_chn_c + min_chn_c`` as the file writes them."""
    return float(op.get(f"mean_chn_{c}")) + float(op.get(f"min_chn_{c}"))


def offset_candidates(op: AippOp, c: int) -> List[Tuple[float, Optional[str]]]:
    """``(offset, why)`` the channel's ``mean_chn + min_chn`` may mean, most likely first;
    ``why`` None where :func:`.hints.why_changed` names the mistake from the values."""
    out: List[Tuple[float, Optional[str]]] = []
    for o in range(op.channels):
        if o != c and f"mean_chn_{o}" in op.values:
            out.append((file_offset(op, o), None))
    old, var = file_offset(op, c), float(op.get(f"var_reci_chn_{c}"))
    standard = [(round(mean * 255, 3), _standard(name, "mean", k, mean, c))
                for name, (means, _) in STANDARD_STATS.items() for k, mean in enumerate(means)]
    derived = [(round(old * 255, 3), _offset_digits(op, c))]  # the mean on the 0..1 scale
    if var:  # mean and std swapped: var_reci is 1/mean, written to a few digits
        derived.append((round(1.0 / var, 3), _digits(var)))
    return out + [(_nearest_standard(v, standard, rel), None) for v, rel in derived] + standard


def scale_candidates(op: AippOp, c: int) -> List[Tuple[float, Optional[str]]]:
    """``(var_reci, why)`` the channel's ``var_reci_chn`` may mean, as :func:`offset_candidates`."""
    out: List[Tuple[float, Optional[str]]] = []
    for o in range(op.channels):
        if o != c and f"var_reci_chn_{o}" in op.values:
            out.append((float(op.get(f"var_reci_chn_{o}")), None))
    old, offset = float(op.get(f"var_reci_chn_{c}")), file_offset(op, c)
    derived = []
    if old:
        derived.append((1.0 / old, _digits(old)))  # the std itself
    if old > 0:
        derived.append((math.sqrt(old), _digits(old) / 2))  # 1/std**2
    derived += [(old * 255, _digits(old)), (old / 255, _digits(old))]  # /255 missing or twice
    if offset:  # mean and std swapped: the offset is the std
        derived.append((1.0 / offset, _offset_digits(op, c)))
    standard = [(short_scale(1.0 / (std * 255)), _standard(name, "std", k, std, c))
                for name, (_, stds) in STANDARD_STATS.items() for k, std in enumerate(stds)]
    return (out + [(_nearest_standard(short_scale(v), standard, rel), None) for v, rel in derived]
            + standard)


def _digits(value: float) -> float:
    """The relative precision a value written with its digits has (0.0086: 0.00005 / 0.0086)."""
    if not value:
        return 0.0
    exponent = Decimal(repr(float(value))).as_tuple().exponent
    return 0.5 * 10.0 ** exponent / abs(value) if isinstance(exponent, int) else 0.0


def _offset_digits(op: AippOp, c: int) -> float:
    """:func:`_digits` of ``mean_chn + min_chn`` (the fraction's digits; a whole level)."""
    total, low = file_offset(op, c), float(op.get(f"min_chn_{c}"))
    if not total:
        return 0.0
    half = 0.5 * 10.0 ** Decimal(repr(low)).as_tuple().exponent if low % 1 else 0.5
    return half / abs(total)


def _nearest_standard(value: float, standard, rel: float) -> float:
    """A value derived from the file's digits (1/0.0086 = 116.279) as the standard constant
    within those digits' precision ``rel`` (116.28), when there is one (at most 1% off)."""
    rel = min(max(rel, 1e-4), 0.01)
    for std_value, _ in standard:
        if close(value, std_value, rel):
            return std_value
    return value


def short_scale(value: float) -> float:
    """A ``var_reci_chn`` as the corrected file writes it (five significant digits)."""
    return float(f"{value:.5g}")


def rounded_offsets(fitted: float) -> List[float]:
    """The fitted offset to a whole level, then to one and two decimals."""
    return [float(round(fitted)), round(fitted, 1), round(fitted, 2)]


def _standard(name: str, kind: str, k: int, value: float, c: int) -> str:
    scaled = f"{value * 255:.6g}"
    source = (f"{name} on the 0..1 scale" if name.startswith("(")
              else f"the {name} {kind} of {_CHANNEL[k]}")
    if kind == "mean":
        return f"the reference subtracts {scaled} = {value} * 255 ({source}) from channel {c}"
    return (f"the reference divides channel {c} by {scaled} = {value} * 255 ({source}); "
            f"var_reci_chn is 1/std")


def fitted_offset_why(c: int, fitted: float) -> str:
    """The comment of an offset no recovered value explains, with CSC (without it the fit is
    exact: the reference's own number)."""
    return (f"fitted from the images, not the reference's number: channel {c}'s offset reads "
            f"{fitted:.3f} through the device's integer CSC (>> 8 truncation), which differs "
            f"from the reference's own YUV->RGB (e.g. cv2's, rounded to nearest) by a fraction "
            f"of a level")


def fitted_scale_why(c: int, fitted: float) -> str:
    """The comment of a ``var_reci_chn`` no recovered value explains, with CSC."""
    return (f"fitted from the images, not the reference's number: channel {c}'s scale reads "
            f"{fitted:.5g} through the device's integer CSC coefficients (n/256), which differ "
            f"from the reference's own YUV->RGB in the third or fourth digit")


def absorbed_note(kind: str, fitted: float, written: float, csc: bool) -> str:
    """Appended to a recovered value's comment when the fit read it differently."""
    if not csc:
        return ""
    shown = f"{fitted:.3f}" if kind == "offset" else f"{fitted:.5g}"
    if shown == (f"{written:.3f}" if kind == "offset" else f"{written:.5g}"):
        return ""
    what = "(>> 8 truncation)" if kind == "offset" else "coefficients (n/256)"
    return (f"; the fit reads {shown}, absorbing the device's integer CSC {what} against the "
            f"reference's own YUV->RGB")


def swapped_mean_std(op: AippOp, offsets: List[float], scales: List[float]) -> bool:
    """Whether the corrected ``offsets`` and ``scales`` (every channel) are the file's with mean
    and std swapped: each new offset is 1/old var_reci and each new var_reci 1/old offset, to
    the file's digits, and the offset moved (a mean equal to the std, 127.5 for
    ``(x - 0.5) / 0.5``, cannot show a swap)."""
    if not offsets or len(offsets) != len(scales):
        return False
    for c, (offset, scale) in enumerate(zip(offsets, scales)):
        old_offset, old_var = file_offset(op, c), float(op.get(f"var_reci_chn_{c}"))
        if not (old_offset and old_var) or close(offset, old_offset, 0.01):
            return False
        if not (close(offset * old_var, 1.0, max(2e-4, 2 * _digits(old_var)))
                and close(scale * old_offset, 1.0, max(2e-4, 2 * _offset_digits(op, c)))):
            return False
    return True


def swap_note(op: AippOp, offsets: List[float]) -> str:
    """The one line naming a mean/std swap (see :func:`swapped_mean_std`)."""
    n = len(offsets)
    stds = ", ".join(f"{file_offset(op, c):g}" for c in range(n))
    means = ", ".join(f"{o:g}" for o in offsets)
    return (f"mean and std are swapped: the file subtracts {stds} (the std) and multiplies by "
            f"1/{means.replace(', ', ', 1/')} (1/mean); the reference subtracts the mean "
            f"{means} and multiplies by 1/std (1/{stds.replace(', ', ', 1/')})")


def snap_normalisation(op: AippOp, changes: Dict[str, object], agreements, params,
                       agree_all: Callable[[AippOp], list]
                       ) -> Tuple[Dict[str, object], list, Dict[str, Tuple[str, str]]]:
    """Fitted offsets and scales replaced by the value the user most likely meant, when that
    verifies too (:mod:`.norm_values`: the file's own values under a named mistake, the
    standard statistics, the fit rounded), then any single field the verdict does not need put
    back. ``agree_all`` judges a corrected block on every image. Returns the changes, their
    agreements and, per field, how to word its comment (:func:`.fix_comments.describe_fixes`):
    ``(source, note)``, ``source`` naming the value ('' where the hint's words do) and ``note``
    what a CSC fit absorbed; a value kept as fitted under CSC gets ``(WHOLE_TEXT, why)``, a
    comment saying that it is fitted."""
    use_csc = bool(op.with_values(changes).get("csc_switch"))
    reasons: Dict[str, Tuple[str, str]] = {}

    def verified(trial):
        trial_agreements = agree_all(op.with_values(trial))
        return trial_agreements if all(a.ok for a in trial_agreements) else None

    for c, (a, b) in enumerate(params):
        mean_k, min_k, var_k = f"mean_chn_{c}", f"min_chn_{c}", f"var_reci_chn_{c}"
        if var_k in changes:
            rest = {k: v for k, v in changes.items() if k != var_k}
            for value, why in scale_candidates(op, c):
                if not close(value, a, 0.005 if use_csc else 1e-3):
                    continue
                trial = dict(rest, **({} if value == op.get(var_k) else {var_k: value}))
                found = verified(trial)
                if found is not None:
                    changes, agreements = trial, found
                    reasons[var_k] = (why or "", absorbed_note("scale", a, value, use_csc))
                    break
            else:
                if use_csc:  # without CSC the fit is exact: the reference's own number
                    reasons[var_k] = (WHOLE_TEXT, fitted_scale_why(c, a))
        if (mean_k in changes or min_k in changes) and a:
            fitted = -b / a
            near = 1.0 if use_csc else 0.07
            rounded = rounded_offsets(fitted) if use_csc else [float(round(fitted))]
            rest = {k: v for k, v in changes.items() if k not in (mean_k, min_k)}
            for total, why in offset_candidates(op, c) + [(r, "round") for r in rounded]:
                if abs(total - fitted) > near:
                    continue
                fields = split_offset(op, c, total)
                if fields is None:  # no accepted mean_chn / min_chn holds it
                    continue
                trial = dict(rest, **fields)
                found = verified(trial)
                if found is not None:
                    changes, agreements = trial, found
                    if why == "round":
                        why = (f"the reference subtracts about {total:g} from channel {c}"
                               if use_csc else "")
                    reasons[mean_k] = reasons[min_k] = (
                        why or "", absorbed_note("offset", fitted, total, use_csc))
                    break
            else:
                if use_csc:
                    reasons[mean_k] = reasons[min_k] = (WHOLE_TEXT, fitted_offset_why(c, fitted))
    for key in [k for k in changes if k.startswith(("mean_chn_", "min_chn_", "var_reci_chn_"))]:
        trial = {k: v for k, v in changes.items() if k != key}
        found = verified(trial)  # the file's own value already agrees: leave it
        if found is not None:
            changes, agreements = trial, found
    return changes, agreements, {k: v for k, v in reasons.items() if k in changes}


def fitted_reasons(op: AippOp, changes: Dict[str, object], params) -> Dict[str, Tuple[str, str]]:
    """The comments of fitted values left as fitted (a correction that does not verify): with
    CSC each says that it is fitted (:func:`snap_normalisation`); without, the hints' words."""
    if not op.with_values(changes).get("csc_switch"):
        return {}
    reasons: Dict[str, Tuple[str, str]] = {}
    for c, (a, b) in enumerate(params):
        if f"var_reci_chn_{c}" in changes:
            reasons[f"var_reci_chn_{c}"] = (WHOLE_TEXT, fitted_scale_why(c, a))
        for key in (f"mean_chn_{c}", f"min_chn_{c}"):
            if key in changes and a:
                reasons[key] = (WHOLE_TEXT, fitted_offset_why(c, -b / a))
    return reasons


#: a ``source`` saying that the note is the whole comment (a value kept as fitted under CSC)
WHOLE_TEXT = "<the note is the whole comment>"


def split_offset(op: AippOp, c: int, total: float,
                 tolerance: float = 0.0005) -> Optional[Dict[str, object]]:
    """Channel ``c``'s offset ``total`` as the ``mean_chn`` / ``min_chn`` fields that change:
    a whole ``mean_chn`` and the fraction in ``min_chn`` (all of it in ``min_chn`` where the file
    keeps the whole offset there), each within the 0..255 ATC accepts (:mod:`.ranges`); a field
    already holding its part (``min_chn`` within ``tolerance``) is left out. None when no pair
    of accepted values holds ``total``."""
    mean_k, min_k = f"mean_chn_{c}", f"min_chn_{c}"
    old_mean, old_min = int(op.get(mean_k)), float(op.get(min_k))
    fields = offset_fields(total, whole_in_min=old_mean == 0 and abs(old_min) >= 1)
    if fields is None:
        return None
    mean, rest = fields
    out: Dict[str, object] = {}
    if mean != old_mean:
        out[mean_k] = mean
    if abs(rest - old_min) > tolerance:
        out[min_k] = rest
    return out
