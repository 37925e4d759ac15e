"""An interrupted run (Ctrl-C) leaves nothing locked and nothing half-written: KeyboardInterrupt
inside a build, SIGINT to a pytest process in the middle of a build, and SIGINT to a pytest
process that is waiting for another process's build."""
import signal

import pytest

from pytest_ascend_accuracy.core.cache import Cache

from .procs import finish, lock_is_free, start, stop, wait_for

pytestmark = pytest.mark.reliability
KEY = "ee" + "3" * 62


def _lock(root):
    return root / ".locks" / f"om-{KEY}.lock"


def test_keyboard_interrupt_inside_a_build(tmp_path):
    cache = Cache(tmp_path / "cache")

    def build(tmp):
        (tmp / "model.om").write_bytes(b"half")
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):  # not swallowed, not turned into another error
        cache.get_or_build("om", KEY, build)
    final = cache.entry_path("om", KEY)
    assert not final.exists() and list(final.parent.iterdir()) == []
    assert lock_is_free(_lock(tmp_path / "cache"))
    entry = cache.get_or_build("om", KEY, lambda tmp: (tmp / "model.om").write_bytes(b"ok"))
    assert (entry / "model.om").read_bytes() == b"ok"


TEST_FILE = '''
import os, time
from pathlib import Path
from pytest_ascend_accuracy.core.cache import Cache

def test_build():
    Path(os.environ["STARTED"]).write_text("about to take the lock")
    def build(tmp):
        (tmp / "model.om").write_bytes(b"half")
        Path(os.environ["FLAG"]).write_text("building")
        time.sleep(600)
    Cache(Path(os.environ["ROOT"])).get_or_build("om", os.environ["KEY"], build)
'''


def _pytest(tmp_path, flag, started=None):
    (tmp_path / "test_build.py").write_text(TEST_FILE)
    env = dict(FLAG=str(flag), ROOT=str(tmp_path / "cache"), KEY=KEY,
               STARTED=str(started or tmp_path / "started"))
    return start("import sys, pytest; sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', "
                 "'test_build.py']))", cwd=tmp_path, env=env)


def test_sigint_to_pytest_in_the_middle_of_a_build(tmp_path):
    flag = tmp_path / "flag"
    proc = _pytest(tmp_path, flag)
    wait_for(flag, proc)
    proc.send_signal(signal.SIGINT)
    out = finish(proc)
    assert proc.returncode == 2 and "KeyboardInterrupt" in out, out  # pytest: interrupted
    cache = Cache(tmp_path / "cache")
    final = cache.entry_path("om", KEY)
    assert not final.exists() and list(final.parent.iterdir()) == []  # temp dir removed too
    assert lock_is_free(_lock(tmp_path / "cache"))
    entry = cache.get_or_build("om", KEY, lambda tmp: (tmp / "model.om").write_bytes(b"ok"))
    assert (entry / "model.om").read_bytes() == b"ok"


HOLDER = """
import os, sys, time
from pathlib import Path
from pytest_ascend_accuracy.core.cache import Cache
root, key, flag, release = sys.argv[1:5]
def build(tmp):
    Path(flag).write_text("holding")
    while not Path(release).exists():
        time.sleep(0.02)
    (tmp / "model.om").write_bytes(b"from the holder")
print(Cache(Path(root)).get_or_build("om", key, build))
"""


def test_sigint_while_waiting_for_another_process_build(tmp_path):
    """Ctrl-C under xdist reaches every worker: the one waiting on the lock stops at once,
    the one building finishes its entry, and nothing is left locked."""
    holder_flag, release = tmp_path / "holding", tmp_path / "release"
    holder = start(HOLDER, tmp_path / "cache", KEY, holder_flag, release)
    try:
        _interrupt_the_waiter(tmp_path, holder, holder_flag, release)
    finally:
        stop(holder)


def _interrupt_the_waiter(tmp_path, holder, holder_flag, release):
    wait_for(holder_flag, holder)
    started = tmp_path / "waiter-started"
    waiter = _pytest(tmp_path, tmp_path / "never", started)
    lock = _lock(tmp_path / "cache")
    wait_for(started, waiter)  # the waiter now blocks on the holder's lock
    waiter.send_signal(signal.SIGINT)
    out = finish(waiter)
    assert waiter.returncode == 2 and "KeyboardInterrupt" in out, out
    assert not lock_is_free(lock)  # still the holder's: the waiter took nothing with it
    release.touch()
    assert finish(holder).strip().endswith(KEY) and holder.returncode == 0
    assert lock_is_free(lock)
    entry = Cache(tmp_path / "cache").lookup("om", KEY)
    assert entry is not None and (entry / "model.om").read_bytes() == b"from the holder"


INTERRUPTED_CHECK = '''
import os, time
from pathlib import Path
import pytest
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

@accuracy(threshold=0.95)
def test_a_fails(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("overflow.onnx")
    check_accuracy(ascend_model("overflow.onnx").run(inputs), golden_dump("overflow.onnx", inputs))

@pytest.fixture
def ran_then_broke(ascend_model):
    ascend_model("passing_mlp.onnx").run(make_inputs("passing_mlp.onnx"))
    raise RuntimeError("setup broke after a run")

def test_a_setup_error(ran_then_broke):
    pass

@accuracy(threshold=0.95)
def test_b_interrupted(ascend_model):
    ascend_model("passing_mlp.onnx").run(make_inputs("passing_mlp.onnx"))
    Path(os.environ["FLAG"]).write_text("dumped")
    time.sleep(600)
'''


def test_ctrl_c_removes_the_interrupted_tests_dumps_and_keeps_the_failed_ones(tmp_path):
    """An interrupted test neither passed nor failed: its dumps stayed in pytest's temp dir (a
    det model's 329 MB, review helper), kept three sessions long. Now they go; a failed test's
    dumps stay for inspection."""
    import onnx

    from pytest_ascend_accuracy.testing import models

    for name in ("overflow", "passing_mlp"):
        onnx.save(models.MODELS[name](), str(tmp_path / f"{name}.onnx"))
    (tmp_path / "test_ctrl_c.py").write_text(INTERRUPTED_CHECK)
    flag, basetemp = tmp_path / "flag", tmp_path / "bt"
    proc = start("import sys, pytest; sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', "
                 f"'--basetemp={basetemp}', 'test_ctrl_c.py']))", cwd=tmp_path,
                 env=dict(FLAG=str(flag)))
    wait_for(flag, proc)
    assert list(basetemp.glob("test_b_interrupted*/ascend-dumps/dump-*"))  # there before
    proc.send_signal(signal.SIGINT)
    out = finish(proc)
    assert proc.returncode == 2 and "KeyboardInterrupt" in out, out
    assert not [p for p in basetemp.glob("test_b_interrupted*/**/*") if p.is_file()]
    assert [p for p in basetemp.glob("test_a_fails*/ascend-dumps/**/*") if p.is_file()]
    # a test whose setup errored after a run keeps its dumps too (review helper)
    assert [p for p in basetemp.glob("test_a_setup_error*/ascend-dumps/**/*") if p.is_file()]
