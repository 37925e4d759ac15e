"""The one line pytest prints for an error of this package where it keeps its own rendering
(``--tb=no``, ``--tb=line``, ``--tb=native``: the short summary's ``FAILED ... - <message>``,
``--tb=line``'s ``path:line: <message>``): the error's own text, as under the default style.
pytest writes a class outside ``builtins`` with its module, so that line read
``FAILED test_m.py::test_ok - pytest_ascend_accuracy.report.assertion.AccuracyF...``, the
verdict cut off by the module path."""
from __future__ import annotations

PACKAGE = __name__.split(".")[0]


def own_crash_message(report, excinfo) -> None:
    """Set ``report``'s crash message to the text of ``excinfo``'s error, when the error is one
    of this package's and pytest rendered the failure itself (its longrepr has a crash line)."""
    exc = excinfo.value
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is None or not type(exc).__module__.startswith(f"{PACKAGE}."):
        return
    text = str(exc).strip()
    if text:
        crash.message = text


__all__ = ["own_crash_message"]
