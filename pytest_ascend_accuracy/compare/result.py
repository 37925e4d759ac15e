"""Comparison results: one frozen row per compared tensor, coverage, and re-judging.

A ``CompareResult`` holds metric values only (no tensors), in graph order, so it can be judged
again under another threshold, per-operator overrides or ignore list without reading a dump,
and saved to / loaded from JSON. ``judge`` returns a ``Verdict``.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field, replace
from typing import Dict, List, Mapping, Optional, Tuple

from ..core.check_defaults import default_threshold_for
from ..errors import ConfigError, DumpFormatError
from .metrics import TensorMetrics, encode_float, is_exact
from .one_element import ONE_ELEMENT, one_element_failure
from .rows import Coverage, Failure, TensorCompare, _fmt, _s
from .scale_guard import guard_ratio, one_subnormal_value, scale_reason
from .thresholds import Policy, ThresholdLike, check_metric
from .tiny_values import CLOSE_WORDS

#: 2: metrics record ``exact``/``unequal`` (integer and bool values compared exactly) and
#: ``matched_nan``; 3: ``normal_cosine``/``tiny_equal`` (float16 positions below its smallest
#: normal on both sides, close by ``tiny_values``' test, compared as equal); 4: the same for the
#: scale-free error metrics (``normal_rel_l2``, ...); 5: ``stand_in`` (a golden's ±float32 max,
#: a mask's stand-in for an infinity, against the device's same-sign infinity compared as equal:
#: ``mask_stand_in``); 6: ``samples`` (a tensor of one value per sample along a batch axis
#: judged per sample: ``compare.batch_samples``); an older file is read and judged by the rules
#: it was written under
FORMAT_VERSION = 6
_TINY_RULE = ("float16 positions below its smallest normal (6.1e-05) on both sides and "
              f"{CLOSE_WORDS} were not compared as equal")
_STAND_IN_RULE = ("a golden's ±float32 max (an attention mask's stand-in for an infinity) "
                  "against the device's infinity of the same sign was a mismatch")
#: what an older result was written without (``CompareResult.older_rules``)
OLDER_RULES = {1: "NaN at the same position on both sides was a mismatch, 8-bit codes were "
                  "not compared around the golden's mean, integer tensors were compared "
                  f"exactly by another rule or not at all, {_TINY_RULE}, and {_STAND_IN_RULE}",
               2: f"{_TINY_RULE}, and {_STAND_IN_RULE}",
               3: _TINY_RULE.replace("were not compared as equal", "were compared as equal "
                                     "for the cosine only, not for rel_l2, max_rel, mean_rel, "
                                     "acc_rel and kl") + f", and {_STAND_IN_RULE}",
               4: _STAND_IN_RULE}
_SAMPLE_RULE = ("a tensor of one value per sample along a batch axis was judged as a whole, "
                "not sample by sample")
OLDER_RULES = {**{v: f"{rule}, and {_SAMPLE_RULE}" for v, rule in OLDER_RULES.items()},
               5: _SAMPLE_RULE}


#: reason prefix of a failure for an actual op none of whose framework ops has a golden
#: tensor compared anywhere, so that a fault in it would go unseen (issue 13 D3); the compare
#: engine flags such rows ``not_compared`` (NPU-only ops and inner parts of a framework op
#: compared elsewhere are not flagged)
NOT_COMPARED = "not compared"
NOT_COMPARED_FLAG = "not_compared"
#: the start of a verdict's problem when the actual dump holds no operator output at all (a run
#: dumped in acl.json dump_mode ``input``): nothing a check compares was dumped
NO_OUTPUTS = "no tensor was compared: the actual dump holds no operator outputs"
#: what fixes ``NO_OUTPUTS``, in each caller's spelling
NO_OUTPUTS_ADVICE = ("dump the operators' outputs: dump mode output or all (pytest "
                     "--accuracy-dump-mode=all or ini ascend_accuracy_dump_mode; run(..., "
                     "dump_mode=\"all\"); acl.json \"dump_mode\": \"all\")")

#: the start of a verdict's problem when the actual side is a run made without a dump
#: (``run(inputs, dump=False)``: the model's outputs only), and what fixes it
NOT_DUMPED = "no tensor was compared: the actual run was not dumped"
NOT_DUMPED_ADVICE = ("run the model with its dump: om.run(inputs) (dump=True is the default; "
                     "run(inputs, dump=False) returns the model's outputs only)")


@dataclass(frozen=True)
class Verdict:
    """The judgement of a CompareResult under one policy. Truthy when it passed."""

    passed: bool
    policy: Policy
    failures: Tuple[Failure, ...] = ()  # graph order
    judged: int = 0
    ignored: int = 0
    skipped: int = 0  # rows whose metric does not apply (e.g. KL of bool tensors)
    unmatched: int = 0  # rows of actual ops without a golden counterpart (see coverage)
    #: a failure of the comparison as a whole (nothing could be compared), "" if none
    problem: str = ""

    def __bool__(self) -> bool:
        return self.passed

    @property
    def first(self) -> Optional[Failure]:
        """The first failure in graph order among the compared tensors (the one the verdict
        line names), else the first of those not compared; None when passed. (The report's
        first-failure block named a not-compared op while the verdict line above it named the
        first compared one.)"""
        judged = [f for f in self.failures if not f.reason.startswith(NOT_COMPARED)]
        return judged[0] if judged else (self.failures[0] if self.failures else None)

    @property
    def first_failure(self) -> Optional[TensorCompare]:
        """The row of ``first`` (None when passed)."""
        return self.first.row if self.first is not None else None

    def worst(self, n: int = 5) -> List[Failure]:
        """The ``n`` worst failures, worst first (ties keep graph order)."""
        return sorted(self.failures, key=Failure.severity)[:n]

    @property
    def passing_threshold(self) -> Optional[float]:
        """The loosest value of the default threshold under which every failure judged by it
        would pass; None when a failure no threshold can fix (NaN/Inf, not compared, or off
        the scale guard, which would fail it at any threshold) or one under a per-op threshold
        exists."""
        if self.problem:
            return None
        if not self.failures:
            return self.policy.default.value
        values = []
        for f in self.failures:  # (a per_op entry of the default's value is one's own: a review)
            if not f.fixable or self.policy.threshold_key(f.row.names) is not None:
                return None
            m = f.row.metrics
            if m is not None and not m.golden_zero and self.policy.off_scale(
                    guard_ratio(m, f.threshold.metric)[0]):
                return None
            values.append(f.would_pass)
        return min(values) if self.policy.default.higher_is_better else max(values)

    def describe(self) -> str:
        """The verdict line."""
        thr = self.policy.default.describe()
        if self.passed:
            verb = "meets" if self.judged == 1 else "meet"
            if self.policy.per_op:  # some may pass by their own entry: say so, as a failure does
                n = len(self.policy.per_op)
                thr = f"{thr} or their per-op threshold ({n} op{_s(n)})"
            return (f"accuracy PASSED: {self.judged} tensor{_s(self.judged)} {verb} {thr}"
                    + (f" ({self.ignored} ignored)" if self.ignored else ""))
        if self.problem:
            return f"accuracy FAILED: {self.problem}"
        hidden_rows = [f for f in self.failures if f.reason.startswith(NOT_COMPARED)]
        # an op with several outputs not compared is named once
        hidden = list(dict.fromkeys(f.row.op_name for f in hidden_rows))
        judged = [f for f in self.failures if not f.reason.startswith(NOT_COMPARED)]
        n_judged = self.judged - len(hidden_rows)
        note = (f"{len(hidden)} op{_s(len(hidden))} not compared ({_listed(hidden)}: no golden "
                f"tensor, a fault there would go unseen; {IGNORE_NOTE})")
        if not judged:
            return f"accuracy FAILED: {note}"
        first = judged[0].row
        if self.policy.per_op:  # not all judged by the default: say so (their lines show which)
            n = len(self.policy.per_op)
            thr = f"{thr} or their per-op threshold ({n} op{_s(n)})"
        if any(f.reason.startswith("scale:") for f in judged):  # cosine alone passed them
            t = self.policy.scale_tolerance
            thr = f"{thr} or the scale guard (L2 norm within {1 / t:.3g}-{t:g}x the golden's)"
        ones = sum(1 for f in judged if f.reason.startswith(ONE_ELEMENT))
        if ones == len(judged):  # (a batch's samples: each judged as one element)
            what = ("one value per sample" if all(f.row.metrics.samples for f in judged)
                    else "a one-element tensor")
            thr = f"{thr} ({what}: the relative error it allows)"
        elif ones:  # not the first failure's bracket (T3: a 96,000-element first failure)
            thr = f"{thr} ({ones} of them one-element, by the relative error it allows)"
        return (f"accuracy FAILED: {len(judged)} of {n_judged} tensor{_s(n_judged)} "
                f"fail {thr}; first failure in graph order: {first.label} (#{first.order})"
                + (f"; {note}" if hidden else ""))


#: the verdict line's advice on ops not compared, as the Python API and the plugin spell it;
#: the ``ascend-accuracy`` command prints ``IGNORE_NOTE_CLI`` instead (``failure_text(cli=True)``)
IGNORE_NOTE = "name them in ignore= to accept that"
IGNORE_NOTE_CLI = "name each in --ignore NAME to accept that"

#: the start of a verdict's problem when every compared tensor was ignored or skipped: a check
#: that judges nothing must not pass
NOTHING_JUDGED = "no tensor was judged"


def _nothing_judged(counts: Mapping[str, int], policy: Policy) -> str:
    """The problem of a comparison whose matched tensors were all ignored (``ignore=``) or
    skipped (the metric does not apply to them): a verdict over none of them would pass while
    checking nothing."""
    parts = []
    if counts["ignored"]:
        parts.append(f"{counts['ignored']} ignored by ignore={list(policy.ignore)!r}")
    if counts["skipped"]:
        parts.append(f"{counts['skipped']} not measurable by {policy.default.metric}")
    fix = ("name only the ops to accept in ignore= (ignore: in a YAML suite, --ignore on the "
           "command line)" if counts["ignored"] else
           "judge them by a metric that applies, e.g. metric=\"cosine\" (metric: cosine in a "
           "YAML suite, --metric cosine on the command line)")
    return f"{NOTHING_JUDGED}: of the compared tensors, {' and '.join(parts)}; {fix}"


def problem_advice(problem: str) -> Optional[Tuple[str, str]]:
    """``(reason, advice)`` for a verdict's ``problem`` of a kind this module names (the run
    dumped no outputs, was not dumped, or nothing was judged), which every caller spells
    alike; None for a comparison of mismatched dumps, whose fix each caller spells its own."""
    if problem.startswith(NO_OUTPUTS):
        return "the run dumped no operator outputs", NO_OUTPUTS_ADVICE
    if problem.startswith(NOT_DUMPED):
        return "the run was not dumped", NOT_DUMPED_ADVICE
    if problem.startswith(NOTHING_JUDGED):  # its fix ends the problem (``_nothing_judged``)
        return "every compared tensor was ignored or skipped", problem.rpartition("; ")[2]
    return None


def tensor_keyed(rows) -> frozenset:
    """The op names of ``rows`` with more than one compared output: a per_op entry naming such
    an op sets the threshold of every output of it, so a fix of one of them names its tensor,
    ``split:output:0`` (a review: ``--per-op split=0.832024`` pasted into diagnose passed
    split's other output at cosine 0.879)."""
    seen, multi = {}, set()
    for r in rows:
        if r.slot.startswith("output") and r.metrics is not None:
            if seen.setdefault(r.op_name, r.slot) != r.slot:
                multi.add(r.op_name)
    return frozenset(multi)


def judge_row(row: TensorCompare, policy: Policy,
              keyed: frozenset = frozenset()) -> Tuple[str, Optional[Failure]]:
    """``("ignored" | "unmatched" | "skipped" | "passed" | "failed", failure-or-None)``;
    ``keyed``: ``tensor_keyed`` of the rows judged, whose one-element fixes name the tensor."""
    if policy.is_ignored(row.names):
        return "ignored", None
    if "no_golden" in row.flags and NOT_COMPARED_FLAG not in row.flags:
        return "unmatched", None
    thr = policy.threshold_for(row.names)
    if NOT_COMPARED_FLAG in row.flags:  # no golden anywhere for its framework ops: a fault hides
        return "failed", Failure(row, thr, math.nan, f"{NOT_COMPARED}: {row.reason}", None)
    m = row.metrics
    if m is None:
        return "failed", Failure(row, thr, math.nan, row.reason or "not compared", None)
    if m.mismatch:
        return "failed", Failure(row, thr, m.value(thr.metric), _nonfinite_reason(m), None)
    if m.exact:  # indices, ids, counts, masks: equal or not, whatever the metric
        if m.unequal:
            return "failed", Failure(row, thr, m.value(thr.metric), _unequal_reason(row, m), None)
        return "passed", None
    if thr.metric in m.not_applicable:
        return "skipped", None
    if m.samples is not None:  # one value per sample on a known batch axis: each as alone
        from .batch_samples import judge_samples

        return judge_samples(row, policy, keyed, judge_row)
    value = m.value(thr.metric)
    if thr.passed(value):
        lone = one_element_failure(m, thr, row.tensor_index if row.op_name in keyed
                                   else row.op_name)  # cosine: a one-element tensor's sign
        if lone:
            return "failed", Failure(row, thr, value, lone, None)
        # passes, but not in scale (ops given their own threshold by per_op are the user's call)
        if thr is policy.default and not m.golden_zero and not one_subnormal_value(m) and \
                policy.off_scale(guard_ratio(m, thr.metric)[0]):
            return "failed", Failure(row, thr, value,
                                     scale_reason(m, thr.metric, policy.scale_tolerance), None)
        return "passed", None
    if math.isnan(value):
        why = "; ".join(m.notes) or "value undefined"
        return "failed", Failure(row, thr, value, f"{thr.metric} is NaN ({why})", None)
    reason = (f"{thr.metric} {_fmt_beside(value, thr)} fails {thr.describe()}"
              f"{_tiny_rule_text(m, thr.metric)}")
    return "failed", Failure(row, thr, value, reason, thr.loosest_passing(value))


def _tiny_rule_text(m: TensorMetrics, metric: str) -> str:
    """What a metric judged with float16's subnormal positions as equal was judged by (the
    CSV's figure, msaccucmp's, is the worse one); nothing where the two print alike (a reason
    saying "msaccucmp's cosine 0.999689" beside a judged 0.999689 names no difference)."""
    plain = getattr(m, metric)
    if _fmt(m.value(metric)) == _fmt(plain):
        return ""
    return (f" (with the {m.tiny_equal} position{_s(m.tiny_equal)} below float16's smallest "
            f"normal on both sides, {CLOSE_WORDS}, counted as equal; msaccucmp's "
            f"{metric} {_fmt(plain)})")


def _listed(names, limit: int = 5) -> str:
    shown = ", ".join(repr(n) if not n.isprintable() or not n else n for n in names[:limit])
    return shown + (f", +{len(names) - limit} more" if len(names) > limit else "")


def nonfinite_kind(m: TensorMetrics) -> str:
    """What made a tensor's non-finite positions fail: a NaN or an Inf where the other side
    does not hold the same (NaN against NaN, or the same infinity, compares as equal)."""
    if m.nan_golden > m.matched_nan and not m.nan_actual > m.matched_nan:
        return "NaN in the golden only"
    return "NaN/Inf on one side only"


def _unequal_reason(row: TensorCompare, m: TensorMetrics) -> str:
    dtype = row.dtype if row.dtype == row.golden_dtype or not row.golden_dtype else (
        f"{row.dtype} (golden {row.golden_dtype})")
    return (f"{m.unequal} of {m.size} value{_s(m.size)} differ ({dtype} values are compared "
            f"exactly: indices, ids, counts, masks; largest difference {_fmt(m.max_abs)})")


def _nonfinite_reason(m: TensorMetrics) -> str:
    return (f"{nonfinite_kind(m)} at {m.mismatch} position{_s(m.mismatch)} (actual "
            f"{m.nan_actual} NaN, {m.posinf_actual} +Inf, {m.neginf_actual} -Inf; golden "
            f"{m.nan_golden} NaN, {m.posinf_golden} +Inf, {m.neginf_golden} -Inf)")


def _fmt_beside(v: float, thr) -> str:
    """``v`` to 6 decimals, or to as many (up to 10) as show it on the failing side of ``thr``
    (a dataset trial read "cosine 1.000000 fails cosine >= 0.99999993")."""
    for digits in range(6, 11):
        text = f"{v:.{digits}f}"
        if not thr.passed(float(text)):
            return text
    return f"{v:.10g}"


@dataclass(frozen=True)
class CompareResult:
    """Every tensor comparison of one actual dump against one golden dump, in graph order."""

    rows: Tuple[TensorCompare, ...]
    coverage: Coverage
    actual_root: Optional[str] = None
    golden_root: Optional[str] = None
    meta: Mapping[str, object] = field(default_factory=dict, compare=False)

    def judge(self, threshold: Optional[ThresholdLike] = None,
              per_op: Optional[Mapping[str, ThresholdLike]] = None, ignore=(),
              metric: str = "cosine", scale_tolerance: Optional[float] = None) -> Verdict:
        """Judge the saved metric values under a policy; reads no tensor. ``threshold``: the
        plugin's 0.95 for cosine; another metric needs one (it was judged at 0.95 silently).
        ``scale_tolerance`` fails tensors whose L2 norm is not within 1/t..t times the golden's:
        off unless given here (a re-judging of metric values, ``passing_threshold`` included),
        where ``assert_accuracy``, ``check_accuracy`` and the CLI apply 2. Every ``per_op`` and
        ``ignore`` entry must name a compared op (a real name, or a glob matching one:
        ``check_names``), else it would judge nothing; a ``Policy`` threshold is taken as
        checked."""
        if isinstance(threshold, Policy):
            policy = threshold
        else:
            check_metric(metric, "judge")  # before its default threshold is looked for
            if threshold is None:
                threshold = default_threshold_for(metric, where="judge",
                                                  fix="; pass threshold=")
            policy = Policy.build(threshold, per_op, ignore, metric, scale_tolerance)
            self.check_names([k for k, _ in policy.per_op], policy.ignore, "judge")
        if "kl" in policy.metrics and self.meta.get("kl") is False:
            raise ConfigError("metric", "the KL divergence was not computed in this comparison "
                              "(compare_dumps(kl=True), or assert_accuracy/check_accuracy with a "
                              "kl threshold or a report; on the command line, compare without "
                              "--no-kl); judging by 'kl' would skip every tensor")
        failures = []
        counts = {"ignored": 0, "unmatched": 0, "skipped": 0, "passed": 0, "failed": 0}
        keyed = tensor_keyed(self.rows)
        for row in self.rows:
            status, failure = judge_row(row, policy, keyed)
            counts[status] += 1
            if failure is not None:
                failures.append(failure)
        problem = ""
        if not any("no_golden" not in r.flags for r in self.rows):
            problem = (f"no tensor was compared: none of the {len(self.rows)} actual op"
                       f"{_s(len(self.rows))} matches one of the {self.coverage.golden_total} "
                       "golden ops")
            if (self.meta.get("actual") or {}).get("dumped") is False:
                problem = (f"{NOT_DUMPED} (its {len(self.rows)} model output"
                           f"{_s(len(self.rows))} only, as run(inputs, dump=False) returns them)")
            elif self.rows and self.meta.get("actual_outputs") == 0:
                problem = (f"{NO_OUTPUTS} ({len(self.rows)} op{_s(len(self.rows))} with their "
                           "inputs only, as a run in dump mode input writes them)")
            # the problem says it all: no op-by-op "not compared" failures on top
            hidden = [f for f in failures if f.reason.startswith(NOT_COMPARED)]
            failures = [f for f in failures if not f.reason.startswith(NOT_COMPARED)]
            counts["failed"] -= len(hidden)
            counts["unmatched"] += len(hidden)
        elif not counts["passed"] + counts["failed"]:
            problem = _nothing_judged(counts, policy)
        return Verdict(passed=not failures and not problem, policy=policy,
                       failures=tuple(failures), judged=counts["passed"] + counts["failed"],
                       ignored=counts["ignored"], skipped=counts["skipped"],
                       unmatched=counts["unmatched"], problem=problem)

    def check_names(self, per_op, ignore, where: Optional[str],
                    label: str = "the dumps") -> None:
        """Raise ``ConfigError`` (with the closest names) for a per-op threshold or ignore
        entry that names none of the rows' ops (op, golden or original names; globs match)."""
        from ..graph.op_catalogue import check_setting_names

        ops = {n for r in self.rows for n in (r.op_name, r.golden_name) + r.original_names}
        check_setting_names(per_op, ignore, (n for r in self.rows for n in r.names), label, where,
                            clashes=ops & {n for r in self.rows for n in (
                                r.tensor_index, f"{r.golden_name}:{r.golden_slot}")})

    def uncompared_entries(self, per_op, ignore) -> List[Tuple[str, str]]:
        """``(what, entry)`` of each per-op (``"per_op entry"``) or ignore (``"ignore entry"``)
        entry naming no compared tensor (op, golden or original names, tensor names; globs
        match): what ``Coverage.never_compared`` and ``judges_nothing`` then explain."""
        from fnmatch import fnmatchcase

        names = [n for r in self.rows for n in r.names if n]
        return [(what, entry)
                for what, entries in (("per_op entry", per_op or ()), ("ignore entry", ignore))
                for entry in entries
                if not any(n == entry or fnmatchcase(n, entry) for n in names)]

    @property
    def compared_rows(self) -> Tuple[TensorCompare, ...]:
        """Rows that have a golden counterpart (without the unmatched actual ops)."""
        return tuple(r for r in self.rows if "no_golden" not in r.flags)

    def row(self, op_name: str, slot: str = "output:0") -> TensorCompare:
        for r in self.rows:
            if r.op_name == op_name and r.slot == slot and "no_golden" not in r.flags:
                return r
        raise KeyError(f"no row for {op_name}:{slot}")

    # -- serialisation --------------------------------------------------------------------
    def to_dict(self) -> Dict[str, object]:
        return {"format": "pytest-ascend-accuracy/compare-result", "version": FORMAT_VERSION,
                "actual_root": self.actual_root, "golden_root": self.golden_root,
                "meta": _jsonable(self.meta), "coverage": self.coverage.to_dict(),
                "rows": [r.to_dict() for r in self.rows]}

    @staticmethod
    def from_dict(d: Mapping[str, object], *, where: Optional[str] = None) -> "CompareResult":
        if not isinstance(d, Mapping) or d.get("format") != "pytest-ascend-accuracy/compare-result":
            raise DumpFormatError(where, "not a saved compare result (missing format tag)")
        version = d.get("version")
        if version != FORMAT_VERSION and version not in OLDER_RULES:
            raise DumpFormatError(where, f"compare result version {version!r} is not supported "
                                  f"(expected {FORMAT_VERSION}, or an older "
                                  f"{', '.join(map(str, OLDER_RULES))})")
        meta = dict(d.get("meta") or {})
        if version != FORMAT_VERSION:
            meta["format_version"] = version
        try:
            rows = tuple(TensorCompare.from_dict(r) for r in d["rows"])
            if version != FORMAT_VERSION:  # exact comparison where today's rule has it only
                rows = tuple(_exact_as_today(r) for r in rows)
            return CompareResult(rows=rows, coverage=Coverage.from_dict(d["coverage"]), meta=meta,
                                 actual_root=d.get("actual_root"), golden_root=d.get("golden_root"))
        except (KeyError, TypeError, ValueError) as exc:
            raise DumpFormatError(where, f"malformed compare result: {exc!r}") from None

    @property
    def older_rules(self) -> str:
        """How this result, read from an older file, was measured unlike a comparison made
        now ("" for a current one): its rows are judged as they were written."""
        version = self.meta.get("format_version")
        return f"written by an earlier version ({OLDER_RULES[version]})" if (
            version in OLDER_RULES) else ""

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, allow_nan=False)

    @staticmethod
    def from_json(text: str, *, where: Optional[str] = None) -> "CompareResult":
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:  # RecursionError: nesting past the limit
            raise DumpFormatError(where, f"not valid JSON: {exc}") from None
        return CompareResult.from_dict(data, where=where)

    @staticmethod
    def load(path) -> "CompareResult":
        path = os.fspath(path)
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            from ..core.closest_paths import closest_in_folder

            near = "" if os.path.exists(path) else closest_in_folder(path, False, path, (".json",))
            raise DumpFormatError(path, f"cannot read: {exc.strerror or exc}{near}") from None
        return CompareResult.from_json(text, where=path)


def _exact_as_today(row: TensorCompare) -> TensorCompare:
    """A row read from an older file: compared exactly only where today's rule would (a bool
    or 64-bit integer golden); an int32 row a file of this session's first rule marked exact
    is judged by its metrics, as now."""
    m = row.metrics
    if m is None or not m.exact or not row.golden_dtype:
        return row
    try:
        keep = is_exact(row.golden_dtype)
    except TypeError:  # a dtype numpy does not know (bfloat16): not an integer
        keep = False
    return row if keep else replace(row, metrics=replace(m, exact=False))


def _jsonable(value):
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float):
        return encode_float(value)
    return value if value is None or isinstance(value, (bool, int, str)) else str(value)
