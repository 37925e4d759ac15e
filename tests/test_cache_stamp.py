"""A verified cache entry is not re-read by every later process (the stamp), and the stamp
never vouches for a file written after it (git's racily-clean rule)."""
import time

import pytest

from pytest_ascend_accuracy.core import cache as cache_mod
from pytest_ascend_accuracy.core.cache import STAMP, Cache


def _build(tmp):
    (tmp / "model.om").write_bytes(b"om-bytes" * 1000)
    (tmp / "weights.bin").write_bytes(b"w" * 4096)


@pytest.fixture
def hashed(monkeypatch):
    """Counts the files hashed (the 1 GB reads the stamp saves)."""
    calls = []
    real = cache_mod.file_digest
    monkeypatch.setattr(cache_mod, "file_digest", lambda p, *a: calls.append(p) or real(p, *a))
    return calls


@pytest.fixture
def no_margin(monkeypatch):
    monkeypatch.setattr(cache_mod, "STAMP_MARGIN_NS", 0)  # the files count as old enough now
    monkeypatch.setattr(cache_mod, "FINE_MARGIN_NS", 0)


def test_a_stamped_entry_is_trusted_without_hashing(tmp_path, no_margin, hashed):
    first = Cache(tmp_path)
    entry = first.get_or_build("golden", "k" * 64, _build)
    used = entry.stat().st_mtime_ns  # the entry's last use, which orders eviction
    first.release()  # end of the session: the stamp is written
    assert (entry / STAMP).is_file()
    assert entry.stat().st_mtime_ns == used  # writing the stamp is not a use
    hashed.clear()
    later = Cache(tmp_path)
    assert later.lookup("golden", "k" * 64) == entry
    assert hashed == []  # no file read again


def test_a_file_written_after_the_stamp_is_hashed_and_found_corrupt(tmp_path, no_margin, hashed):
    first = Cache(tmp_path)
    entry = first.get_or_build("golden", "k" * 64, _build)
    first.release()
    time.sleep(0.05)  # past any coarse timestamp tick
    data = bytearray((entry / "model.om").read_bytes())
    data[-1] ^= 0xFF  # same size, other bytes
    (entry / "model.om").write_bytes(bytes(data))
    hashed.clear()
    assert Cache(tmp_path).lookup("golden", "k" * 64) is None  # corrupt: not trusted
    assert hashed  # the stamp no longer matched, so the files were hashed


@pytest.mark.parametrize("how", ["built", "verified"])
def test_a_file_changed_after_this_process_verified_it_gets_no_stamp(tmp_path, no_margin, hashed, how):
    """A file changed between this process's verification (or build) and the end of its session
    is not vouched for by the stamp written then: the next process hashes it and finds it
    corrupt, though the change is old enough by the time the stamp is written."""
    first = Cache(tmp_path)
    entry = first.get_or_build("golden", "k" * 64, _build)
    if how == "verified":
        first = Cache(tmp_path)  # a later session that verifies the entry by hashing it
        assert first.lookup("golden", "k" * 64) == entry
    time.sleep(0.05)  # past any coarse timestamp tick
    data = bytearray((entry / "model.om").read_bytes())
    data[-1] ^= 0xFF  # same size, other bytes
    (entry / "model.om").write_bytes(bytes(data))
    first.release()  # the session ends: its stamp must not cover the changed file
    assert not (entry / STAMP).exists()
    hashed.clear()
    assert Cache(tmp_path).lookup("golden", "k" * 64) is None  # corrupt: not trusted
    assert hashed


def test_fine_timestamps_need_a_tenth_of_a_second_coarse_ones_two(tmp_path, monkeypatch):
    """A rerun right after a build (a tenth of a second later on ext4, xfs, tmpfs...) trusts
    the stamp; on a file system with whole-second timestamps the margin stays two seconds."""
    first = Cache(tmp_path)
    entry = first.get_or_build("golden", "k" * 64, _build)
    ctime = (entry / "model.om").stat().st_ctime_ns
    if not ctime % 1_000_000_000:
        pytest.skip("this file system keeps whole-second timestamps")
    time.sleep(cache_mod.FINE_MARGIN_NS / 1e9 + 0.05)
    # the whole-second margin an hour, not two seconds: a stall of two seconds before the
    # release would have made the files old enough for it as well
    monkeypatch.setattr(cache_mod, "STAMP_MARGIN_NS", 3600 * 10**9)
    real_fstat = cache_mod.os.fstat

    def whole_seconds(fd):  # the stamp's clock as a FAT-like file system reports it
        st = real_fstat(fd)
        return type("St", (), {"st_ctime_ns": st.st_ctime_ns // 10**9 * 10**9})()

    monkeypatch.setattr(cache_mod.os, "fstat", whole_seconds)
    first.release()
    assert not (entry / STAMP).exists()  # 0.15 s is not enough there
    monkeypatch.setattr(cache_mod.os, "fstat", real_fstat)
    second = Cache(tmp_path)
    assert second.lookup("golden", "k" * 64) == entry
    second.release()
    assert (entry / STAMP).is_file()


def test_files_younger_than_the_margin_get_no_stamp(tmp_path, monkeypatch):
    # margins of an hour: "younger" whatever the machine's speed (a 0.1 s stall between the
    # build and the release made the files old enough for FINE_MARGIN_NS, and they got a stamp)
    monkeypatch.setattr(cache_mod, "FINE_MARGIN_NS", 3600 * 10**9)
    monkeypatch.setattr(cache_mod, "STAMP_MARGIN_NS", 3600 * 10**9)
    first = Cache(tmp_path)
    entry = first.get_or_build("golden", "k" * 64, _build)
    first.release()  # built a moment ago: a write in the same timestamp tick could hide
    assert not (entry / STAMP).exists()
    assert not list(entry.glob(f"{STAMP}.*.part"))
