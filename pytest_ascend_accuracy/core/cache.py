"""Content-addressed, process-safe store for converted models and golden dumps.

An entry is a directory ``ROOT/<namespace>/<key[:2]>/<key>`` built by a callback into a private
temporary directory and renamed into place only when the callback succeeded, with a manifest of
its files' sizes and digests (``"hash": "xxh3_128"``, from the ``xxhash`` package: ~10 x faster
than sha256 on a 1 GB golden; a manifest without ``"hash"`` is sha256, as written before, and
still verifies). A callback that hashed the bytes as it wrote them returns them as ``Vouched``
digests, and the manifest takes them instead of reading the files back (sizes are still
stat'ed, and any file the callback did not vouch for is hashed). One ``filelock`` per key makes
exactly one process (xdist worker) build while the others wait and then reuse it. A killed
build leaves only a ``.tmp-*`` directory that the next builder of that key removes, or the next
prune (``core.cache_size``: a bounded cache's build, ``ascend-accuracy cache --max-size`` /
``--clear``) once its key lock is free; an entry whose files no longer match its manifest is
reported as corrupt and rebuilt. Nothing is ever half-written in place.

**Size bound.** ``Cache(root, max_bytes=N)`` (ini ``ascend_accuracy_cache_size``) evicts the
least-recently-used entries after each build, and when the session ends (``release``), until
the cache fits (``prune``). An entry's last
use is its directory's mtime, touched on every hit. A process that uses an entry holds a lease
(``core.cache_lease``: a shared ``flock`` on ``.locks/<namespace>-<key>.lease``, taken before
the entry is looked at, dropped by ``release`` or by the kernel when the process dies);
eviction takes the entry's key lock, then its lease file's exclusive lock, both without
waiting, and removes the entry only while it holds both, so an entry another session holds
(building, or reading its files: in this PID namespace or another container's) is never
evicted, nor taken away for a moment. See ``core.cache_size`` for listing and pruning.

**Verifying without re-reading.** A process hashes an entry's files against the manifest the
first time it uses the entry. When the session ends (``release``) it writes a stamp
(``.verified.json``) of each file's size, mtime, ctime and inode, but only for files that
still stat as they did when it verified (or built) them, and whose ctime is more than a
margin older than the stamp itself, on the file system's own clock
(``FINE_MARGIN_NS``, 0.1 s, where it keeps sub-second timestamps; else ``STAMP_MARGIN_NS``,
2 s). A later process whose files still stat the same trusts the hashes without reading 1 GB
again. This is git's "racily clean"
rule: any write after the stamp gives the file a ctime later than the recorded one, even on
file systems with coarse timestamps, so a changed file is hashed (and found corrupt) as before.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ContextManager, Dict, List, Mapping, Optional, Set, Tuple, Union

from ..errors import CacheError
from . import cache_lease, writer_lock
from .atomic_files import dead_writer_leftovers
from .cache_size import MANIFEST, prune

_LOCKS = ".locks"
STAMP = ".verified.json"
#: a file's ctime must be this much older than the stamp for the stamp to vouch for it, on a
#: file system with whole-second timestamps (FAT keeps two seconds) ...
STAMP_MARGIN_NS = 2_000_000_000
#: ... and on one with sub-second timestamps (set from the kernel's coarse clock: a few ms)
FINE_MARGIN_NS = 100_000_000


def make_key(**parts) -> str:
    """sha256 over a canonical JSON rendering of the parts (model hash, mode, versions...) and
    this package's version: an entry built by one release is never taken for another's, even
    where a change forgot to bump its entry format number."""
    from .. import __version__

    parts = dict(parts, package=__version__)
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


try:
    from xxhash import xxh3_128 as _XXH3
except ImportError:  # pragma: no cover - a dependency; sha256 keeps a broken install working
    _XXH3 = None

#: the digest new manifests record: xxh3_128 (not cryptographic: it detects changed and
#: truncated files, which is all a manifest is for), sha256 where xxhash is not installed
HASH = "xxh3_128" if _XXH3 is not None else "sha256"
#: the algorithm of a manifest that names none (every manifest written before "hash" existed)
LEGACY_HASH = "sha256"


def new_hasher(name: str = HASH):
    """A fresh hash object (``update``/``hexdigest``) of the named manifest algorithm."""
    if name == "sha256":
        return hashlib.sha256()
    if name == "xxh3_128" and _XXH3 is not None:
        return _XXH3()
    raise ValueError(f"unknown manifest hash {name!r}")


def file_digest(path, name: str = HASH, chunk: int = 1 << 20) -> str:
    """The hex digest of a file's bytes under the named manifest algorithm."""
    h = new_hasher(name)
    with open(path, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        if size < chunk:  # most files of a golden: one read, no buffer to allocate and zero
            data = f.read()
            while data:
                h.update(data)
                data = f.read()
            return h.hexdigest()
        buf = bytearray(chunk)
        view = memoryview(buf)
        while True:
            n = f.readinto(buf)
            if not n:
                break
            h.update(view[:n])
    return h.hexdigest()


def file_sha256(path, chunk: int = 1 << 20) -> str:
    return file_digest(path, "sha256", chunk)


@dataclass
class Vouched:
    """What a build callback may return: ``files`` {path relative to the entry: (size,
    digest)} of the bytes it wrote, hashed with ``hash`` as it wrote them (``new_hasher``). The
    manifest records a vouched digest when the file still has that size, and hashes the rest."""

    hash: str = HASH
    files: Dict[str, Tuple[int, str]] = field(default_factory=dict)


def clear_slot(path: Path) -> bool:
    """Empty an entry's place before its build; whether anything was there. A link (to a
    folder, dangling, or a loop) or a file where the entry's folder goes is removed too: a
    trial left one there by a partial restore, and every build of the key then failed with
    "Not a directory" (``rmtree`` ignored it, the rename into place could not replace it)."""
    if path.is_symlink() or (os.path.lexists(path) and not path.is_dir()):
        path.unlink()
        return True
    if path.exists():
        shutil.rmtree(path, ignore_errors=True)
        return True
    return False


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    rebuilt: int = 0

    def as_dict(self) -> Dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "rebuilt": self.rebuilt}


