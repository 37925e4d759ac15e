"""The outcome of a dataset check, the operator traced for a flipped sample, and the failure.

``DatasetResult.passed`` iff ``drop <= max_drop`` (both figures finite), the drop being how much
worse the device is: ``reference - device`` for a figure where higher is better (accuracy, mAP,
the default), ``device - reference`` for one where lower is (``higher_is_better=False``: a loss,
an error rate). A failure
is ``DatasetFailure``, an ``AccuracyFailure`` (so pytest shows it as the plugin's failure
block) whose message names the metric, both values, the drop against ``max_drop``, the samples
whose top-1 flipped and, for the first of them, the first operator below the per-operator
threshold; ``.result`` / ``.verdict`` hold that sample's comparison (None when not traced).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

from ..report.assertion import AccuracyFailure
from .figure_decimals import apart_decimals, figure_text

#: sample ids listed in a message before "... and N more"
LISTED = 20


@dataclass(frozen=True)
class Culprit:
    """The first operator below the threshold when one flipped sample is dumped on both sides;
    ``op`` is None when no operator fails (``note`` says what was found instead)."""

    sample: str
    op: Optional[str] = None
    op_type: str = ""
    reason: str = ""
    value: Optional[float] = None
    order: Optional[int] = None
    note: str = ""
    #: why this sample was traced: the first flipped one, the first a top-k metric lost (right
    #: in the reference, wrong on the device) where that is another, (map) the one whose
    #: scores moved most, or (a callable) the first NaN/Inf one or the one the metric fails
    #: on alone (``CallableMetric.decisive``)
    role: str = "first flipped sample"
    #: what to do before blaming ``op`` ("next step: ..."; an AIPP model failing at its first
    #: operator: the pre-processing), as ``check_accuracy`` says it; "" for none
    next_step: str = ""
    #: the ``report.hints.Hint`` ``next_step`` renders, for a caller of another spelling (the
    #: dataset command prints its modes as commands)
    hint: object = field(default=None, compare=False, repr=False)

    def line(self) -> str:
        if self.op is None:
            return f"{self.role} {self.sample}: {self.note}"
        kind = f" ({self.op_type})" if self.op_type else ""
        return (f"{self.role} {self.sample}: first operator below the threshold: "
                f"{self.op}{kind} #{self.order}, {self.reason}")


@dataclass
class DatasetResult:
    """Figures of one dataset check; ``flipped`` lists the rows whose top-1 the device changed
    (sample ids; ``id[r]`` for row ``r`` of a batched sample). For a sequence output
    (``positions`` > 1 per row, the largest; ``positions_min`` the smallest where samples of
    several shapes hold several) a row flips when any position's top-1 does;
    ``flipped_positions`` counts the positions, of ``positions_total``. ``untracked`` says why
    flips were not tracked
    (a callable metric on an output of no single class axis)."""

    metric: str
    reference: float
    device: float
    max_drop: float
    samples: int
    rows: int
    flipped: Tuple[str, ...] = ()
    nonfinite: Tuple[str, ...] = ()
    nonfinite_reference: Tuple[str, ...] = ()
    model: str = "model"
    mode: str = "default"
    output: Optional[str] = None
    reference_cached: int = 0
    reference_runs: int = 0
    culprit: Optional[Culprit] = None
    positions: int = 1
    positions_min: int = 0  # 0: as positions
    positions_total: int = 0  # 0: rows x positions
    flipped_positions: int = 0
    untracked: str = ""
    #: a callable metric of a model of several outputs: its outputs, each of which ``output=``
    #: may name to track flips on it
    track_outputs: Tuple[str, ...] = ()
    #: how those options are spelled, one per output (default ``output='name'``; the dataset
    #: command gives its own command lines)
    track_lines: Tuple[str, ...] = ()
    #: a callable metric: the outputs holding the NaN/Inf of ``nonfinite`` (its samples);
    #: empty where ``nonfinite`` names rows of the output flips were tracked on
    nonfinite_outputs: Tuple[str, ...] = ()
    #: top1/top5: the rows the metric lost (the label in the reference's top k, not in the
    #: device's), in sample order; a top5 loss need not flip the top-1
    lost: Tuple[str, ...] = ()
    #: map, failed, no sample changed: (sample, reference score, device score) of the detection
    #: whose score moved most (``detection.MeanAP.moved``), the sample traced
    moved: Optional[Tuple[str, float, float]] = None
    #: False for a figure where lower is better (a loss): the drop is then device - reference
    higher_is_better: bool = True
    #: the conversions the device model made, one per input shape where a dimension was left
    #: open (``PerShapeDeviceModel``): each is an ATC run on a device, minutes, said not hidden
    conversions: int = 1
    #: how the samples were read where not along the output's axis 0 (``batch_axis.note``)
    layout_note: str = ""
    extra: Dict[str, object] = field(default_factory=dict)

    @property
    def drop(self) -> float:
        """How much worse the device's figure is than the reference's (<= 0: as good or better)."""
        diff = self.reference - self.device
        return diff if self.higher_is_better else -diff

    @property
    def passed(self) -> bool:
        if not (math.isfinite(self.reference) and math.isfinite(self.device)):
            return False
        return self.drop <= self.max_drop + 1e-12

    def figures(self) -> str:
        """'top1 0.9000 on the device vs 1.0000 reference (drop 0.1000 > max_drop 0.0100)';
        a lower-is-better figure: '... (lower is better: rise 5.9385 > max_drop 0.0100)'.
        No figure prints as another it differs from: a drop other than 0 never prints as
        0.0000 (nor -0.0000), a failing drop never as its max_drop, and a max_drop those
        decimals would round prints as given ('rise 0.00003 > max_drop 1e-06', not 0.00000)."""
        sign = "<=" if self.passed else ">"
        what = "drop" if self.higher_is_better else "lower is better: rise"
        drop = 0.0 if abs(self.drop) <= 1e-12 else self.drop  # (float sums' residue is none)
        d = apart_decimals((self.device, self.reference), (drop, 0.0),
                           *([] if self.passed else [(drop, self.max_drop)]))
        f = figure_text
        return (f"{self.metric} {f(self.device, d)} on the device vs {f(self.reference, d)} "
                f"reference ({what} {f(drop, d)} {sign} max_drop {bound_text(self.max_drop, d)})")

    def positions_range(self, sep: str = " to ") -> str:
        """The positions per row: '40', or '8 to 40' where the samples' shapes vary."""
        low = self.positions_min or self.positions
        return str(self.positions) if low == self.positions else f"{low}{sep}{self.positions}"

    def all_positions(self) -> int:
        """How many positions the rows hold together."""
        return self.positions_total or (self.rows or self.samples) * self.positions

    def summary_line(self) -> str:
        flips = (", flips not tracked" if self.untracked else
                 f", {len(self.flipped)} flipped" if self.flipped else "")
        return (f"{self.model} [{self.mode}] {self.figures()}, {self.samples} samples{flips}"
                + ("" if self.passed else " FAILED"))

    def message(self) -> str:
        verdict = "PASSED" if self.passed else "FAILED"
        rows = f" ({self.rows} rows)" if self.rows != self.samples else ""
        lines = [f"dataset accuracy {verdict}: {self.figures()}",
                 f"model {self.model}, mode {self.mode}, {self.samples} samples{rows}"
                 + (f", output {self.output!r}" if self.output else "")
                 + (f", converted at {self.conversions} input shapes (one conversion each: "
                    f"give every sample one shape to convert once)"
                    if self.conversions > 1 else "")
                 + f"; reference: {self.reference_runs} run, "
                   f"{self.reference_cached} from the cache"]
        if self.layout_note:
            lines.append(self.layout_note)
        total = self.rows or self.samples
        what = "detections changed" if self.metric == "map" else "flipped top-1"
        seq = ""
        if self.positions > 1:
            unit = "sample" if self.rows == self.samples else "row"
            seq = (f"; a {unit} flips when any of its {self.positions_range()} positions does, "
                   f"{self.flipped_positions} of {self.all_positions()} positions flipped")
        if self.untracked:
            lines.append(f"{what}: not tracked ({self.untracked})")
            if not self.track_outputs and self.metric != "map" and self.output is None:
                lines.append("none of its outputs has a single class axis whose top-1 output= "
                             "could track")
            if self.track_outputs:
                lines.append("to track the top-1 of one output of class scores (the top-1 of "
                             "boxes or other values tells nothing), and trace the first sample "
                             "it flips to an operator, name it:")
                lines += [f"  {line}" for line in self.track_lines
                          or [f"output={name!r}" for name in self.track_outputs]]
        elif self.flipped:
            lines.append(f"{what} ({len(self.flipped)} of {total}{seq}): {_ids(self.flipped)}")
        elif self.moved is not None:
            sample, ref, dev = self.moved
            lines.append(f"{what}: no box nor top detection, but scores did: the most in sample "
                         f"{sample} ({ref:.4f} reference, {dev:.4f} device; mAP ranks the "
                         f"detections of all samples by score)")
        elif self.output is not None or self.metric == "map":
            lines.append(f"{what}: none" + (f" ({seq[2:]})" if seq else ""))
        if self.lost:
            lines.append(f"{self.metric} lost ({len(self.lost)} of {total}, right in the "
                         f"reference, wrong on the device): {_ids(self.lost)}")
        if self.nonfinite and self.nonfinite_outputs:  # a callable metric read them as it does
            lines.append(f"NaN/Inf in the device outputs {', '.join(self.nonfinite_outputs)} "
                         f"(NaN, or an Inf the reference lacks there) of "
                         f"{len(self.nonfinite)} samples: {_ids(self.nonfinite)}")
        elif self.nonfinite:
            how = ("a detection holding NaN/Inf matches nothing" if self.metric == "map" else
                   "a row with NaN counts as wrong; an Inf the reference lacks is scored as a "
                   "value")
            lines.append(f"NaN/Inf in the device outputs ({how}) "
                         f"({len(self.nonfinite)}): {_ids(self.nonfinite)}")
        if self.nonfinite_reference:
            lines.append(f"NaN in the reference outputs ({len(self.nonfinite_reference)}): "
                         f"{_ids(self.nonfinite_reference)}")
        if self.culprit is not None:
            lines.append(self.culprit.line())
            if self.culprit.next_step:
                lines.append(self.culprit.next_step)
        elif not self.passed and self.untracked:
            lines.append("top-1 flips were not tracked, so no operator was traced")
        elif not self.passed and not self.flipped and not self.lost:
            lines.append("no sample's " + ("detections" if self.metric == "map" else "top-1")
                         + " changed, so no operator was traced")
        return "\n".join(lines)

    def properties(self) -> Dict[str, str]:
        """Flat string figures for JUnit properties and reports."""
        props = {"dataset_metric": self.metric, "dataset_reference": f"{self.reference:.6f}",
                 "dataset_device": f"{self.device:.6f}", "dataset_drop": f"{self.drop:.6f}",
                 "dataset_max_drop": f"{self.max_drop:.6f}", "dataset_samples": str(self.samples),
                 "dataset_flipped": ("not tracked" if self.untracked
                                     else str(len(self.flipped))),
                 "dataset_passed": "true" if self.passed else "false"}
        if not self.higher_is_better:  # a loss: the drop is device - reference
            props["dataset_higher_is_better"] = "false"
        if self.conversions > 1:
            props["dataset_conversions"] = str(self.conversions)
        if self.positions > 1:
            props["dataset_positions"] = self.positions_range("-")
            props["dataset_flipped_positions"] = str(self.flipped_positions)
        if self.culprit is not None and self.culprit.op:
            props["dataset_first_failing_op"] = self.culprit.op
        return props


