"""The rows of a comparison: one tensor against its golden (``TensorCompare``), how much of
the golden graph was seen (``Coverage``) and a row that failed a verdict (``Failure``); frozen
values with their JSON forms. ``compare.result`` judges them and holds them together."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Tuple

from .metrics import TensorMetrics
from .thresholds import Threshold


@dataclass(frozen=True)
class TensorCompare:
    """One actual tensor against its golden tensor (or why it could not be compared)."""

    order: int  # execution position of the actual op (its om-json id when known)
    op_name: str  # actual (dump) op name
    op_type: str = ""
    original_names: Tuple[str, ...] = ()  # framework ops a fused op covers
    slot: str = "output:0"
    golden_name: str = ""  # golden op the tensor was compared with ("" if none)
    golden_slot: str = "output:0"
    match: str = ""  # how it was matched: name | origin | fused | mapping
    dtype: str = ""
    golden_dtype: str = ""
    shape: Tuple[int, ...] = ()
    golden_shape: Tuple[int, ...] = ()
    metrics: Optional[TensorMetrics] = None
    flags: Tuple[str, ...] = ()
    reason: str = ""  # why no metrics (or a warning about them)
    source: Optional[str] = None  # actual dump file
    golden_source: Optional[str] = None

    @property
    def compared(self) -> bool:
        return self.metrics is not None

    @property
    def tensor_index(self) -> str:
        """msaccucmp's TensorIndex: ``{op}:output:{i}``."""
        return f"{self.op_name}:{self.slot}"

    @property
    def names(self) -> Tuple[str, ...]:
        """Every name a per-op threshold or ignore pattern may refer to: the op's (its golden
        and original ones), the golden tensor's it was compared with (``relu1:output:0``, the
        output of a fused ``fc1/MatMulrelu1``: the name of that tensor in a mode that does not
        fuse) and this tensor's as the failure table prints it, last (``topk:output:1``: one
        output of a multi-output op)."""
        golden = f"{self.golden_name}:{self.golden_slot}"
        own = ((golden,) if self.golden_name and self.slot.startswith("output")
               and self.golden_slot.startswith("output") and golden != self.tensor_index else ())
        return (self.op_name, self.golden_name) + tuple(self.original_names) + own + (
            self.tensor_index,)

    @property
    def label(self) -> str:
        return self.op_name if self.slot == "output:0" else self.tensor_index

    def to_dict(self) -> Dict[str, object]:
        return {
            "order": self.order, "op_name": self.op_name, "op_type": self.op_type,
            "original_names": list(self.original_names), "slot": self.slot,
            "golden_name": self.golden_name, "golden_slot": self.golden_slot,
            "match": self.match, "dtype": self.dtype, "golden_dtype": self.golden_dtype,
            "shape": list(self.shape), "golden_shape": list(self.golden_shape),
            "metrics": None if self.metrics is None else self.metrics.to_dict(),
            "flags": list(self.flags), "reason": self.reason,
            "source": self.source, "golden_source": self.golden_source,
        }

    @staticmethod
    def from_dict(d: Mapping[str, object]) -> "TensorCompare":
        m = d.get("metrics")
        return TensorCompare(
            order=int(d["order"]), op_name=str(d["op_name"]), op_type=str(d.get("op_type", "")),
            original_names=tuple(d.get("original_names", ())), slot=str(d.get("slot", "output:0")),
            golden_name=str(d.get("golden_name", "")),
            golden_slot=str(d.get("golden_slot", "output:0")), match=str(d.get("match", "")),
            dtype=str(d.get("dtype", "")), golden_dtype=str(d.get("golden_dtype", "")),
            shape=tuple(int(v) for v in d.get("shape", ())),
            golden_shape=tuple(int(v) for v in d.get("golden_shape", ())),
            metrics=None if m is None else TensorMetrics.from_dict(m),
            flags=tuple(d.get("flags", ())), reason=str(d.get("reason", "")),
            source=d.get("source"), golden_source=d.get("golden_source"))


