"""``core.frozen_heap``: collections inside the block skip what existed before it; everything
returns to the collector afterwards, so garbage among it is still collected, only later."""
import gc
import weakref

import pytest

from pytest_ascend_accuracy.core import frozen_heap as fh


class _Node:
    def __init__(self):
        self.me = self  # a reference cycle: only the cycle collector frees it


@pytest.fixture(autouse=True)
def _collector_on():
    if not gc.isenabled() or gc.get_freeze_count():
        pytest.skip("the collector is off or something froze objects already")
    yield
    assert gc.get_freeze_count() == 0


def test_objects_from_before_are_skipped_inside_and_collected_after():
    before = _Node()
    gone_before = weakref.ref(before)
    with fh.frozen_heap():
        assert gc.get_freeze_count() > 0
        del before
        gc.collect()
        assert gone_before() is not None  # frozen: the collection did not look at it
        during = _Node()
        gone_during = weakref.ref(during)
        del during
        gc.collect()
        assert gone_during() is None  # the block's own garbage is collected as usual
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert gone_before() is None  # back with the collector, and collected


def test_only_the_outermost_block_freezes_and_unfreezes():
    with fh.frozen_heap():
        frozen = gc.get_freeze_count()
        with fh.frozen_heap():
            assert gc.get_freeze_count() == frozen  # nothing frozen twice
        assert gc.get_freeze_count() == frozen  # the inner block's end unfroze nothing
    assert gc.get_freeze_count() == 0


def test_an_exception_still_unfreezes():
    with pytest.raises(RuntimeError):
        with fh.frozen_heap():
            raise RuntimeError("check failed")
    assert gc.get_freeze_count() == 0


def test_a_process_that_froze_objects_itself_or_runs_without_the_collector_is_left_as_it_is():
    gc.freeze()
    try:
        mine = gc.get_freeze_count()
        with fh.frozen_heap():
            assert gc.get_freeze_count() == mine
        assert gc.get_freeze_count() == mine  # not unfrozen by the block
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        with fh.frozen_heap():
            assert gc.get_freeze_count() == 0
    finally:
        gc.enable()
