"""The test loop's ``core.frozen_heap`` block, from the loop's start to the end of the config.

A session that runs accuracy tests runs its test loop in ``core.frozen_heap``: garbage
collections during the checks walk what the tests made, not every object of the imports and
the collection. The block does not end with the loop but with the config, after pytest's own
collections at exit: pytest ends every session with five full collections
(``_pytest.unraisableexception``'s clean-up, ``gc_collect_harder``, for unraisable exceptions of
garbage cycles). With the block still open they walk what the tests made -- the process's
objects at the loop's start, after a full collection, were no garbage then and are alive at its
end: modules, the config, the session and its items -- not every object of onnx, onnxruntime,
numpy and the collection: 0.07-0.13 s at the end of each process that ran a PP-OCR check, each
xdist worker included, 0.01-0.06 s so (the 8-check suite of benchmarks/bench_check_suite.py,
serial and ``-n 2``, one run each way).
"""
from __future__ import annotations

from contextlib import ExitStack

import pytest

#: the ``ExitStack`` that holds the test loop's block (``close_after_exit_collections``)
_HEAP_KEY = pytest.StashKey[ExitStack]()


def close_after_exit_collections(config) -> None:
    """At the plugin's ``pytest_configure``: the clean-up that ends the block, registered
    before pytest's ``unraisableexception`` plugin registers its own (pluggy calls a
    later-registered plugin's hooks first, and this plugin registers after pytest's own), so
    the config runs it after that one (clean-ups run last registered first). Registered
    later (the plugin named in a conftest's ``pytest_plugins``), it runs before them, which
    then walk every object, as they did before."""
    stack = ExitStack()
    config.stash[_HEAP_KEY] = stack
    config.add_cleanup(stack.close)


def freeze_for_the_loop(session, accuracy_tests: bool) -> None:
    """At the test loop's start: open the block for a session that runs accuracy tests (not
    an xdist controller, which holds no items, nor ``--collect-only``)."""
    if accuracy_tests and not session.config.option.collectonly:
        from ..core.frozen_heap import frozen_heap

        session.config.stash[_HEAP_KEY].enter_context(frozen_heap())