@dataclass(frozen=True)
class Coverage:
    """How much of the golden graph the comparison saw."""

    golden_total: int
    compared: Tuple[str, ...] = ()  # golden ops whose tensors were compared
    fused: Tuple[str, ...] = ()  # golden ops inside fused actual ops (not compared themselves)
    folded: Tuple[str, ...] = ()  # golden ops computed at conversion time (never run on device)
    unmatched_golden: Tuple[str, ...] = ()
    unmatched_actual: Tuple[str, ...] = ()  # actual ops with no golden counterpart
    npu_only: Tuple[str, ...] = ()  # subset of unmatched_actual: ops with no framework origin
    #: golden ops inside an If the device runs as one operator (its branch's tensors are never
    #: dumped: ``graph.control_flow.operator_members``)
    in_ifs: Tuple[str, ...] = ()

    @property
    def matched(self) -> int:
        return len(self.compared) + len(self.fused) + len(self.in_ifs)

    def describe(self, limit: int = 5) -> str:
        def listed(names):
            shown = ", ".join(names[:limit])
            more = f", +{len(names) - limit} more" if len(names) > limit else ""
            return f" ({shown}{more})" if names else ""
        text = (f"{self.golden_total} golden op{_s(self.golden_total)}: "
                f"{len(self.compared)} compared, {len(self.fused)} inside fused ops, "
                + (f"{len(self.in_ifs)} inside If operators, " if self.in_ifs else "")
                + (f"{len(self.folded)} folded at conversion, " if self.folded else "") +
                f"{len(self.unmatched_golden)} unmatched{listed(self.unmatched_golden)}; "
                f"{len(self.unmatched_actual)} actual op{_s(len(self.unmatched_actual))} "
                f"unmatched{listed(self.unmatched_actual)}")
        return text

    def never_compared(self, entry: str) -> Tuple[Tuple[str, ...], str]:
        """(the golden ops a per-op or ignore ``entry`` -- a name, a glob or ``OP:output:N`` --
        names among those never compared, and which they are): ``folded`` at conversion,
        else ``fused`` (a member's tensor, ``fc1/MatMul:output:0``, inside a fused op whose
        outputs alone are dumped), else ``in_if`` (inside an If run as one operator), else
        ``unmatched``; ``((), "")`` when it names none."""
        from fnmatch import fnmatchcase

        from ..graph.op_catalogue import tensor_op

        op = tensor_op(entry)  # p2o.Cast.0:output:0 names the op p2o.Cast.0
        kinds = (("folded", self.folded), ("fused", self.fused if op else ()),
                 ("in_if", self.in_ifs), ("unmatched", self.unmatched_golden))
        for kind, names in kinds:
            named = tuple(n for n in names if n == (op or entry) or fnmatchcase(n, op or entry))
            if named:
                return named, kind
        return (), ""

    def judges_nothing(self, what: str, entry: str, *, cli: bool = False) -> str:
        """The error for ``what`` (``ignore entry``) ``entry`` that names no compared tensor,
        only golden ops never compared (``never_compared``), saying why and what to do; the
        plugin and the CLI (``cli``: its wording) say it alike."""
        from ..graph.op_catalogue import tensor_op

        named, kind = self.never_compared(entry)
        shown = ", ".join(named[:3]) + (f", +{len(named) - 3} more" if len(named) > 3 else "")
        head = (f"{what} {entry!r} names only ops never compared here"
                + (f" ({shown})" if named else "") + ": ")
        if kind == "fused":
            return head + (
                "inside fused ops, whose member tensors the device never dumps; name it "
                f"{tensor_op(entry)!r} (without the slot) to judge the fused op that holds it"
                + ("" if cli else ", or list a mode without fusion (\"fusion_off\") in modes="
                   " to judge the member's own tensor there"))
        if kind == "in_if":
            return head + ("inside an If the device runs as one operator, which dumps none of "
                           "its branch's tensors; name the If to judge its output")
        why = ("folded at conversion: the converter computed them, the device never runs or "
               "dumps them" if kind == "folded" else "no op of the device run matches them (the "
               "coverage line lists the golden ops left unmatched)")
        return head + f"{why}; it would judge nothing, so remove it"

    def to_dict(self):
        return {"golden_total": self.golden_total, "compared": list(self.compared),
                "fused": list(self.fused), "folded": list(self.folded),
                "unmatched_golden": list(self.unmatched_golden),
                "unmatched_actual": list(self.unmatched_actual), "npu_only": list(self.npu_only),
                "in_ifs": list(self.in_ifs)}

    @staticmethod
    def from_dict(d) -> "Coverage":
        return Coverage(int(d["golden_total"]), **{k: tuple(d.get(k, ())) for k in (
            "compared", "fused", "folded", "unmatched_golden", "unmatched_actual", "npu_only",
            "in_ifs")})


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _fmt(v: float) -> str:
    return "NaN" if math.isnan(v) else "{:.6f}".format(v)


@dataclass(frozen=True)
class Failure:
    """One row that failed a verdict, with the rule that failed it."""

    row: TensorCompare
    threshold: Threshold
    value: float  # the judged metric value (NaN when there is none)
    reason: str
    would_pass: Optional[float]  # loosest threshold that would pass this row; None: none would

    @property
    def fixable(self) -> bool:
        return self.would_pass is not None

    def severity(self) -> Tuple[int, float]:
        """Sort key, worst first: unfixable failures, then by distance past the threshold."""
        if not self.fixable:
            return (0, 0.0)
        v = self.value
        return (1, v if self.threshold.higher_is_better else -v)
