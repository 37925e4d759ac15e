"""A test's JUnit ``accuracy_*`` properties as one verdict that agrees with the test's outcome.

Each accuracy check records its set (``accuracy_model``, ``accuracy_mode``, ``accuracy_passed``,
..., ``accuracy_hint``: ``accuracy_check.publish``) as it finishes. A test of several checks
carried one set per check, so a failing test could show ``accuracy_passed=true`` first (from
its passing check), and a test that failed after its checks passed showed only ``true``: a
dashboard reading the first ``accuracy_passed`` saw a pass. When the test's teardown report is
made, ``one_verdict`` rewrites them:

- the unprefixed ``accuracy_*`` set appears once: that of the test's first failed check (the
  first check where none failed); its ``accuracy_passed`` is ``false`` where any check failed
  (one the test caught or xfailed too) or the test itself failed; a test that failed after its
  checks passed gets ``accuracy_first_failing_reason`` ``its checks passed, then the test
  failed: <first line>`` (the failed pre-processing or dataset check's own line where that is
  what failed), and a marked test with no check ``no check verdict: <first line>``;
- a test of several checks also gets ``accuracy_checks`` (how many) and each check's own set
  in check order, named ``accuracy_check<k>_<field>`` (``accuracy_check1_model``,
  ``accuracy_check2_passed``, ...; k from 1), which no name of the unprefixed set begins with.

Other properties (``preprocessing_*``, ``dataset_*``, the user's own) are left as they are.
"""
from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple

PREFIX = "accuracy_"
#: every check's set begins with it (``accuracy_check._record_properties``)
CHECK_START = "accuracy_model"
COUNT = "accuracy_checks"
PASSED = "accuracy_passed"
REASON = "accuracy_first_failing_reason"
#: a check's own property: ``accuracy_check<k>_<field>``
PER_CHECK = re.compile(r"accuracy_check\d+_")

Props = List[Tuple[str, object]]


def per_check_name(k: int, name: str) -> str:
    """``accuracy_check<k>_<field>`` of check ``k`` (from 1)'s property ``accuracy_<field>``."""
    return f"accuracy_check{k}_{name[len(PREFIX):]}"


def one_verdict(props: Sequence[Tuple[str, object]], failed: Optional[str] = None,
                marked: bool = False) -> Props:
    """``props`` (a test's ``user_properties``, each check's set as recorded) with one
    unprefixed ``accuracy_*`` set; ``failed``: the first line of the test's failure (None:
    it did not fail); ``marked``: an ``@accuracy`` test (one that failed with no check still
    gets ``accuracy_passed=false``). Applied twice, it changes nothing more."""
    props = list(props)
    if any(n == COUNT or PER_CHECK.match(str(n)) for n, _ in props):
        return props  # rewritten already
    groups: List[Props] = []
    start = None  # where the first check's set was
    others: Props = []
    for name, value in props:
        name = str(name)
        if name == CHECK_START:
            if start is None:
                start = len(others)
            groups.append([])
        if name.startswith(PREFIX) and groups:
            groups[-1].append((name, value))
        else:
            others.append((name, value))
    if not groups:
        if failed is not None and marked and not any(n == PASSED for n, _ in others):
            others += [(PASSED, "false"), (REASON, _reason(failed, others, "no check verdict"))]
        return others
    verdict = next((g for g in groups if (PASSED, "false") in g), groups[0])
    block = list(verdict)
    if failed is not None and (PASSED, "false") not in block:
        block = [(n, "false" if n == PASSED else v) for n, v in block]
        block.insert(_after(block, PASSED),
                     (REASON, _reason(failed, others, "its checks passed, then the test failed")))
    if len(groups) > 1:
        block.append((COUNT, str(len(groups))))
        block += [(per_check_name(k, n), v) for k, g in enumerate(groups, 1) for n, v in g]
    return others[:start] + block + others[start:]


def _after(block: Props, name: str) -> int:
    """The position after the property ``name`` of ``block`` (its end where it has none)."""
    return next((k + 1 for k, (n, _) in enumerate(block) if n == name), len(block))


def _reason(failed: str, others: Props, lead: str) -> str:
    """Why a test failed that no accuracy check failed: a failed pre-processing or dataset
    check's own line, else ``lead: <first line>``."""
    if ("preprocessing_passed", "false") in others or ("dataset_passed", "false") in others:
        return failed
    return f"{lead}: {failed}"
