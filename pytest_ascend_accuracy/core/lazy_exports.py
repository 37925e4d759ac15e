"""A package's names imported from its modules on first use (PEP 562 ``__getattr__``).

``compare``, ``dump`` and ``report`` re-export their main names (``compare_dumps``,
``load_dump``, ``write_csv``...), and importing those modules imports numpy. Done eagerly in
the packages' ``__init__``, importing any module of them did too: the xdist controller, which
runs no check, imported numpy and compare's engine to print the summary
(``report.checked_shapes``, pure text), 0.28-0.4 s on the wall clock after the last worker
ended (benchmarks/bench_check_suite.py). With ``lazy_exports`` a package's own modules cost
only what they import themselves; ``from pytest_ascend_accuracy.compare import compare_dumps``
works as before.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any, Callable, Dict, Iterable, Mapping


def lazy_exports(package: str, modules: Mapping[str, Iterable[str]]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package`` that imports each name of ``modules`` (``{".engine":
    ["compare_dumps", ...]}``) from its module the first time it is asked for, and keeps it in
    the package's namespace."""
    where: Dict[str, str] = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module, package), name)
        setattr(import_module(package), name, value)
        return value

    return __getattr__


__all__ = ["lazy_exports"]
