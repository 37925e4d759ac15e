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


def test_a_stamped_entry_is_trusted_without_hashing(tmp_path, monkeypatch, hashed):
    monkeypatch.setattr(cache_mod, "STAMP_MARGIN_NS", 0)  # the files count as old enough now
    first = Cache(tmp_path)
    entry = first.get_or_build("golden", "k" * 64, _build)
    first.release()  # end of the session: the stamp is written
    assert (entry / STAMP).is_file()
    hashed.clear()
    later = Cache(tmp_path)
    assert later.lookup("golden", "k" * 64) == entry
    assert hashed == []  # no file read again


def test_a_file_written_after_the_stamp_is_hashed_and_found_corrupt(tmp_path, monkeypatch, hashed):
    monkeypatch.setattr(cache_mod, "STAMP_MARGIN_NS", 0)
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


def test_files_younger_than_the_margin_get_no_stamp(tmp_path):
    first = Cache(tmp_path)
    entry = first.get_or_build("golden", "k" * 64, _build)
    first.release()  # built a moment ago: a write in the same timestamp tick could hide
    assert not (entry / STAMP).exists()
    assert not list(entry.glob(f"{STAMP}.*.part"))
