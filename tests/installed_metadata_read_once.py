"""The installed distributions' metadata, read once per process that runs tests (the suite's
harness, never what a test checks).

Every pytest run reads the metadata of every installed distribution, three times: pluggy's
``load_setuptools_entrypoints`` reads each one's ``entry_points.txt`` to find the pytest11
plugins; ``Config._mark_plugins_for_rewrite`` reads them again and lists every file of each
distribution that has a plugin (this repository's ``pytest_ascend_accuracy.egg-info``, which
``pip install -e .`` leaves in the checkout and which ``python -m pytest`` finds on ``sys.path``
beside the installed one, lists 397) to pick the modules to rewrite; the terminal's header parses
each plugin distribution's ``METADATA`` for its version. An in-process ``pytester`` run is a whole
pytest run, so each of the suite's ~900 paid it again: 10-14% of a serial run's main-thread time
(py-spy, 2026-12-06), for files nobody changes while the suite runs.

``read_once`` makes ``importlib.metadata.distributions()`` give, for the ``sys.path`` it is asked
on, the same distribution objects each time, each reading a file of its metadata once and parsing
its entry points, file list and metadata once; and memoizes pytest's ``_iter_rewritable_modules``
by the file names it is given. A different ``sys.path`` (a test's ``syspathinsert``) is looked up
afresh, and ``distributions(...)`` with arguments is the library's own. Which plugins load, in
which order and under which names, and which modules are rewritten, are what they were.
"""
from __future__ import annotations

import functools
import importlib.metadata as metadata
import sys

import _pytest.config

#: what ``read_once`` replaces, as this module found them
REAL = {"distributions": metadata.distributions,
        "_iter_rewritable_modules": _pytest.config._iter_rewritable_modules}


class _ReadOnce(metadata.PathDistribution):
    """A ``PathDistribution`` whose files and parsed fields are read once."""

    def __init__(self, path):
        super().__init__(path)
        self._texts = {}

    def read_text(self, filename):
        if filename not in self._texts:
            self._texts[filename] = super().read_text(filename)
        return self._texts[filename]

    @functools.cached_property
    def metadata(self):
        return super().metadata

    @functools.cached_property
    def entry_points(self):
        return super().entry_points

    @functools.cached_property
    def files(self):
        return super().files


def read_once(monkeypatch) -> None:
    """Install both memoizations for this process (undone with ``monkeypatch``)."""
    real_distributions = REAL["distributions"]
    by_path = {}

    def distributions(**kwargs):
        if kwargs:
            return real_distributions(**kwargs)
        key = tuple(sys.path)
        if key not in by_path:
            by_path[key] = tuple(_ReadOnce(d._path) if isinstance(d, metadata.PathDistribution)
                                 else d for d in real_distributions())
        return iter(by_path[key])

    real_rewritable = REAL["_iter_rewritable_modules"]
    names_of = {}

    def iter_rewritable_modules(package_files):
        files = tuple(package_files)
        if files not in names_of:
            names_of[files] = tuple(real_rewritable(files))
        return iter(names_of[files])

    monkeypatch.setattr(metadata, "distributions", distributions)
    monkeypatch.setattr(_pytest.config, "_iter_rewritable_modules", iter_rewritable_modules)