@dataclass
class Cache:
    root: Path
    lock_timeout: float = 3600.0
    stats: CacheStats = field(default_factory=CacheStats)
    #: the size bound in bytes (None: unbounded); enforced after every build and at release
    max_bytes: Optional[int] = None
    #: ``on_build(namespace, key)`` -> a context manager around each build (progress lines)
    on_build: Optional[Callable[[str, str], ContextManager]] = field(default=None, repr=False)
    #: entries this process verified (or built), with each file's stat when it was verified:
    #: a stamp vouches only for files still as they were then
    _verified: Dict[Path, Dict[str, list]] = field(default_factory=dict, repr=False)
    #: lease file -> its open file (None: none could be taken, a read-only cache)
    _leases: Dict[Path, Optional[int]] = field(default_factory=dict, repr=False)
    #: entries leased past ``max_lease_fds``, covered by one lease on every entry
    _overflow: Set[Path] = field(default_factory=set, repr=False)
    _all_fd: Optional[int] = field(default=None, repr=False)
    #: how many entries' lease files this process keeps open (``cache_lease.max_fds``)
    max_lease_fds: Optional[int] = None

    def __post_init__(self):
        self.root = Path(self.root)

    def entry_path(self, namespace: str, key: str) -> Path:
        _check_component(namespace, "namespace")
        _check_component(key, "key")
        return self.root / namespace / key[:2] / key

    def lookup(self, namespace: str, key: str) -> Optional[Path]:
        """The entry if it exists and is intact, else None (never builds)."""
        path = self.entry_path(namespace, key)
        self._lease(namespace, key)
        if self._intact(path):
            _touch(path)
            return path
        return None

    def get_or_build(self, namespace: str, key: str, build: Callable[[Path], Optional[Vouched]],
                     *, wait: Union[bool, float] = True) -> Optional[Path]:
        """Return the entry for ``key``, building it with ``build(tmpdir)`` if needed (which may
        return the ``Vouched`` digests of what it wrote). ``wait=False``: None instead of
        waiting while another process holds the key's lock (is building it); a number: None
        if it still holds it after that many seconds."""
        final = self.entry_path(namespace, key)
        self._lease(namespace, key)  # before looking: a concurrent prune then keeps it
        if self._intact(final):
            self.stats.hits += 1
            _touch(final)
            return final
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            lock_dir = self.root / _LOCKS
            lock_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"cache directory {self.root}: cannot create entries "
                             f"({exc.strerror or exc})") from exc
        from filelock import FileLock, Timeout

        lock = FileLock(str(self.lock_path(namespace, key)))
        if wait is not True:
            try:
                lock.acquire(timeout=0 if wait is False else max(0.0, float(wait)))
            except Timeout:
                return None  # another process is building it
            lock.release()  # free now: build (or find) it below, under the lock as always
        try:
            with lock.acquire(timeout=self.lock_timeout):
                if self._intact(final):  # another process built it while we waited
                    self.stats.hits += 1
                    return final
                if clear_slot(final):  # corrupt, unfinished by an old layout, or no folder
                    self.stats.rebuilt += 1
                self._remove_stale_tmp(final)
                tmp = final.parent / f".tmp-{key}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
                tmp.mkdir()
                try:
                    if self.on_build is not None:
                        with self.on_build(namespace, key):
                            vouched = build(tmp)
                    else:
                        vouched = build(tmp)
                    written = _write_manifest(tmp, vouched if isinstance(vouched, Vouched)
                                              else None)
                    os.rename(tmp, final)
                except BaseException:
                    shutil.rmtree(tmp, ignore_errors=True)
                    raise
                self._verified[final] = _stats_of(final, written)
                self.stats.misses += 1
        except Timeout as exc:
            raise CacheError(f"cache entry {final}: lock {lock.lock_file} still held after "
                             f"{self.lock_timeout:.0f}s") from exc
        except OSError as exc:
            if isinstance(exc, CacheError):
                raise
            raise CacheError(f"cache entry {final}: {exc.strerror or exc}") from exc
        if self.max_bytes is not None:
            try:
                prune(self, self.max_bytes)
            except OSError:  # the build is done; the next prune (or the session's end) retries
                pass
        return final

    # -- leases: entries this process uses are never evicted by another ----------------------
    def lock_path(self, namespace: str, key: str) -> Path:
        """The key's lock file (builders and eviction take it)."""
        return self.root / _LOCKS / f"{namespace}-{key}.lock"

    def lease_path(self, namespace: str, key: str) -> Path:
        """The entry's lease file (``core.cache_lease``)."""
        return self.root / _LOCKS / f"{namespace}-{key}{cache_lease.SUFFIX}"

    def _lease(self, namespace: str, key: str) -> None:
        lease = self.lease_path(namespace, key)
        if lease in self._leases or lease in self._overflow:
            return
        try:
            lease.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            self._leases[lease] = None  # a read-only cache: nothing can evict from it either
            return
        budget = self.max_lease_fds if self.max_lease_fds is not None else cache_lease.max_fds()
        try:
            if len(self._leases) < budget:
                self._leases[lease] = cache_lease.take(lease, self.lock_timeout)
                return
            if self._all_fd is None:  # past the budget: one lease on every entry instead
                self._all_fd = cache_lease.take(lease.parent / cache_lease.ALL,
                                                self.lock_timeout)
            self._overflow.add(lease)
        except TimeoutError:
            raise CacheError(f"cache entry {namespace}/{key}: a prune held its lease "
                             f"{lease} for {self.lock_timeout:.0f}s") from None

    def release(self) -> None:
        """Drop this process's leases (the session is over): its entries may now be evicted,
        and a bounded cache is pruned to its bound now (the builds' prunes had to keep them;
        a session of cache hits only built nothing, so nothing had pruned)."""
        for fd in self._leases.values():
            cache_lease.release(fd)
        cache_lease.release(self._all_fd)
        had_leases = bool(self._leases)
        self._leases.clear()
        self._overflow.clear()
        self._all_fd = None
        for path in sorted(self._verified):
            _write_stamp(path, self._verified[path])
        if had_leases and self.max_bytes is not None:
            try:
                prune(self, self.max_bytes)
            except OSError:  # a read-only or vanished cache: nothing to bound
                pass

    # -- integrity ---------------------------------------------------------------------------
    def _intact(self, path: Path) -> bool:
        manifest = path / MANIFEST
        try:
            with open(manifest, encoding="utf-8") as f:
                data = json.load(f)
            files = data["files"]
            algo = data.get("hash", LEGACY_HASH)
            new_hasher(algo)  # a manifest of an unknown algorithm is not trusted: rebuilt
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return False
        # hash once per process (or never, while a stamp vouches for the files), sizes every time
        full = path not in self._verified and not _stamp_vouches(path, files)
        stats = {}
        try:
            for rel, (size, digest) in files.items():
                p = path / rel
                stats[rel] = _stat_key(p)  # before hashing: a later change shows in the stat
                if stats[rel][0] != size:
                    return False
                if full and file_digest(p, algo) != digest:
                    return False
        except (OSError, ValueError, TypeError):
            return False
        self._verified.setdefault(path, stats)
        return True

    def _remove_stale_tmp(self, final: Path) -> None:
        # we hold the key's lock, so any .tmp dir of this key belongs to a dead builder
        for stale in final.parent.glob(f".tmp-{final.name}-*"):
            shutil.rmtree(stale, ignore_errors=True)


