"""The check's figure is given only where it passes pasted (a review of audit 33's change: a
second failing op outside the scale guard, or a first op judged by its own per_op entry, made
"the check: X" fail when pasted)."""
import re

import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.thresholds import Policy
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.failure_text import failure_text


def _result(op2_scale: float):
    g1 = np.linspace(1, 2, 64).astype(np.float32)
    g2 = np.cos(np.arange(64)).astype(np.float32)
    a1 = (g1 + 1e-2 * np.sin(np.arange(64))).astype(np.float16)
    a2 = ((g2 + 0.1 * np.sin(3 * np.arange(64))) * op2_scale).astype(np.float16)
    return compare_dumps(DumpSet.from_arrays({"op1": [a1], "op2": [a2]}),
                         DumpSet.from_arrays({"op1": [g1], "op2": [g2]}), kl=False)


def _figure(text: str) -> str:
    return re.search(r"\((threshold that would pass[^\n]*)\)\n", text).group(1)


def test_the_checks_figure_passes_when_rejudged():
    result = _result(1.0)
    said = _figure(failure_text(result, result.judge(Policy.build(0.99999, None, (), "cosine",
                                                                  2.0))))
    check = float(said.rsplit("the check: ", 1)[1])
    assert result.judge(Policy.build(check, None, (), "cosine", 2.0)).passed


def test_a_failure_outside_the_scale_guard_gets_no_figure():
    result = _result(3.0)
    said = _figure(failure_text(result, result.judge(Policy.build(0.99999, None, (), "cosine",
                                                                  2.0))))
    assert said.endswith("; no threshold alone passes the check (op2: outside the scale guard "
                         "too)"), said


def test_a_first_op_judged_by_its_own_entry_gives_its_figure_only():
    result = _result(1.0)
    verdict = result.judge(Policy.build(0.99999, {"op1": 0.99999999}, (), "cosine", 2.0))
    said = _figure(failure_text(result, verdict))
    assert said.startswith("threshold that would pass this op: ") and ";" not in said, said


def test_a_glob_entry_judging_several_failures_gives_the_figure_passing_them_all():
    """Audit 36 A: ``'p2o.Transpose.*': {max_abs: 0.01}`` failed four ops; the one figure
    printed (the first op's), pasted into the glob entry, still failed the others. The entry's
    own figure is given, and pasted into that entry, the check passes."""
    result = _result(1.0)
    per_op = {"op*": {"max_abs": 1e-4}}
    said = _figure(failure_text(result, result.judge(Policy.build(0.9, per_op, (), "cosine",
                                                                  2.0))))
    found = re.search(r"; per_op 'op\*', judging 2 failing ops: ([\d.e-]+)[;)]?", said)
    assert found, said
    pasted = {"op*": {"max_abs": float(found.group(1))}}
    assert result.judge(Policy.build(0.9, pasted, (), "cosine", 2.0)).passed
    mine = float(re.search(r"this op: ([\d.e-]+)", said).group(1))
    assert not result.judge(Policy.build(0.9, {"op*": {"max_abs": mine}}, (), "cosine",
                                         2.0)).passed  # the op's own figure alone did not
