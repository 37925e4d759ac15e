"""A test expected to fail gets no ``--accuracy-diagnose`` diagnosis: an xfail-marked test whose
check fails is reported xfailed, its failure text (where the diagnosis goes) is not shown, and
the diagnosis cost minutes of conversions on a device for each such test of every run. pytest's
own evaluation of the mark for this call is read (``_pytest.skipping``'s stash key: the
condition, ``run`` and ``raises`` as pytest applies them); ``--runxfail`` diagnoses it, as it
runs the test as unmarked. Where pytest no longer has the key, every failure is diagnosed, as
before."""
from __future__ import annotations

from typing import Optional

#: what the failure says instead of the diagnosis
NOTE = ("diagnosis (--accuracy-diagnose): not run: the test is marked xfail, so this failure is "
        "expected (pytest --runxfail diagnoses it)")


def note_expected_failure(item, state) -> None:
    """At the start of ``item``'s call: whether pytest expects it to fail (``state`` None: the
    plugin holds no session state)."""
    if state is not None:
        state.expected_failure = item if _xfail(item) is not None else None


def _xfail(item):
    if item.config.getoption("runxfail", False):
        return None
    try:
        from _pytest.skipping import xfailed_key
    except ImportError:  # (pytest's private key moved: diagnose, as before)
        return None
    xfailed = item.stash.get(xfailed_key, None)
    return xfailed if xfailed is not None and xfailed.run else None


def skipped_diagnosis(state, nodeid: str, exc_type: type) -> Optional[str]:
    """``NOTE`` where the running test ``nodeid`` is expected to fail with ``exc_type`` (an
    xfail mark's ``raises`` that does not cover it makes the failure a real one), else None."""
    item = getattr(state, "expected_failure", None)
    if item is None or item.nodeid != nodeid:
        return None
    xfailed = _xfail(item)
    if xfailed is None:
        return None
    covered = xfailed.raises is None or issubclass(exc_type, xfailed.raises)
    return NOTE if covered else None