def _touch(path: Path) -> None:
    """Mark the entry as just used (its directory's mtime orders least-recently-used eviction)."""
    try:
        os.utime(path)
    except OSError:
        pass


def _stat_key(p: Path):
    st = p.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _stamp_vouches(path: Path, files: Dict) -> bool:
    """Whether ``path``'s stamp covers exactly the manifest's files, each unchanged since."""
    try:
        with open(path / STAMP, encoding="utf-8") as f:
            stamp = json.load(f)
        recorded = stamp["files"]
        if set(recorded) != set(files):
            return False
        return all(_stat_key(path / rel) == recorded[rel] for rel in files)
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _stats_of(path: Path, rels) -> Dict[str, list]:
    """The stat of each of ``path``'s files ``rels`` now (an entry just built); {} if one is gone."""
    try:
        return {rel: _stat_key(path / rel) for rel in rels}
    except OSError:
        return {}


def _write_stamp(path: Path, verified: Mapping[str, list]) -> None:
    """Record the stat of an entry this process verified, when every file is as it was when
    verified (``verified``: its stat then) and old enough that a later write could not keep its
    ctime (best effort: a read-only cache just hashes again).

    "Old enough" is measured on the file system's own clock: the stamp's temporary file is
    created first and its ctime is "now" (no skew with a network file system's server). A file
    system that keeps sub-second timestamps needs ``FINE_MARGIN_NS`` (its ticks are the
    kernel's coarse clock, milliseconds); one that keeps whole seconds (FAT: two) needs
    ``STAMP_MARGIN_NS``."""
    try:
        with open(path / MANIFEST, encoding="utf-8") as f:
            files = json.load(f)["files"]
        used = path.stat()  # the directory's mtime orders eviction: a stamp is not a use
        token = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        tmp = path / f"{STAMP}.{token}.part"
        try:
            dead_writer_leftovers(path, f"{STAMP}.", ".part")  # killed stampers'
            with writer_lock.holding(path, f"{STAMP}.", token), \
                    open(tmp, "w", encoding="utf-8") as f:
                now = os.fstat(f.fileno()).st_ctime_ns  # the file system's clock
                margin = FINE_MARGIN_NS if now % 1_000_000_000 else STAMP_MARGIN_NS
                recorded = {}
                for rel in files:
                    key = _stat_key(path / rel)
                    if key != verified.get(rel):
                        return  # changed since this process verified it: not vouched for
                    if key[2] > now - margin:
                        return  # too recent to vouch for: the next process hashes and stamps it
                    recorded[rel] = key
                json.dump({"files": recorded, "stamped_ns": now}, f)
                f.flush()
                os.replace(tmp, path / STAMP)  # under the lock: no cleanup takes it for a leftover
        finally:
            if tmp.exists():
                tmp.unlink()
            os.utime(path, ns=(used.st_atime_ns, used.st_mtime_ns))
    except (OSError, ValueError, KeyError, TypeError):
        return


