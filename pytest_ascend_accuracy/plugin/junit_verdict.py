"""A test's JUnit properties as one verdict per kind of check that agrees with its outcome.

Each check records its set as it finishes: an accuracy check ``accuracy_model``,
``accuracy_mode``, ``accuracy_passed``, ..., ``accuracy_hint`` (``accuracy_check.publish``), a
dataset check ``dataset_metric``, ..., ``dataset_passed``, ... (``DatasetResult.properties``), a
pre-processing check ``preprocessing_passed``, ``preprocessing_aipp``, ...
(``aipp_check.record_preprocessing``). A test of several checks of a kind carried one set per
check, so a failing test could show ``accuracy_passed=true`` (or ``dataset_passed=true``)
first, from its passing check, and a test that failed after its checks passed showed only
``true``: a dashboard reading the first ``<kind>_passed`` saw a pass. When the test's teardown
report is made, ``one_verdict`` rewrites each kind's sets (``FAMILIES``):

- the unprefixed set (``accuracy_*``, ``dataset_*``, ``preprocessing_*``) appears once: that of
  the test's first failed check of that kind (the first check where none failed); its
  ``<kind>_passed`` is ``false`` where any check of the kind failed (one the test caught or
  xfailed too) or the test itself failed; a test that failed after those checks passed gets
  ``<kind>_first_failing_reason`` ``its checks passed, then the test failed: <first line>``
  (the failed check's own line where a check of another kind is what failed), and a marked
  test with no check at all ``accuracy_passed=false`` with ``accuracy_first_failing_reason``
  ``no check verdict: <first line>`` (no ``dataset_*`` or ``preprocessing_*`` set is made up
  for a test without such a check);
- a test of several checks of a kind also gets ``<kind>_checks`` (how many) and each check's
  own set in check order, named ``<kind>_check<k>_<field>`` (``accuracy_check1_model``,
  ``dataset_check2_passed``, ...; k from 1), which no name of the unprefixed set begins with.

A test with one check of a kind keeps that set's names as recorded. The user's own properties
are left where they were. ``accuracy_input_shape`` (the shape a check ran at, as ATC's
``--input_shape`` spells it) is kept only where the test's checks ran a model at several: a
test looping over gears named no gear anywhere (a trial); one of a single shape reads as before.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, FrozenSet, List, Optional, Sequence, Tuple

Props = List[Tuple[str, object]]


@dataclass(frozen=True)
class Family:
    """One kind of check's properties: all begin with ``prefix``; each check's set begins with
    ``start``."""

    prefix: str
    start: str
    #: the fields a check records (after the prefix), and beginnings of fields named by what
    #: the check measured (``accuracy_first_failing_cosine``): a user's own ``accuracy_note``
    #: is none of them, and stays where it was
    fields: FrozenSet[str] = frozenset()
    open_fields: Tuple[str, ...] = ()

    def owns(self, name: str) -> bool:
        """Whether ``name`` is a property a check of this kind records."""
        if not name.startswith(self.prefix):
            return False
        field = name[len(self.prefix):]
        return field in self.fields or field.startswith(self.open_fields)

    @property
    def passed(self) -> str:
        return f"{self.prefix}passed"

    @property
    def count(self) -> str:
        return f"{self.prefix}checks"

    @property
    def reason(self) -> str:
        return f"{self.prefix}first_failing_reason"

    def per_check_name(self, k: int, name: str) -> str:
        """``<prefix>check<k>_<field>`` of check ``k`` (from 1)'s property ``<prefix><field>``."""
        return f"{self.prefix}check{k}_{name[len(self.prefix):]}"

    def rewritten(self, props: Sequence[Tuple[str, object]]) -> bool:
        per_check = re.compile(re.escape(self.prefix) + r"check\d+_")
        return any(n == self.count or per_check.match(str(n)) for n, _ in props)


ACCURACY = Family("accuracy_", "accuracy_model", frozenset({
    "model", "mode", "passed", "input_shape", "coverage", "baseline", "hint"}),
    ("first_failing_",))
#: recorded by every accuracy check, kept where the test's checks differ in it
INPUT_SHAPE = "accuracy_input_shape"
DATASET = Family("dataset_", "dataset_metric", frozenset({
    "metric", "reference", "device", "drop", "max_drop", "samples", "flipped", "passed",
    "positions", "flipped_positions", "first_failing_op", "first_failing_reason",
    "higher_is_better"}))
PREPROCESSING = Family("preprocessing_", "preprocessing_passed", frozenset({
    "passed", "aipp", "input", "images", "agree", "corrected", "first_failing_reason"}))
FAMILIES = (ACCURACY, DATASET, PREPROCESSING)


