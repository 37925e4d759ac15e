"""``core.frozen_heap``: collections inside the block skip what existed before it (garbage then
collected first, not set aside); what the block makes is collected as usual, however many
checks it holds; everything returns to the collector afterwards."""
import gc
import weakref

import pytest

from pytest_ascend_accuracy.core import frozen_heap as fh


class _Node:
    def __init__(self):
        self.me = self  # a reference cycle: only the cycle collector frees it


@pytest.fixture(autouse=True)
def _collector_on(unfrozen_heap):
    if not gc.isenabled() or gc.get_freeze_count() not in (0, fh.AT_IMPORT):
        pytest.skip("the collector is off or something froze objects already")
    yield
    assert gc.get_freeze_count() in (0, fh.AT_IMPORT)


def test_objects_from_before_are_skipped_inside_and_collected_after():
    before = _Node()
    gone_before = weakref.ref(before)
    with fh.frozen_heap():
        assert gc.get_freeze_count() > fh.AT_IMPORT
        del before
        gc.collect()
        assert gone_before() is not None  # frozen: the collection did not look at it
        during = _Node()
        gone_during = weakref.ref(during)
        del during
        gc.collect()
        assert gone_during() is None  # the block's own garbage is collected as usual
    assert gc.get_freeze_count() in (0, fh.AT_IMPORT)
    gc.collect()
    assert gone_before() is None  # back with the collector, and collected


def test_garbage_from_before_the_block_is_collected_not_frozen():
    old = _Node()
    gone = weakref.ref(old)
    del old  # garbage in a cycle: only a collection frees it
    with fh.frozen_heap():
        assert gone() is None


def test_checks_inside_one_block_leave_no_cycles_behind():
    """Many checks in one block (a session's test loop), each leaving a cycle that lived
    through its work (promoted to the oldest generation) as garbage: collections inside the
    block free them, as without it."""
    alive = []
    with fh.frozen_heap():
        for _ in range(30):
            node = _Node()
            node.payload = bytearray(1 << 20)
            alive.append(weakref.ref(node))
            gc.collect()  # the check's own collections: the cycle survives into generation 2
            del node
            work = [[i] for i in range(2000)]  # the work between checks
            del work
        gc.collect()
        assert sum(r() is not None for r in alive) == 0


def test_only_the_outermost_block_freezes_and_unfreezes():
    with fh.frozen_heap():
        frozen = gc.get_freeze_count()
        with fh.frozen_heap():
            assert gc.get_freeze_count() == frozen  # nothing frozen twice
        assert gc.get_freeze_count() == frozen  # the inner block's end unfroze nothing
    assert gc.get_freeze_count() in (0, fh.AT_IMPORT)


def test_an_exception_still_unfreezes():
    with pytest.raises(RuntimeError):
        with fh.frozen_heap():
            raise RuntimeError("check failed")
    assert gc.get_freeze_count() in (0, fh.AT_IMPORT)


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
            assert gc.get_freeze_count() in (0, fh.AT_IMPORT)
    finally:
        gc.enable()


def test_a_count_the_interpreter_started_with_is_not_a_users_freeze(monkeypatch):
    # CPython 3.12.1 starts with 375 objects counted frozen: the block never froze there
    keep = [_Node() for _ in range(10)]
    gc.freeze()  # as the interpreter's own start-up count
    monkeypatch.setattr(fh, "AT_IMPORT", gc.get_freeze_count())
    try:
        with fh.frozen_heap():
            assert gc.get_freeze_count() > fh.AT_IMPORT  # the block froze the heap
        assert gc.get_freeze_count() in (0, fh.AT_IMPORT)
    finally:
        gc.unfreeze()
    del keep


@pytest.mark.skipif(__import__("sys").version_info[:2] == (3, 12),
                    reason="3.12 starts with a count of its own: one at import is taken for it")
