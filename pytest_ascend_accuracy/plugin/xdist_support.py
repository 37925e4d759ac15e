"""Running under pytest-xdist: this process's worker id and count, and merging worker results.

The worker -> device mapping itself lives in ``backends.devices`` (no pytest there).

``XdistHooks`` holds the hooks that exist only when xdist is loaded; the plugin registers it
only then (``-p no:xdist`` must keep working).
"""
from __future__ import annotations

from typing import Optional


WORKEROUTPUT_KEY = "ascend_accuracy"


def get_worker_id(config) -> Optional[str]:
    """This process's xdist worker id, or None on the controller / without xdist."""
    workerinput = getattr(config, "workerinput", None)
    return workerinput.get("workerid") if workerinput else None


def get_num_workers(config) -> Optional[int]:
    workerinput = getattr(config, "workerinput", None)
    if workerinput and "workercount" in workerinput:
        return int(workerinput["workercount"])
    return None


def is_worker(config) -> bool:
    return hasattr(config, "workerinput")


class XdistHooks:
    """Hooks that exist only when pytest-xdist is loaded (registered by the plugin then)."""

    def __init__(self, state):
        self.state = state

    def pytest_testnodedown(self, node, error):
        """Merge a finished worker's accuracy results and cache counters into the controller."""
        data = getattr(node, "workeroutput", {}).get(WORKEROUTPUT_KEY)
        if data:
            self.state.merge_worker(data)
