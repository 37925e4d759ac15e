"""Accuracy metrics of one tensor pair, streamed in chunks with float64 accumulation.

``x`` is the actual (NPU / emulator) tensor, ``y`` the golden one. Formulas and edge cases follow
msaccucmp (CANN ``algorithm_manager/builtin_algorithm/alg_*.py``, docs/formats.md §6.2):

* cosine = Σxy / (‖x‖‖y‖), at most 1 (msaccucmp: 1 for a one-element tensor, see below);
* max_abs = max|x−y|, mean_abs = mean|x−y|, rmse = √mean((x−y)²);
* relative error term rᵢ = |xᵢ/yᵢ − 1| where |yᵢ| > ε (float64 eps), else 0:
  acc_rel = Σr, max_rel = max r, mean_rel = Σr / n;
* rel_l2 (RelativeEuclideanDistance) = √(Σ(x−y)² / Σy²);
* kl = Σ p ln(p/q) of both sides min-max normalised, clamped to float32 eps, made pdfs
  (actual as p); |kl| < ε -> 0;
* std = ``"(mean_x;std_x),(mean_y;std_y)"`` with ``%.3f`` (|v| < 0.001 shown as 0).

Deliberate differences from msaccucmp, each visible in the result:

* NaN and ±Inf are not propagated. Positions where both sides hold the same infinity
  (an attention-mask ``Where``) or both a NaN (its Softmax over a row masked out whole) count
  as equal (docs/design.md: only a NaN/Inf on one side fails); every other non-finite
  position (a NaN or an Inf on one side only, infinities of opposite sign, NaN against Inf)
  is a *mismatch* that fails whatever the threshold. All metrics are computed over the
  positions finite on both sides, and the NaN/+Inf/−Inf counts of each side are kept.
  A golden of exactly ±float32 max (``torch.finfo(torch.float32).min``, Hugging Face's attention
  mask) against the device's infinity of the same sign (or, on a float16 device, its saturated
  value) counts as equal too, and is left out likewise, in the same pass (``stand_in``,
  ``mask_stand_in``).
* A side is zero when every value is exactly 0 (msaccucmp compares the norms with float64
  eps, so a golden of 1e-30 values the device flushed to 0 read "both all zero" and passed).
  A pair that is all zero on both sides gets cosine 1.0 *and* the ``all_zero`` flag with a
  note, never a silent 1.0. Zero on one side only gives cosine NaN (fails) with a note
  naming the side; rel_l2 is +inf when only the golden side is zero (msaccucmp says 0.0,
  which would pass a wrong tensor silently).
* A one-element tensor's cosine tells its sign: 1 for the same sign, -1 for opposite signs,
  NaN for 0 against a value (msaccucmp prints 1 whatever the values, so a loss or score whose
  sign flipped passed); below ``SIGN_FLOOR`` (float16's smallest normal) it is 1, as noise.
* A float16 tensor also gets ``normal_cosine``: its cosine with the positions where both sides
  lie below float16's smallest normal and are close (one sign, within 2**-22 + 1/8 of the
  golden value) compared as equal
  (``tiny_values``); ``cosine`` stays msaccucmp's figure, and judging (``value("cosine")``)
  takes the higher of the two (a detector's probability map all below 2.6e-5 read 0.997705
  from float16's subnormal grid). The scale-free error metrics get the same
  (``normal_rel_l2``, ``normal_max_rel``, ``normal_mean_rel``, ``normal_acc_rel``,
  ``normal_kl``; ``value`` takes the lower): the same map read rel_l2 0.069, kl 0.43, max_rel
  3. max_abs, rmse and mean_abs stay msaccucmp's.
* Against a bool or 64-bit integer golden (indices, class ids, counts, masks: ``is_exact``)
  an integer or bool tensor is also counted for exact equality (``exact``, ``unequal``): one
  differing value fails whatever the metric (an ArgMax index that flipped in one row of 64
  kept cosine 0.998). 32-bit integers (accumulators) and 8/16-bit ones (quantised data) are
  judged by the metrics as floats are.
* Two 8-bit integer tensors of the same dtype (quantised codes) get their cosine around the
  golden's mean, so a zero point does not hide a wrong op (``_centered_cosine``), when the
  golden spreads at least one code around it (``_golden_spread``).
* Inputs are compared in float64 semantics (fp16 vs fp32 is not squeezed through float32);
  bool pairs are compared as 0/1 and, as in msaccucmp, relative errors and KL are not
  applicable to them (``not_applicable``).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import Dict, Optional, Tuple

import numpy as np

from .kernel import DEFAULT_CHUNK, PairAccumulator
from .pair_sums import accumulate
from . import mask_stand_in, tiny_values
from .metric_names import HIGHER_IS_BETTER, JUDGEABLE, METRIC_COLUMNS  # noqa: F401

NAN = float("nan")


@dataclass(frozen=True)
class TensorMetrics:
    """Metric values of one tensor pair plus what is needed to judge them honestly."""

    cosine: float = NAN
    max_abs: float = NAN
    max_rel: float = NAN
    mean_rel: float = NAN
    acc_rel: float = NAN
    rel_l2: float = NAN
    rmse: float = NAN
    mean_abs: float = NAN
    kl: float = NAN
    std: str = "NaN"
    size: int = 0  # positions compared (element count)
    finite: int = 0  # positions finite on both sides (the ones the numbers are computed on)
    nan_actual: int = 0
    posinf_actual: int = 0
    neginf_actual: int = 0
    nan_golden: int = 0
    posinf_golden: int = 0
    neginf_golden: int = 0
    matched_inf: int = 0  # same ±inf at the same position on both sides: equal
    matched_nan: int = 0  # NaN at the same position on both sides: equal
    #: golden ±float32 max (a mask's stand-in for an infinity) against the device's infinity of
    #: the same sign or a float16 device's saturated value: equal, left out (``mask_stand_in``)
    stand_in: int = 0
    mismatch: int = 0  # other non-finite positions: always a failure
    exact: bool = False  # integer/bool values, counted for exact equality
    unequal: int = 0  # of those, positions whose values differ: a failure
    all_zero: bool = False  # both sides all zero
    actual_zero: bool = False  # the actual side is all zero (finite part)
    golden_zero: bool = False
    max_abs_actual: float = NAN  # max |x| over finite positions
    max_abs_golden: float = NAN
    #: ‖actual‖ / ‖golden‖ over the finite positions (the scale guard judges it; cosine cannot)
    norm_ratio: float = NAN
    #: the cosine with float16's subnormal-range positions compared as equal (``tiny_values``;
    #: None: not worked out, or no such position differs)
    normal_cosine: Optional[float] = None
    tiny_equal: int = 0  # positions that rule counted as equal
    #: ``norm_ratio`` with those positions as equal (the scale guard's figure beside a judged
    #: ``normal_*`` one; None: not worked out, or a compare.json written before it was)
    normal_norm_ratio: Optional[float] = None
    #: the scale-free error metrics with the same positions as equal, where lower than the
    #: plain figure (``tiny_values.judged_errors``; None: not worked out, or not lower)
    normal_rel_l2: Optional[float] = None
    normal_max_rel: Optional[float] = None
    normal_mean_rel: Optional[float] = None
    normal_acc_rel: Optional[float] = None
    normal_kl: Optional[float] = None
    not_applicable: Tuple[str, ...] = ()
    notes: Tuple[str, ...] = field(default=())
    #: each sample's two values, where axis 0 is a known batch axis and each sample holds one
    #: value (``sample_values.BatchSamples``: judged sample by sample); None: not such a tensor
    samples: Optional["BatchSamples"] = None  # noqa: F821

    def value(self, metric: str) -> float:
        """The judged value of a metric by name (``cosine``, ``rel_l2``, ...): the field itself,
        except that the cosine and the scale-free error metrics take their figure with
        float16's close subnormal positions as equal (``normal_<metric>``) where that is the
        better one (``tiny_values``)."""
        if metric not in JUDGEABLE:
            raise KeyError(f"unknown metric {metric!r}; known: {', '.join(JUDGEABLE)}")
        plain = getattr(self, metric)
        normal = getattr(self, "normal_" + metric, None)
        if normal is not None and (normal > plain if metric in HIGHER_IS_BETTER
                                   else normal < plain):  # False against a NaN
            return normal
        return plain

    @property
    def nonfinite_actual(self) -> int:
        return self.nan_actual + self.posinf_actual + self.neginf_actual

    @property
    def nonfinite_golden(self) -> int:
        return self.nan_golden + self.posinf_golden + self.neginf_golden

    def to_dict(self) -> Dict[str, object]:
        """Plain JSON values: NaN -> None, ±inf -> "inf"/"-inf" (strict JSON has neither)."""
        d = asdict(self)
        for k, v in d.items():
            if isinstance(v, float):
                d[k] = encode_float(v)
        d["not_applicable"] = list(self.not_applicable)
        d["notes"] = list(self.notes)
        if self.samples is None:
            del d["samples"]
        else:
            d["samples"] = self.samples.to_dict()
        return d

    @staticmethod
    def from_dict(d: Dict[str, object]) -> "TensorMetrics":
        d = dict(d)
        d["not_applicable"] = tuple(d.get("not_applicable", ()))
        d["notes"] = tuple(d.get("notes", ()))
        if d.get("samples") is not None:
            from .sample_values import BatchSamples

            d["samples"] = BatchSamples.from_dict(d["samples"])
        for k in JUDGEABLE + ("max_abs_actual", "max_abs_golden", "norm_ratio"):
            d[k] = decode_float(d.get(k))
        return TensorMetrics(**d)


def encode_float(v: float):
    if math.isnan(v):
        return None
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def decode_float(v) -> float:
    return NAN if v is None else float(v)


def _flat(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    return a.reshape(-1) if a.flags.c_contiguous else np.ascontiguousarray(a).reshape(-1)


def compute_metrics(actual: np.ndarray, golden: np.ndarray, *, chunk_size: int = DEFAULT_CHUNK,
                    kl: bool = True) -> TensorMetrics:
    """All metrics of ``actual`` against ``golden`` (same element count; compared flattened).

    Works chunk by chunk over the two arrays, so memory maps are read once per pass and only
    ``chunk_size``-element buffers are allocated. ``kl=False`` skips the second pass that the
    KL divergence needs (its value is then NaN and listed in ``not_applicable``). A finite
    float16/float32 pair takes compiled passes instead (one, and one more for KL) where the
    optional extension is built (``pair_sums``).
    """
    x, y = _flat(actual), _flat(golden)
    if x.size != y.size:
        raise ValueError(f"element counts differ: {x.size} vs {y.size}")
    exact = is_exact(y.dtype) and (x.dtype == np.bool_ or x.dtype.kind in "iu")
    unequal = sum(int(np.count_nonzero(x[s:s + chunk_size] != y[s:s + chunk_size]))
                  for s in range(0, x.size, chunk_size)) if exact else 0
    m, sums = _metrics(x, y, chunk_size=chunk_size, kl=kl)
    if not exact:
        return _with_tiny_rule(m, x, y, chunk_size, sums)
    kind = "bool" if y.dtype == np.bool_ else "integer"
    note = (f"{kind} values compared exactly: {unequal} of {m.size} differ" if unequal else
            f"{kind} values compared exactly: all equal")
    return replace(m, exact=True, unequal=unequal, notes=m.notes + (note,))


def _with_stand_ins(m: TensorMetrics, acc: PairAccumulator) -> TensorMetrics:
    """``m`` with the positions the pass left out as the mask stand-in (the golden's ±float32
    max against the device's infinity of the same sign or float16's saturated value:
    ``mask_stand_in``) counted as equal, the device's infinities there kept in its counts, and
    a note saying so."""
    found = mask_stand_in.StandIns(acc.dropped_neginf, acc.dropped_posinf,
                                   acc.dropped - acc.dropped_neginf - acc.dropped_posinf)
    return replace(m, stand_in=found.total, posinf_actual=m.posinf_actual + found.pos_inf,
                   neginf_actual=m.neginf_actual + found.neg_inf,
                   notes=(mask_stand_in.stand_in_note(found),) + m.notes)


def _with_tiny_rule(m: TensorMetrics, x: np.ndarray, y: np.ndarray, chunk_size: int,
                    sums: Tuple[float, float, float]) -> TensorMetrics:
    """``m`` with the figures of the rule of ``tiny_values`` where it applies (``sums``: the
    pair's Σx², Σy², Σxy): ``normal_cosine``, and the scale-free error metrics where the
    positions it counts as equal carry enough of their sums to move them."""
    if not tiny_values.applies(x.dtype, y.dtype, m.cosine, m.size):
        return m
    held = tiny_values.float16_values(x, chunk_size)  # a float32 actual: float16's values only
    if held is None:
        return m
    found = tiny_values.normal_cosine(held, y, chunk_size, sums, m.finite)
    if not found.equal:
        return m
    fields, notes = {"tiny_equal": found.equal}, []
    if held is not x:
        notes.append(tiny_values.FLOAT32_HELD_NOTE)
    if not math.isnan(found.cosine):
        fields["normal_cosine"] = found.cosine
        fields["normal_norm_ratio"] = found.norm_ratio
        notes.append(tiny_values.note(m.cosine, found.cosine, found.equal))
    if tiny_values.material(found, m.rel_l2 ** 2 * sums[1], m.acc_rel, m.max_rel):
        kl = "kl" not in m.not_applicable and math.isfinite(m.kl)
        lower = {k: v for k, v in tiny_values.judged_errors(held, y, chunk_size, kl).items()
                 if v < getattr(m, k)}
        fields.update((f"normal_{k}", v) for k, v in lower.items())
        if lower:
            notes.append(tiny_values.errors_note(m, lower, found.equal))
    return replace(m, **fields, notes=m.notes + tuple(notes))


def is_exact(golden_dtype) -> bool:
    """Whether a golden tensor of this dtype holds indices, ids, counts or masks, compared
    exactly: bool and 64-bit integers (ONNX's ArgMax, TopK, NonZero, Shape give int64; a device
    may hold them as int32). A 32-bit integer golden is left to the metrics: it is also an
    accumulator (MatMulInteger, ConvInteger), which a 1-step change of a quantised input moves
    by a weight's size (a user trial of quantised models), as are 8/16-bit quantised data."""
    dtype = np.dtype(golden_dtype)
    return dtype == np.bool_ or (dtype.kind in "iu" and dtype.itemsize == 8)


def _metrics(x: np.ndarray, y: np.ndarray, *, chunk_size: int,
             kl: bool) -> Tuple[TensorMetrics, Tuple[float, float, float]]:
    """The metrics, and the sums Σx², Σy², Σxy they came from, in one pass (and one more for KL
    where it cannot be folded in); the mask stand-in's positions (``mask_stand_in``) are left
    out as the pass meets them (the element count stays the whole tensor's)."""
    is_bool = x.dtype == np.bool_ and y.dtype == np.bool_
    drop = None
    if mask_stand_in.golden_may_hold(y.dtype):
        drop = partial(mask_stand_in.stand_in_positions, f16_device=x.dtype == np.float16)
    if x.dtype == np.bool_:
        x = x.view(np.uint8)
    if y.dtype == np.bool_:
        y = y.view(np.uint8)
    n = x.size
    centered = x.dtype.kind in "iu" and x.dtype.itemsize == 1 and y.dtype == x.dtype
    want_kl = kl and not is_bool
    # a float16 device may hold the stand-in saturated, a finite value: where the (then finite)
    # golden reaches float32 max, the min/max of the compiled pass or of ``prepare`` take in
    # positions the rule leaves out, so the pass starts again without them
    saturable = drop is not None and x.dtype == np.float16
    acc = PairAccumulator(chunk_size, kl=want_kl, drop=drop)
    if not is_bool and accumulate(acc, x, y):  # compiled passes (pair_sums): all finite
        if not (saturable and _reaches_f32_max(acc)):
            return (_finish(acc, n, is_bool=False, with_kl=want_kl, kl_requested=kl),
                    (acc.sxx, acc.syy, acc.sxy))
        acc = PairAccumulator(chunk_size, kl=want_kl, drop=drop)
    else:
        acc.prepare(x, y)
        if saturable and _reaches_f32_max(acc):
            acc = PairAccumulator(chunk_size, kl=want_kl, drop=drop)
    with np.errstate(all="ignore"):  # overflow/NaN are detected and handled explicitly
        for s in range(0, n, chunk_size):
            acc.update(x[s:s + chunk_size], y[s:s + chunk_size])
        if acc.needs_second_pass:
            acc.start_kl()
            for s in range(0, n, chunk_size):
                acc.update_kl(x[s:s + chunk_size], y[s:s + chunk_size])
    want_kl = want_kl and acc.finite > 0
    m = _finish(acc, n, is_bool=is_bool, with_kl=want_kl, kl_requested=kl,
                centered=centered and not is_bool)
    return (_with_stand_ins(m, acc) if acc.dropped else m), (acc.sxx, acc.syy, acc.sxy)


def _reaches_f32_max(acc: PairAccumulator) -> bool:
    """Whether the golden's min/max the accumulator holds reach ±float32 max (False where it
    holds none: -inf and inf as set)."""
    return max(-acc.ymin, acc.ymax) >= mask_stand_in.F32_MAX


def _std_text(acc: PairAccumulator) -> str:
    vals = []
    for mom in (acc.mx, acc.my):
        mean, std = (mom.mean, mom.std) if mom.n else (NAN, NAN)
        vals += [0.0 if abs(mean) < 0.001 else mean, 0.0 if abs(std) < 0.001 else std]
    return "(%.3f;%.3f),(%.3f;%.3f)" % tuple(vals)


#: below this a one-element tensor's sign is noise: float16's smallest normal (2**-14), where a
#: mean of normalised values computed in float16 lands either side of 0
SIGN_FLOOR = 2.0 ** -14


def _golden_spread(acc: PairAccumulator, m: int) -> float:
    """The golden's variance around its mean, in codes²: below 1 (a region at its zero point,
    a few codes 1 away) centring would leave nothing but rounding noise to compare, and the
    plain cosine is kept (a review: one code of 129 among 128s read cosine NaN)."""
    mu = acc.my.mean
    return max(0.0, acc.syy / m - mu * mu)


def _centered_cosine(acc: PairAccumulator, m: int) -> Tuple[float, float]:
    """(cos(x - μ, y - μ), ‖x - μ‖ / ‖y - μ‖) with μ the golden's mean over the finite
    positions, from the sums: quantised codes carry a zero point (uint8's 128) that dominates
    their plain cosine, so an op whose codes all became 128 read 0.9947 against codes spread
    ±13 around it; and their plain norm ratio, which the scale guard judges, so codes at twice
    the golden's scale around 128 read 1.00 and passed (a quantisation trial)."""
    mu = acc.my.mean
    sx, sy = acc.mx.mean * m, mu * m
    cxy = acc.sxy - mu * (sx + sy) + m * mu * mu
    cxx = acc.sxx - 2 * mu * sx + m * mu * mu
    cyy = acc.syy - 2 * mu * sy + m * mu * mu
    if cyy <= 0.0:  # a constant golden: nothing around its mean to compare with
        return (1.0, 1.0) if cxx <= 0.0 else (NAN, math.inf)
    if cxx <= 0.0:
        return NAN, 0.0
    return max(-1.0, min(cxy / math.sqrt(cxx * cyy), 1.0)), math.sqrt(cxx / cyy)


def _compared_part(m: int, size: int) -> str:
    """Where a zero side is zero: "" for the whole tensor, else the positions compared (a mask
    whose other positions hold -inf or -3.4e38 read "both tensors are all zero")."""
    if m == size:
        return ""
    return f" at the {m} of {size} positions compared (the other {size - m}: as noted before)"


def _finish(acc: PairAccumulator, size: int, *, is_bool: bool, with_kl: bool,
            kl_requested: bool, centered: bool = False) -> TensorMetrics:
    notes = []
    counts = dict(
        size=size, finite=acc.finite,
        nan_actual=acc.nan[0], posinf_actual=acc.posinf[0], neginf_actual=acc.neginf[0],
        nan_golden=acc.nan[1], posinf_golden=acc.posinf[1], neginf_golden=acc.neginf[1],
        matched_inf=acc.matched_inf, matched_nan=acc.matched_nan, mismatch=acc.mismatch,
    )
    if acc.mismatch:
        notes.append(f"{acc.mismatch} NaN/Inf position(s) differ between the sides")
    if acc.matched_inf:
        notes.append(f"{acc.matched_inf} position(s) hold the same infinity on both sides "
                     "(compared as equal)")
    if acc.matched_nan:
        notes.append(f"{acc.matched_nan} position(s) hold NaN on both sides (compared as equal)")
    not_applicable = ("max_rel", "mean_rel", "acc_rel", "kl") if is_bool else ()
    if is_bool:
        notes.append("bool tensors: compared as 0/1; relative errors and KL do not apply")
    if size == 0:
        return TensorMetrics(cosine=1.0, max_abs=0.0, max_rel=0.0, mean_rel=0.0, acc_rel=0.0,
                             rel_l2=0.0, rmse=0.0, mean_abs=0.0, kl=0.0, std="NaN",
                             not_applicable=not_applicable,
                             notes=tuple(notes) + ("zero-size tensors: nothing to compare",),
                             **counts)
    m = acc.finite
    if m == 0:
        if acc.mismatch == 0:  # every position the same infinity or NaN on both sides
            return TensorMetrics(cosine=1.0, max_abs=0.0, max_rel=0.0, mean_rel=0.0,
                                 acc_rel=0.0, rel_l2=0.0, rmse=0.0, mean_abs=0.0, kl=0.0,
                                 not_applicable=not_applicable, notes=tuple(notes), **counts)
        return TensorMetrics(not_applicable=not_applicable,
                             notes=tuple(notes) + ("no position is finite on both sides",),
                             **counts)
    nx, ny = math.sqrt(acc.sxx), math.sqrt(acc.syy)
    around: Optional[float] = None  # the norm ratio around the golden's mean (8-bit codes)
    # zero means every value is 0 (msaccucmp's ‖·‖ <= eps called 1e-30 values zero)
    actual_zero = max(-acc.xmin, acc.xmax) == 0.0
    golden_zero = max(-acc.ymin, acc.ymax) == 0.0
    all_zero = actual_zero and golden_zero
    if size == 1:
        x1, y1 = acc.xmax, acc.ymax
        if max(abs(x1), abs(y1)) < SIGN_FLOOR:  # float16 cannot tell such a sign: noise
            cosine = 1.0
        elif (x1 == 0.0) != (y1 == 0.0):
            cosine = NAN
        else:
            cosine = -1.0 if (x1 < 0) != (y1 < 0) else 1.0
        notes.append("one-element tensor: cosine tells only the sign (msaccucmp prints 1), "
                     f"below {SIGN_FLOOR:.3g} not even that; judge its size by an error metric")
    elif all_zero:
        cosine = 1.0
        notes.append("both tensors are all zero" + _compared_part(m, size))
    elif actual_zero:
        cosine = NAN
        notes.append(f"the actual tensor is all zero{_compared_part(m, size)}, the golden one "
                     "is not: cosine undefined")
    elif golden_zero:
        cosine = NAN
        notes.append(f"the golden tensor is all zero{_compared_part(m, size)}, the actual one "
                     "is not: cosine undefined")
    elif nx == 0.0 or ny == 0.0:  # values so small their squares underflow float64
        cosine = NAN
        notes.append("values below 1e-154: their squares underflow, cosine undefined")
    elif centered and _golden_spread(acc, m) >= 1.0:
        cosine, around = _centered_cosine(acc, m)
        notes.append("8-bit integer codes: cosine and norm ratio taken around the golden's mean "
                     "(a zero point such as uint8's 128 kept any tensor's plain cosine and "
                     "scale near 1)")
    else:
        cosine = max(-1.0, min(acc.sxy / (nx * ny), 1.0))
    if golden_zero:
        rel_l2 = 0.0 if actual_zero else math.inf
    elif ny == 0.0:
        rel_l2 = NAN
    else:
        rel_l2 = math.sqrt(acc.sdd / acc.syy)
    rel = (NAN, NAN, NAN) if is_bool else (acc.max_rel, acc.sum_rel / m, acc.sum_rel)
    if with_kl:
        kl = acc.kl()
    else:
        kl = NAN
        if kl_requested is False and "kl" not in not_applicable:
            not_applicable = not_applicable + ("kl",)
    return TensorMetrics(
        cosine=cosine, max_abs=acc.max_abs, max_rel=rel[0], mean_rel=rel[1], acc_rel=rel[2],
        rel_l2=rel_l2, rmse=math.sqrt(acc.sdd / m), mean_abs=acc.sum_abs / m, kl=kl,
        std=_std_text(acc), all_zero=all_zero, actual_zero=actual_zero,
        golden_zero=golden_zero,
        max_abs_actual=max(-acc.xmin, acc.xmax), max_abs_golden=max(-acc.ymin, acc.ymax),
        norm_ratio=around if around is not None else (
            nx / ny if ny > 0.0 else (NAN if nx == 0.0 else math.inf)),
        not_applicable=not_applicable, notes=tuple(notes), **counts)


def format_metric(value: Optional[float]) -> str:
    """msaccucmp's number format: ``'{:.6f}'``, ``NaN`` for a missing or NaN value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "NaN"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return "{:.6f}".format(value)
