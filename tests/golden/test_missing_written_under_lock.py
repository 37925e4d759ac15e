"""A golden written because it was missing is announced (``on_missing_written``: the plugin's
session registry of goldens no check of the session may pass against) while its lock is still
held: announced after the lock was released, another xdist worker waiting on that lock could
read the golden as USED and check the registry before the write was in it, and pass against the
golden nobody reviewed (H101)."""
import threading

from pytest_ascend_accuracy.golden import stored
from tests.golden.test_stored_record_check import computer


def test_the_write_of_a_missing_golden_is_announced_under_its_lock(tmp_path, model):
    path = tmp_path / "golden" / "mlp"
    compute = computer(model)
    seen = []

    def announced(written):
        result = {}

        def other_process_tries():  # (a FileLock is per thread: another thread stands for it)
            result["got"] = _try(stored.golden_lock(written))

        t = threading.Thread(target=other_process_tries)
        t.start()
        t.join()
        seen.append((written, result["got"]))

    _, status = stored.GoldenPolicy(on_missing_written=announced).obtain(
        path, compute, compute.identity)
    assert status == stored.WRITTEN_MISSING
    assert seen == [(path, False)]  # announced once, while no one else could take the lock
    assert _try(stored.golden_lock(path))  # (which anyone can once obtain has returned)
    _, status = stored.GoldenPolicy(on_missing_written=announced).obtain(
        path, compute, compute.identity)
    assert status == stored.USED and len(seen) == 1  # a golden read as is: not announced


def _try(lock) -> bool:
    from filelock import Timeout

    try:
        lock.acquire(timeout=0.05)
    except Timeout:
        return False
    lock.release()
    return True
