"""The test loop's ``core.frozen_heap`` block, from the loop's start to the end of the config.

A session that runs accuracy tests runs its test loop in ``core.frozen_heap``: garbage
collections during the checks walk what the tests made, not every object of the imports and
the collection. pytest ends every session with five full collections
(``_pytest.unraisableexception``'s clean-up, ``gc_collect_harder``), which find garbage cycles
and report what their finalizers raise. Ending the block with the loop handed them every
object of onnx, onnxruntime, numpy and the collection to walk, five times: 0.07-0.13 s at the
end of each process that ran a PP-OCR check, each xdist worker included. So at the loop's end
the block collects once with everything given back (``frozen_heap.refreeze``, which the
plugin's ``pytest_runtestloop`` calls where ``freeze_for_the_loop`` opened the block: what the tests
dropped of the objects frozen at the loop's start is freed there, and what its finalizers
raise is reported as before), sets aside again what is alive, and ends with the config, after
pytest's five collections, which then walk only what was made since the loop ended (on the
8-check PP-OCR suite of benchmarks/bench_check_suite.py, serially: 0.03-0.04 s for the one
collection, 0.001 s for the five). Objects alive at the loop's end that only become garbage
after it (during the terminal summary or a plugin's ``pytest_unconfigure``) are left to the
interpreter's exit: a finalizer's exception there is printed by Python ("Exception ignored
in ..."), not reported by pytest.
"""
from __future__ import annotations

from contextlib import ExitStack

import pytest

#: the ``ExitStack`` that holds the test loop's block (``close_after_exit_collections``)
_HEAP_KEY = pytest.StashKey[ExitStack]()


def close_after_exit_collections(config) -> None:
    """At the plugin's ``pytest_configure``: the clean-up that ends the block, registered
    before pytest's ``unraisableexception`` plugin registers its own (pluggy calls a
    later-registered plugin's hooks first, and this plugin registers after pytest's own: by
    entry point, ``-p``, or a conftest's ``pytest_plugins``), so the config runs it after that
    one (clean-ups run last registered first). Where this plugin is registered only once the
    configure hooks have begun (``pluginmanager.register`` from another plugin's
    ``pytest_configure``), it runs before them, which then walk every object, as before."""
    stack = ExitStack()
    config.stash[_HEAP_KEY] = stack
    config.add_cleanup(stack.close)


def freeze_for_the_loop(session, accuracy_tests: bool) -> bool:
    """At the test loop's start: open the block for a session that runs accuracy tests (not
    an xdist controller, which holds no items, nor ``--collect-only``); whether it did."""
    if not accuracy_tests or session.config.option.collectonly:
        return False
    from ..core.frozen_heap import frozen_heap

    session.config.stash[_HEAP_KEY].enter_context(frozen_heap())
    return True
