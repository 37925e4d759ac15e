"""Each hook function's argument names, read once per process that runs tests (the suite's
harness, never what a test checks).

pluggy reads a hook implementation's argument names from ``inspect.signature`` each time a
plugin is registered (``pluggy._hooks.varnames``, called by ``HookImpl`` and ``HookSpec``), and
an in-process ``pytester`` run registers every plugin of a pytest run again: ~50 plugins and
their ~280 hook functions, the same function objects every run (pytest's own modules, this
plugin, xdist, and the methods of the plugin objects each run makes anew). Measured in one
process, 6 x 15 in-process runs of a one-line passing test file each way, alternating: 53-98 ms
of CPU a run with pluggy's own function, 41-52 ms with this one (2026-12-07, pluggy 1.6.0).

``read_once`` replaces ``varnames`` with one that keeps, per function (a method's underlying
function, a class) held weakly, what pluggy's own returned for it the first time, and gives
anything else (a callable object) to pluggy's own. The names are those of the function's
signature, which does not change while the suite runs; an inner run's own conftest and test
functions are new objects each run, looked up afresh and let go with them.
"""
from __future__ import annotations

import inspect
import weakref

import pluggy._hooks

#: what ``read_once`` replaces, as this module found it
REAL = pluggy._hooks.varnames


def _key(func):
    """(object the names are read from, whether a bound method's first name is dropped), or
    None where nothing is kept."""
    if inspect.isclass(func) or inspect.isfunction(func):
        return func, False
    if inspect.ismethod(func) and inspect.isfunction(func.__func__):
        return func.__func__, True
    return None


def read_once(monkeypatch) -> None:
    """Install the memoized ``varnames`` for this process (undone with ``monkeypatch``)."""
    real = REAL
    kept = weakref.WeakKeyDictionary()

    def varnames(func):
        key = _key(func)
        if key is None:
            return real(func)
        names = kept.setdefault(key[0], {})
        if key[1] not in names:
            names[key[1]] = real(func)
        return names[key[1]]

    monkeypatch.setattr(pluggy._hooks, "varnames", varnames)
