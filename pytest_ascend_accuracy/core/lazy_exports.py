"""A package's names imported from its modules on first use (PEP 562 ``__getattr__``).

``compare``, ``dump``, ``report`` and ``dataset`` re-export their main names
(``compare_dumps``, ``load_dump``, ``write_csv``, ``check_dataset``...), and importing those
modules imports numpy. Done eagerly in the packages' ``__init__``, importing any module of them
did too: the xdist controller, which runs no check, imported numpy and compare's engine to print
the summary (``report.checked_shapes``, pure text), 0.23-0.4 s on the wall clock after the last
worker ended (benchmarks/bench_check_suite.py). With ``lazy_exports`` a package's own modules
cost only what they import themselves; ``from pytest_ascend_accuracy.compare import
compare_dumps`` works as before, ``dir()`` lists the names, and a name that is also a module's
(``report.failure_text``, the function of ``report/failure_text.py``) stays the name's, as the
eager ``from .failure_text import failure_text`` left it, whichever was imported first.
"""
from __future__ import annotations

import re
import sys
import types
from importlib import import_module
from typing import Any, Dict, Iterable, Mapping

_OWN_MODULE = re.compile(r"^\.[A-Za-z_]\w*$")  # the package's own modules only (layers hold)


class _LazyPackage(types.ModuleType):
    """The package's module object: the import system binding a submodule to the package under
    an exported name of the same name leaves the export there instead."""

    _lazy_where: Dict[str, str] = {}

    def __setattr__(self, name: str, value: Any) -> None:
        if (isinstance(value, types.ModuleType) and name in self._lazy_where
                and value.__name__ == f"{self.__name__}.{name}"):
            return  # (``__getattr__`` gives the export; ``sys.modules`` keeps the module)
        super().__setattr__(name, value)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._lazy_where))


def lazy_exports(package: str, modules: Mapping[str, Iterable[str]]) -> None:
    """Make ``package`` (its ``__name__``, from its ``__init__``) import each name of ``modules``
    (``{".engine": ["compare_dumps", ...]}``, modules of the package itself) from its module the
    first time it is asked for, keeping it in the package's namespace."""
    where: Dict[str, str] = {}
    for module, names in modules.items():
        if not _OWN_MODULE.match(module):
            raise ValueError(f"lazy_exports of {package}: {module!r} is not one of its own "
                             f"modules ('.name')")
        where.update(dict.fromkeys(names, module))
    namespace = sys.modules[package]

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module, package), name)
        setattr(namespace, name, value)
        return value

    namespace.__getattr__ = __getattr__
    namespace.__all__ = list(where)
    namespace.__class__ = type("LazyPackage", (_LazyPackage,), {"_lazy_where": where})


__all__ = ["lazy_exports"]
