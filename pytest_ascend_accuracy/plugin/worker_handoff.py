"""What an xdist worker hands the controller test by test, with each test's teardown report.

A worker's results used to reach the controller only in its output at the end of its session
(``AccuracyState.to_workeroutput``, merged in ``pytest_testnodedown``). A worker killed before
that (SIGKILL, the OOM killer, ``os._exit``; ``--max-worker-restart`` replaces it) took the
results of the tests it had finished with it: their verdicts were counted as tests that failed
without a check verdict, their dataset pages were listed as another run's in the report index,
the stored goldens and baselines they wrote were missing from the files to check in, and their
cache counters from the cache line (H84, H86). Now each test's check, dataset and pre-processing
records, the stored files written and the cache counters counted since the last test travel
with its teardown report, as its outcome does (a report's extra attributes are serialized with
it); the worker's output at its end holds only what no report carried.

The controller keys what it took by worker and test: under ``--dist each`` every worker runs
every test, and each worker's verdict counts; a test run again on the same worker (a rerun)
replaces that worker's records of it.
"""
from __future__ import annotations

from dataclasses import asdict
from typing import Any, Dict, List, Set, Tuple

#: a teardown report's attribute carrying its test's handoff from a worker
HANDOFF_ATTR = "ascend_accuracy_handoff"

#: the per-test record lists of ``AccuracyState`` handed off, and how each names its test
_LISTS = ("dataset_records", "preprocessing_records")


class WorkerSide:
    """A worker's bookkeeping: which tests' records, how many stored-file writes and which
    cache counts it has sent."""

    def __init__(self, state):
        self.state = state
        self.tests: Set[str] = set()
        self.writes = 0
        self.cache: Dict[str, int] = {}

    def handoff(self, nodeid: str) -> Dict[str, Any]:
        """The test's records, and the writes and cache counts since the last handoff."""
        state = self.state
        counts = state.cache_stats()
        data = {"records": [r.to_dict() for r in state.records if r.nodeid == nodeid],
                "golden_writes": [asdict(g) for g in state.golden_writes[self.writes:]],
                "cache": {k: v - self.cache.get(k, 0) for k, v in counts.items()}}
        for name in _LISTS:
            data[name] = [r for r in getattr(state, name) if r.get("nodeid") == nodeid]
        self.tests.add(nodeid)
        self.writes, self.cache = len(state.golden_writes), counts
        return data

    def remainder(self, output: Dict[str, Any]) -> Dict[str, Any]:
        """``output`` (``to_workeroutput``) less what the reports carried."""
        rest = dict(output)
        rest["records"] = [r for r in output.get("records", ())
                           if r.get("nodeid") not in self.tests]
        for name in _LISTS:
            rest[name] = [r for r in output.get(name, ()) if r.get("nodeid") not in self.tests]
        rest["golden_writes"] = list(output.get("golden_writes", ()))[self.writes:]
        rest["cache"] = {k: int(v) - self.cache.get(k, 0)
                         for k, v in output.get("cache", {}).items()}
        return rest


class ControllerSide:
    """The controller's: what it took from each worker's reports, by (worker, test)."""

    def __init__(self, state):
        self.state = state
        self.taken: Dict[Tuple[str, str], Tuple[List[object], ...]] = {}

    def take(self, worker: str, nodeid: str, data: Dict[str, Any]) -> None:
        from .session import CheckRecord, GoldenWrite

        state = self.state
        old = self.taken.pop((worker, nodeid), None)
        lists = [state.records] + [getattr(state, name) for name in _LISTS]
        if old is not None:  # that worker ran the test again (a rerun): its records replace
            for mine, gone in zip(lists, old):
                mine[:] = [r for r in mine if not any(r is g for g in gone)]
        new = ([CheckRecord.from_dict(r) for r in data.get("records", ())],
               *(list(data.get(name, ())) for name in _LISTS))
        for mine, added in zip(lists, new):
            mine.extend(added)
        self.taken[(worker, nodeid)] = new
        state.golden_writes.extend(GoldenWrite(**g) for g in data.get("golden_writes", ()))
        for k, v in data.get("cache", {}).items():
            state.worker_cache_stats[k] = state.worker_cache_stats.get(k, 0) + int(v)