def to_record(result: DatasetResult, nodeid: str,
              report: Optional[str] = None) -> Dict[str, object]:
    """The plain, JSON-able figures the session summary keeps (and xdist workers send)."""
    culprit = result.culprit
    return {"nodeid": nodeid, "model": result.model, "mode": result.mode, "metric": result.metric,
            "reference": result.reference, "device": result.device, "max_drop": result.max_drop,
            "higher_is_better": result.higher_is_better,
            "samples": result.samples, "flipped": len(result.flipped), "passed": result.passed,
            "untracked": bool(result.untracked),
            "first_op": culprit.op if culprit is not None else None,
            "first_sample": culprit.sample if culprit is not None else None, "report": report}


class DatasetFailure(AccuracyFailure):
    """A dataset check failed: ``.dataset`` is the ``DatasetResult``; ``.result``/``.verdict``
    the comparison of the first flipped sample's dumps (None when it was not traced)."""

    def __init__(self, dataset: DatasetResult, compare_result=None, verdict=None):
        super().__init__(dataset.message(), compare_result, verdict)
        self.dataset = dataset


def bound_text(value: float, decimals: int) -> str:
    """``max_drop`` in ``decimals`` decimals where four print it exactly ('0.0100'), else as
    given ('1e-06', which the figures' 5 decimals printed as 0.00000)."""
    if not math.isfinite(value) or float(f"{value:.4f}") == value:
        return figure_text(value, decimals)
    return f"{value:g}" if float(f"{value:g}") == value else repr(value)


def listed(ids) -> str:
    """``a, b, c ... and N more`` (at most ``LISTED`` ids)."""
    return _ids(ids)


def _ids(ids) -> str:
    ids = list(ids)
    shown = ", ".join(ids[:LISTED])
    return shown + (f" ... and {len(ids) - LISTED} more" if len(ids) > LISTED else "")