def _write_manifest(directory: Path, vouched: Optional[Vouched] = None) -> List[str]:
    """Write the manifest of ``directory``'s files; returns their relative paths."""
    given: Mapping[str, Tuple[int, str]] = {}
    if vouched is not None and vouched.hash == HASH:
        given = vouched.files
    files = {}
    for rel, size in _walk_files(directory):
        if rel == MANIFEST:
            continue
        known = given.get(rel)
        if known is not None and int(known[0]) == size:
            files[rel] = [size, known[1]]
        else:
            files[rel] = [size, file_digest(directory / rel)]
    # compact: json's C encoder (indent= makes it encode in Python, ~5 x slower)
    data = json.dumps({"hash": HASH, "files": files, "created": time.time()}, separators=(",", ":"))
    tmp = directory / (MANIFEST + ".part")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, directory / MANIFEST)
    return list(files)


def _walk_files(directory: Path):
    """(posix path relative to ``directory``, size) of every regular file under it, sorted."""
    out = []
    stack = [("", os.fspath(directory))]
    while stack:
        prefix, path = stack.pop()
        with os.scandir(path) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    stack.append((prefix + e.name + "/", e.path))
                elif e.is_file():
                    out.append((prefix + e.name, e.stat().st_size))
    return sorted(out)


def _check_component(value: str, what: str) -> None:
    if not value or "/" in value or "\\" in value or value in (".", "..") or value.startswith("."):
        raise CacheError(f"invalid cache {what} {value!r}")