def test_a_freeze_made_before_pytest_main_is_left_as_it_is(pytester):
    # a review: a harness froze its objects and then called pytest.main(); the count read at
    # the plugin's import was taken for the interpreter's, and the session's block unfroze them
    import subprocess
    import sys

    pytester.makepyfile(test_kinds="def test_check(check_accuracy):\n    pass\n")
    code = ("import gc\n"
            "gc.collect(); gc.freeze(); n = gc.get_freeze_count()\n"
            "import pytest\n"
            "rc = pytest.main(['-q', '-p', 'no:cacheprovider'])\n"
            "print('KEPT', gc.get_freeze_count() > n // 2 > 0)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=pytester.path, capture_output=True,
                          text=True)
    assert "KEPT True" in done.stdout, done.stdout[-2000:]


def test_pytest_s_collections_at_exit_skip_what_the_loop_froze(pytester):
    # pytest ends each session with five full collections (unraisableexception's clean-up); the
    # test loop's block stays open through them (after one collection at the loop's end), so
    # they walk what was made since, not every object of the imports (0.07-0.13 s at the end
    # of each process that ran a PP-OCR check); the heap is given back afterwards
    import subprocess
    import sys

    import _pytest.unraisableexception as unraisable

    if not hasattr(unraisable, "gc_collect_harder"):
        pytest.skip("this pytest collects no garbage at exit (gc_collect_harder: pytest 8.4+)")
    pytester.makepyfile(test_kinds="def test_check(check_accuracy):\n    pass\n",
                        test_plain="def test_plain():\n    pass\n")
    code = ("import gc\n"
            "import _pytest.unraisableexception as u\n"
            "from pytest_ascend_accuracy.core import frozen_heap as fh\n"
            "seen, harder = [], u.gc_collect_harder\n"
            "u.gc_collect_harder = lambda n: (seen.append(gc.get_freeze_count()), harder(n))\n"
            "import pytest, sys\n"
            "pytest.main(['-q', '-p', 'no:cacheprovider', sys.argv[1]])\n"
            "print('AT EXIT', seen[0] > fh.AT_IMPORT, 'AFTER',\n"
            "      gc.get_freeze_count() in (0, fh.AT_IMPORT))\n")

    def run(test_file: str) -> str:
        done = subprocess.run([sys.executable, "-c", code, test_file], cwd=pytester.path,
                              capture_output=True, text=True)
        return done.stdout

    assert "AT EXIT True AFTER True" in run("test_kinds.py")
    # a session of no accuracy test freezes nothing, as before
    assert "AT EXIT False AFTER True" in run("test_plain.py")


def test_a_cycle_the_tests_dropped_is_still_reported_by_pytest(pytester):
    # a review: an object alive when the loop froze the heap, dropped by a test, with a
    # finalizer that raises: pytest reported it (PytestUnraisableExceptionWarning) when the
    # block ended with the loop; kept frozen through pytest's exit collections it was left to
    # the interpreter's exit. The loop's end collects once with the heap given back
    # (frozen_heap.refreeze), so pytest reports it as before
    import _pytest.unraisableexception as unraisable

    if not hasattr(unraisable, "gc_collect_harder"):
        pytest.skip("this pytest collects no garbage at exit (gc_collect_harder: pytest 8.4+)")
    pytester.makepyfile(test_u=(
        "class Res:\n"
        "    def __init__(self):\n"
        "        self.me = self\n"
        "    def __del__(self):\n"
        "        raise RuntimeError('close failed in __del__')\n"
        "HOLDER = {'res': Res()}\n"
        "def test_check(check_accuracy):\n"
        "    pass\n"
        "def test_drop():\n"
        "    HOLDER.clear()\n"))
    done = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider",
                                         "-W", "error::pytest.PytestUnraisableExceptionWarning")
    # (-W error: pytest raises the warning at its clean-up, a traceback on stderr)
    assert done.ret == 1, done.stdout.str()[-2000:] + done.stderr.str()[-2000:]
    done.stderr.fnmatch_lines(["RuntimeError: close failed in __del__",
                               "*PytestUnraisableExceptionWarning*Res.__del__*"])
