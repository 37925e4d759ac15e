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


def test_keys_hold_the_package_version(monkeypatch):
    """Another release never reads this one's entries, even where a change to what an entry
    holds forgot to bump that kind's format number."""
    import pytest_ascend_accuracy

    parts = dict(kind="golden", format=5, model="xxh3_128:abc")
    key = make_key(**parts)
    assert make_key(**parts) == key
    monkeypatch.setattr(pytest_ascend_accuracy, "__version__", "0.2.0")
    assert make_key(**parts) != key


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


# -- manifest digests: xxh3_128, old sha256 manifests, digests vouched by the build ----------
def _manifest(entry):
    import json

    from pytest_ascend_accuracy.core.cache import MANIFEST
    return json.loads((entry / MANIFEST).read_text())


def _rewrite_manifest(entry, data):
    import json

    from pytest_ascend_accuracy.core.cache import MANIFEST
    (entry / MANIFEST).write_text(json.dumps(data))


def test_new_manifests_record_xxh3_128(tmp_path):
    from pytest_ascend_accuracy.core.cache import file_digest

    pytest.importorskip("xxhash")
    entry = Cache(tmp_path).get_or_build("om", "k" * 64, _writer()[0])
    data = _manifest(entry)
    assert data["hash"] == "xxh3_128"
    assert data["files"] == {"model.om": [8, file_digest(entry / "model.om", "xxh3_128")]}


def test_an_old_sha256_manifest_still_verifies_and_a_corrupt_one_is_rebuilt(tmp_path):
    from pytest_ascend_accuracy.core.cache import file_sha256

    build, calls = _writer()
    entry = Cache(tmp_path).get_or_build("om", "k" * 64, build)
    # the manifest an older version wrote: sha256, no "hash" field
    _rewrite_manifest(entry, {"files": {"model.om": [8, file_sha256(entry / "model.om")]}, "created": 0})
    cache = Cache(tmp_path)
    assert cache.get_or_build("om", "k" * 64, build) == entry and len(calls) == 1
    assert cache.stats.hits == 1
    (entry / "model.om").write_bytes(b"om-bytez")  # same size, other bytes
    later = Cache(tmp_path)
    assert later.lookup("om", "k" * 64) is None
    later.get_or_build("om", "k" * 64, build)
    assert len(calls) == 2 and later.stats.rebuilt == 1
    assert "hash" in _manifest(entry)  # rebuilt with the current algorithm


def test_a_manifest_of_an_unknown_hash_is_not_trusted(tmp_path):
    build, calls = _writer()
    entry = Cache(tmp_path).get_or_build("om", "k" * 64, build)
    data = _manifest(entry)
    data["hash"] = "md4"
    _rewrite_manifest(entry, data)
    assert Cache(tmp_path).lookup("om", "k" * 64) is None


def test_vouched_digests_are_used_and_unvouched_files_hashed(tmp_path, monkeypatch):
    from pytest_ascend_accuracy.core import cache as cache_mod
    from pytest_ascend_accuracy.core.cache import HASH, Vouched, file_digest, new_hasher

    hashed = []
    real = cache_mod.file_digest
    monkeypatch.setattr(cache_mod, "file_digest", lambda p, *a: hashed.append(p.name) or real(p, *a))

    def build(tmp):
        (tmp / "sub").mkdir()
        for name in ("sub/a.bin", "b.bin", "c.bin"):
            (tmp / name).write_bytes(name.encode() * 100)
        h = new_hasher()
        h.update(b"sub/a.bin" * 100)
        # b.bin vouched with a wrong size (the build's claim is checked): hashed; c.bin not vouched
        return Vouched(HASH, {"sub/a.bin": (900, h.hexdigest()), "b.bin": (1, "0" * 32)})
    entry = Cache(tmp_path).get_or_build("om", "k" * 64, build)
    assert sorted(hashed) == ["b.bin", "c.bin"]
    files = _manifest(entry)["files"]
    assert sorted(files) == ["b.bin", "c.bin", "sub/a.bin"]
    for rel, (size, digest) in files.items():
        assert (entry / rel).stat().st_size == size and file_digest(entry / rel, HASH) == digest
    assert Cache(tmp_path).lookup("om", "k" * 64) == entry  # a fresh process verifies it


def test_wait_false_gives_none_while_another_process_builds(tmp_path):
    """A worker that would wait for another's build can do other work first (YAML checks
    convert and run meanwhile); once the lock is free it builds as usual."""
    from filelock import FileLock

    cache = Cache(tmp_path)
    built = []
    lock = cache.lock_path("golden", "k" * 64)
    lock.parent.mkdir(parents=True)  # (filelock before 3.10 does not make the folder)
    held = FileLock(str(lock))  # another process's lock
    with held.acquire(timeout=1):
        assert cache.get_or_build("golden", "k" * 64, built.append, wait=False) is None
    assert built == []
    entry = cache.get_or_build("golden", "k" * 64, lambda tmp: (tmp / "f").write_text("x"),
                               wait=False)
    assert entry is not None and (entry / "f").read_text() == "x"
    assert cache.get_or_build("golden", "k" * 64, built.append, wait=False) == entry  # cached
    assert built == []


def test_a_wait_in_seconds_takes_a_build_that_ends_within_it(tmp_path):
    """``wait=SECONDS`` (a YAML check once converted: ``EARLY_GOLDEN_WAIT_S``): another
    process's build that ends within it is taken (here: the lock freed after 0.3 s, then built
    under it as usual); one that outlasts it gives None after that long, not after the
    ``lock_timeout``."""
    import threading
    import time

    from filelock import FileLock

    cache = Cache(tmp_path)
    lock = cache.lock_path("golden", "k" * 64)
    lock.parent.mkdir(parents=True)
    taken, freed = threading.Event(), threading.Event()

    def another_builder(hold_s):  # (a lock is its thread's: taken and freed there)
        with FileLock(str(lock)).acquire(timeout=1):
            taken.set()
            time.sleep(hold_s)
        freed.set()

    threading.Thread(target=another_builder, args=(1.0,)).start()
    taken.wait(5)
    start = time.monotonic()
    assert cache.get_or_build("golden", "k" * 64, lambda tmp: None, wait=0.2) is None
    assert 0.2 <= time.monotonic() - start < 1.0
    freed.wait(5)
    taken.clear()
    threading.Thread(target=another_builder, args=(0.3,)).start()
    taken.wait(5)
    entry = cache.get_or_build("golden", "k" * 64, lambda tmp: (tmp / "f").write_text("x"),
                               wait=5.0)
    assert entry is not None and (entry / "f").read_text() == "x"
