import os

import pytest

from pytest_ascend_accuracy.core.cache import Cache, make_key
from pytest_ascend_accuracy.errors import CacheError


def _writer(content=b"om-bytes"):
    calls = []

    def build(tmp):
        calls.append(tmp)
        (tmp / "model.om").write_bytes(content)
    return build, calls


def test_builds_once_then_hits(tmp_path):
    cache = Cache(tmp_path)
    build, calls = _writer()
    key = make_key(model="abc", mode={"precision_mode": "force_fp16"})
    first = cache.get_or_build("om", key, build)
    second = cache.get_or_build("om", key, build)
    assert first == second and len(calls) == 1
    assert (first / "model.om").read_bytes() == b"om-bytes"
    assert cache.stats.as_dict() == {"hits": 1, "misses": 1, "rebuilt": 0}


def test_failed_build_leaves_nothing(tmp_path):
    cache = Cache(tmp_path)

    def boom(tmp):
        (tmp / "half.om").write_bytes(b"x")
        raise RuntimeError("atc died")
    with pytest.raises(RuntimeError):
        cache.get_or_build("om", "k1", boom)
    assert not any(p.name != ".locks" and p.is_file() for p in tmp_path.rglob("*")
                   if ".locks" not in p.parts)
    assert cache.lookup("om", "k1") is None


def test_corrupted_entry_is_detected_and_rebuilt(tmp_path):
    build, calls = _writer()
    path = Cache(tmp_path).get_or_build("om", "k2", build)
    (path / "model.om").write_bytes(b"om-bytez")  # same size, other bytes
    fresh = Cache(tmp_path)
    again = fresh.get_or_build("om", "k2", build)
    assert len(calls) == 2 and fresh.stats.rebuilt == 1
    assert (again / "model.om").read_bytes() == b"om-bytes"


def test_stale_tmp_dir_of_a_killed_builder_is_cleaned(tmp_path):
    cache = Cache(tmp_path)
    stale = cache.entry_path("om", "k3").parent / ".tmp-k3-999-deadbeef"
    stale.mkdir(parents=True)
    (stale / "model.om").write_bytes(b"half")
    build, _ = _writer()
    cache.get_or_build("om", "k3", build)
    assert not stale.exists()


def test_keys_cannot_escape_the_root(tmp_path):
    with pytest.raises(CacheError):
        Cache(tmp_path).entry_path("om", "../../etc")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_root_is_a_clear_error(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(CacheError, match="ro"):
            Cache(ro).get_or_build("om", "k4", _writer()[0])
    finally:
        ro.chmod(0o700)