def one_verdict(props: Sequence[Tuple[str, object]], failed: Optional[str] = None,
                marked: bool = False) -> Props:
    """``props`` (a test's ``user_properties``, each check's set as recorded) with one
    unprefixed set per kind of check; ``failed``: the first line of the test's failure (None:
    it did not fail); ``marked``: an ``@accuracy`` test (one that failed with no check still
    gets ``accuracy_passed=false``). Applied twice, it changes nothing more."""
    props = list(props)
    # the kinds with a failed check, as recorded (before any set is rewritten to agree)
    failing = frozenset(f.prefix for f in FAMILIES if (f.passed, "false") in props)
    for family in FAMILIES:
        props = _family_verdict(props, family, failed, marked and family is ACCURACY, failing)
    return props


def _family_verdict(props: Props, family: Family, failed: Optional[str], marked: bool,
                    failing: FrozenSet[str]) -> Props:
    if family.rewritten(props):
        return props
    props = _shape_where_several(props) if family is ACCURACY else props
    groups: List[Props] = []
    start = None  # where the first check's set was
    others: Props = []
    for name, value in props:
        name = str(name)
        if name == family.start:
            if start is None:
                start = len(others)
            groups.append([])
        if family.owns(name) and groups:
            groups[-1].append((name, value))
        else:
            others.append((name, value))
    if not groups:
        if failed is not None and marked and not any(n == family.passed for n, _ in others):
            others += [(family.passed, "false"),
                       (family.reason, _reason(failed, family, failing, "no check verdict"))]
        return others
    verdict = next((g for g in groups if (family.passed, "false") in g), groups[0])
    block = list(verdict)
    if failed is not None and (family.passed, "false") not in block:
        block = [(n, "false" if n == family.passed else v) for n, v in block]
        block.insert(_after(block, family.passed),
                     (family.reason, _reason(failed, family, failing,
                                             "its checks passed, then the test failed")))
    if len(groups) > 1:
        block.append((family.count, str(len(groups))))
        block += [(family.per_check_name(k, n), v) for k, g in enumerate(groups, 1)
                  for n, v in g]
    return others[:start] + block + others[start:]


def _after(block: Props, name: str) -> int:
    """The position after the property ``name`` of ``block`` (its end where it has none)."""
    return next((k + 1 for k, (n, _) in enumerate(block) if n == name), len(block))


def _reason(failed: str, family: Family, failing: FrozenSet[str], lead: str) -> str:
    """Why a test failed that no check of ``family`` failed: a failed check of another kind's
    own line, else ``lead: <first line>``."""
    if failing - {family.prefix}:
        return failed
    return f"{lead}: {failed}"


def _shape_where_several(props: Props) -> Props:
    """``props`` without ``accuracy_input_shape`` unless the test's checks ran one model at more
    than one (``report.checked_shapes.several_shapes``)."""
    from ..report.checked_shapes import several_shapes

    checks, model = [], ""
    for name, value in props:
        if name == "accuracy_model":
            model = str(value)
        elif name == INPUT_SHAPE:
            checks.append((model, str(value)))
    if several_shapes(checks):
        return props
    return [(n, v) for n, v in props if n != INPUT_SHAPE]


def record_check_properties(record_property: Callable, record, verdict,
                            baseline=None) -> None:
    """One accuracy check's set, recorded as it finishes (``accuracy_check.publish``):
    ``record`` its ``CheckRecord``, ``verdict`` its ``Verdict``, ``baseline`` its
    ``BaselineNote`` (None: no baseline judged); ``one_verdict`` rewrites the test's sets."""
    from ..report.failure_text import first_failing_reason

    first = verdict.first
    passed = record.passed and (baseline is None or baseline.passed)
    record_property("accuracy_model", record.model)
    record_property("accuracy_mode", record.mode)
    record_property("accuracy_passed", "true" if passed else "false")
    if record.input_shape:  # kept where the test's checks ran at several (one_verdict)
        record_property(INPUT_SHAPE, record.input_shape)
    if record.coverage is not None:
        record_property("accuracy_coverage", f"{record.coverage:.4f}")
    if baseline is not None:  # e.g. "regressed: norm: cosine 0.900000 -> 0.396693 (drop ...)"
        record_property("accuracy_baseline", baseline.one_line())
    if first is not None:
        record_property("accuracy_first_failing_op", record.first_op)
        m = first.row.metrics
        # an op not compared (or NaN) has no value, and one failing by NaN/Inf on one side only
        # none that failed (the figure of its finite positions read 1.000000 on basic-pitch's
        # Log beside its reason, audit 34): its reason says why
        value = None if m is not None and m.mismatch else finite_or_none(first.value)
        if value is not None:
            record_property(f"accuracy_first_failing_{record.metric}", f"{value:.6f}")
        # not "value < threshold" alone: scale guard (with the threshold too), NaN/Inf, ...
        reason = first_failing_reason(first, verdict.policy)
        if reason:
            record_property("accuracy_first_failing_reason", reason)


def finite_or_none(value) -> Optional[float]:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else value
