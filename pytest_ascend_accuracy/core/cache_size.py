"""The cache's size: what it holds (``entries``), its bound (``parse_size`` of ini
``ascend_accuracy_cache_size``) and least-recently-used eviction (``prune``).

Eviction follows the cache's own locking (``core.cache``): an entry is only removed while its
key lock and its lease file's exclusive lock are held (``core.cache_lease``; both taken
without waiting: an entry being built, or that a session holds a lease on, in any PID
namespace, is skipped), and it is first moved aside in one rename, then deleted. No session
can take a lease meanwhile (it waits for the lease file), so a process that looked an entry
up keeps its files however small the bound, and nothing is half-removed in place. Only
folders holding an entry's manifest are entries: nothing else under the root, or in a
directory that is no cache, is ever removed.
``core.cache`` imports this module (never the other way round).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, List, Optional, Tuple

from ..errors import ConfigError
from . import cache_lease
from .lock_files import unlink_quiet

#: an entry's manifest of its files (sizes, sha256), written last by ``core.cache``
MANIFEST = ".manifest.json"
#: ``.locks/<namespace>-<key>.use-<pid>``: the pid leases of earlier releases, judged by pid
#: (wrong across PID namespaces); nothing reads them now, and a prune removes them
LEGACY_LEASE = ".use-"
#: ``Cache`` (``core.cache``) is only passed in: this module sits below it
Cache = Any

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20,
          "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30, "T": 1 << 40, "TB": 1 << 40,
          "TIB": 1 << 40}


def parse_size(text, where: str = "ascend_accuracy_cache_size") -> Optional[int]:
    """``"2GB"``, ``"500 MB"``, ``"1.5G"``, ``"1048576"`` -> bytes (binary units: 1 GB = 2**30);
    empty or ``"none"`` -> None (unbounded)."""
    if text is None:
        return None
    s = str(text).strip()
    if s.lower() in ("", "none", "unbounded"):
        return None
    size = _read_size(s)
    if size is None:
        near = _closest_size(s)
        raise ConfigError(where, f"expected a size such as 2GB, 500MB or 1048576 (bytes), "
                                 f"got {s!r}" + (f"; closest: {near!r}" if near else ""))
    if size != int(size) and (int(size) == 0 or re.fullmatch(r"[\d.]+\s*[bB]?", s)):
        # 0.5 read as 0 cleared the cache on every build: a byte count is whole. A bare
        # fraction lacks its unit: rounding it to bytes ('1') would clear the cache if pasted
        number = s.rstrip("bB").strip()
        raise ConfigError(where, f"{s!r} is {size:g} bytes: a size in bytes must be a whole "
                                 f"number; with a larger unit: {number}GB or {number}MB")
    if re.fullmatch(r"[\d.]+", s) and 0 < size < _BARE_FLOOR:  # (0 is 0 in every unit)
        # a bare number is bytes: '--max-size 500' removed every entry, 1.1 GB, without a word
        # (a trial); below 1 MB a unit is asked for ('500B' still means bytes)
        raise ConfigError(where, f"{s!r} has no unit and would be {s} bytes, which would "
                                 f"evict nearly every entry (a golden or conversion is mostly "
                                 f"megabytes); give the unit: {s}MB or {s}GB ({s}B if bytes "
                                 f"are meant)")
    return int(size)


#: a size given without a unit below this (1 MB) is refused: it reads as bytes
_BARE_FLOOR = 1 << 20


def _read_size(s: str) -> Optional[float]:
    m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]*)", s)
    unit = m.group(2).upper() if m else None
    if m is None or unit not in _UNITS:
        return None
    return float(m.group(1)) * _UNITS[unit]


_UNIT_WORDS = {"BYTE": "B", "BYTES": "B", "KILOBYTE": "KB", "KILOBYTES": "KB", "KBS": "KB",
               "MEGABYTE": "MB", "MEGABYTES": "MB", "MBS": "MB", "GIGABYTE": "GB",
               "GIGABYTES": "GB", "GBS": "GB", "TERABYTE": "TB", "TERABYTES": "TB", "TBS": "TB"}


def _closest_size(s: str) -> Optional[str]:
    """The valid spelling closest to a size ``parse_size`` refuses (``2 gigabytes`` -> ``2GB``,
    ``2,5GB`` -> ``2.5GB``, ``2PB`` -> ``2048TB``, ``1e9`` / ``1_000_000`` -> bytes), or None."""
    t = s.replace("_", "").replace(",", ".").replace(" ", "")
    m = re.fullmatch(r"([0-9.eE+]+?)([A-Za-z]*)", t)
    if m is None:
        return None
    number, unit = m.group(1), m.group(2).upper()
    unit = _UNIT_WORDS.get(unit, unit)
    if unit in ("P", "PB", "PIB"):
        number, unit = f"{_float(number) * 1024:g}" if _float(number) is not None else number, "TB"
    if unit and unit not in _UNITS:
        return None
    value = _float(number)
    if value is None or value < 0:
        return None
    if not unit and value != int(value):
        return None
    text = f"{int(value)}" if not unit else f"{value:g}{unit}"
    if not unit and 0 < value < _BARE_FLOOR:  # (a bare number this small is refused)
        text += "B"
    return text if text != s and _read_size(text) is not None else None


def _float(text: str) -> Optional[float]:
    try:
        return float(text)
    except ValueError:
        return None


def format_size(n: int) -> str:
    """``1536`` -> ``'1.5 KB'`` (binary units, as ``parse_size`` reads them)."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024.0
    return f"{n:.1f} GB"  # pragma: no cover


@dataclass(frozen=True)
class Entry:
    """One cache entry: where, how big, when last used, and whether a session holds it
    (``held_by`` says who, as far as is known: ``holders`` are the ``pid <n> on <host>`` lines
    its lease file records, for people only)."""

    namespace: str
    key: str
    path: Path
    size: int
    last_used: float
    holders: tuple = ()
    held_by: str = ""
    #: why a prune kept it though no session is known to hold it (no file locks here, ...)
    why: str = ""


def _entry_size(path: Path) -> int:
    if path.is_symlink():  # an entry linked from another cache takes no room in this one
        return 0
    try:
        with open(path / MANIFEST, encoding="utf-8") as f:
            files = json.load(f)["files"]
        return sum(int(size) for size, _ in files.values()) + (path / MANIFEST).stat().st_size
    except (OSError, ValueError, KeyError, TypeError):
        return tree_size(path)


def tree_size(path: Path) -> int:
    """Bytes of the files under ``path``; a folder that goes while it is walked (another
    process's build renamed into place) counts as what was read of it, never an error."""
    total = 0
    for folder, _, files in os.walk(path):  # os.walk ignores folders it cannot list
        for name in files:
            try:
                total += os.stat(os.path.join(folder, name), follow_symlinks=False).st_size
            except OSError:
                pass
    return total


def held_by(cache: Cache, namespace: str, key: str) -> str:
    """Who holds a lease on the entry now ("" when no session does), probed without waiting:
    a session in another PID namespace counts, a killed one's lease is gone with it."""
    lease = cache.lease_path(namespace, key)
    if lease in getattr(cache, "_leases", {}) or lease in getattr(cache, "_overflow", ()):
        return "this session"
    if cache_lease.held(lease):
        return _lessees(lease)
    if cache_lease.held(lease.parent / cache_lease.ALL):
        return _ALL_HELD
    return ""


#: why nothing is evicted while a session past its descriptor budget runs
_ALL_HELD = (f"a session using more entries at once than it keeps lease files open for "
             f"(it holds .locks/{cache_lease.ALL}; its end prunes to the bound)")


def _lessees(lease: Path) -> str:
    names = cache_lease.recorded(lease)
    named = f"; the lease file names {', '.join(names)}" if names else ""
    return f"another session (its lease is held{named})"


def entries(cache: Cache, *, probe: bool = True) -> List[Entry]:
    """Every finished entry, least recently used first (``probe``: with who holds each)."""
    out = []
    root = cache.root
    if not root.is_dir():
        return out
    for ns_dir in _subdirs(root):
        # ``<namespace>/<key[:2]>/<key>`` holding the manifest every finished entry has: other
        # folders under the root (diagnoses), or a directory that is no cache, are no entries
        for shard in (d for d in _subdirs(ns_dir) if len(d.name) == 2):
            for path in (d for d in _subdirs(shard) if d.name.startswith(shard.name)
                         and (d / MANIFEST).is_file()):
                try:
                    used = path.stat().st_mtime
                except OSError:
                    continue
                who = held_by(cache, ns_dir.name, path.name) if probe else ""
                names = cache_lease.recorded(cache.lease_path(ns_dir.name, path.name)) \
                    if who else []
                out.append(Entry(ns_dir.name, path.name, path, _entry_size(path), used,
                                 tuple(names), who))
    out.sort(key=lambda e: (e.last_used, e.namespace, e.key))
    return out


#: an unbounded cache a session added to and that holds more than this is said so at its end
#: with the bound to set (audits 32 and 33: 2.4 GB and 4.2 GB within an hour, unseen)
UNBOUNDED_NOTE_BYTES = 2 << 30


def held_bytes(root) -> int:
    """What the finished entries under the cache ``root`` hold, from their manifests."""
    from types import SimpleNamespace

    return sum(e.size for e in entries(SimpleNamespace(root=Path(root)), probe=False))


def _subdirs(directory: Path) -> List[Path]:
    """Visible subdirectories (``.locks``, ``.tmp-*`` and ``.evict-*`` are not entries)."""
    return sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith("."))


@dataclass
class PruneResult:
    """What ``prune`` removed, what it kept and why."""

    removed: List[Entry] = field(default_factory=list)
    kept_held: List[Entry] = field(default_factory=list)
    total_before: int = 0
    total_after: int = 0
    #: unfinished builds of killed processes removed (``unfinished_builds``): count, bytes
    dead_builds: int = 0
    dead_bytes: int = 0
    #: links and files found where an entry's folder goes (``broken_slots``), removed
    broken: int = 0

    @property
    def freed(self) -> int:
        return sum(e.size for e in self.removed)


def prune(cache: Cache, max_bytes: int) -> PruneResult:
    """Evict least-recently-used entries until the cache holds at most ``max_bytes`` (0 clears
    it); entries another process builds or a session holds a lease on stay."""
    from filelock import FileLock, Timeout

    listed = entries(cache, probe=False)
    result = PruneResult(total_before=sum(e.size for e in listed))
    total = result.total_before
    every = None  # .locks/all.lease, held exclusively through the prune
    clear = max_bytes == 0 and bool(listed)  # every entry goes, one of no size too (a link)
    if total > max_bytes or clear:
        try:
            every = cache_lease.try_exclusive(cache.root / ".locks" / cache_lease.ALL)
        except OSError:  # no .locks to lock in: no session could have leased anything
            every = -1
    try:
        for entry in listed:
            if total <= max_bytes and not clear:
                break
            if entry.size == 0 and not clear:  # a linked entry: evicting it frees nothing
                continue
            if every is None:  # a session past its descriptor budget holds every entry
                result.kept_held.append(replace(entry, held_by=_ALL_HELD))
                continue
            lock = FileLock(str(cache.lock_path(entry.namespace, entry.key)))
            try:
                lock.acquire(timeout=0)
            except Timeout:  # being built (or evicted) by another process right now
                result.kept_held.append(replace(
                    entry, held_by="another process building it (its key lock is held)"))
                continue
            except OSError as exc:
                result.kept_held.append(replace(entry, why=_cannot_lock(exc, "its key lock")))
                continue
            try:
                who, why = _evict(cache, entry)
                if not who and not why:
                    result.removed.append(entry)
                    total -= entry.size
                elif why:
                    result.kept_held.append(replace(entry, why=why))
                else:
                    names = cache_lease.recorded(cache.lease_path(entry.namespace, entry.key))
                    result.kept_held.append(replace(entry, held_by=who, holders=tuple(names)))
            finally:
                lock.release()
    finally:
        if every is not None and every >= 0:
            cache_lease.release(every)
    result.total_after = total
    _drop_stale_leases(cache)
    for build in unfinished_builds(cache, measure_running=False):
        if build.dead and _drop_dead_build(cache, build.path):
            result.dead_builds += 1
            result.dead_bytes += build.size
    if max_bytes == 0:  # a clear: what no build can replace goes too
        result.broken = _drop_broken_slots(cache)
    return result


def broken_slots(cache: Cache) -> List[Path]:
    """Links and files where an entry's folder goes (``<namespace>/<key[:2]>/<key>``): no entry
    (``entries`` lists folders), and each build of that key clears it
    (``cache.clear_slot``)."""
    if not cache.root.is_dir():
        return []
    return [p for ns in _subdirs(cache.root) for shard in _subdirs(ns) if len(shard.name) == 2
            for p in sorted(shard.iterdir()) if p.name.startswith(shard.name) and _broken(p)]


def _broken(path: Path) -> bool:
    """A file, or a link to no finished entry (a link to one is an entry: ``entries``)."""
    if path.is_symlink():
        return not (path / MANIFEST).is_file()
    return not path.is_dir()


def _remove(path: Path) -> None:
    """A folder's tree, or the link itself (``rmtree`` refuses a link without a word)."""
    if path.is_symlink():
        path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


def _drop_broken_slots(cache: Cache) -> int:
    from filelock import FileLock, Timeout

    dropped = 0
    for path in broken_slots(cache):
        lock = FileLock(str(cache.lock_path(path.parent.parent.name, path.name)))
        try:
            lock.acquire(timeout=0)
        except (Timeout, OSError):
            continue  # being built right now: the build clears it
        try:  # looked at again under the lock: a build may have put the entry there since
            # the listing (a review: the entry a session had just built was removed), and a
            # folder is never removed here, only a link or a file
            if os.path.lexists(path) and _broken(path):
                path.unlink()
                dropped += 1
        except OSError:
            pass
        finally:
            lock.release()
    return dropped


@dataclass(frozen=True)
class UnfinishedBuild:
    """A ``.tmp-<key>-*`` directory: a build running now, or (``dead``) one whose process was
    killed (SIGKILL, the out-of-memory killer). A dead one is not an entry and counts against
    no bound; ``prune`` removes it (only a later build of the same key did before, and a
    changed model never builds that key again)."""

    path: Path
    size: int
    dead: bool


def unfinished_builds(cache: Cache, *, measure_running: bool = True) -> List[UnfinishedBuild]:
    """Every unfinished build in the cache (a running one's size 0 unless ``measure_running``).
    A builder holds its key's lock while it writes, so the lock taken without waiting proves
    the build dead, whatever process ids say (another container sharing the cache has its
    own)."""
    from filelock import FileLock, Timeout

    out = []
    for tmp in sorted(cache.root.glob("*/??/.tmp-*")):
        lock = FileLock(str(_build_lock(cache, tmp)))
        try:
            lock.acquire(timeout=0)
        except (Timeout, OSError):
            out.append(UnfinishedBuild(tmp, tree_size(tmp) if measure_running else 0, dead=False))
            continue
        try:
            out.append(UnfinishedBuild(tmp, tree_size(tmp), dead=True))
        finally:
            lock.release()
    return out


def _build_lock(cache: Cache, tmp: Path) -> Path:
    key = tmp.name[len(".tmp-"):].split("-", 1)[0]
    return cache.lock_path(tmp.parent.parent.name, key)


def _drop_dead_build(cache: Cache, tmp: Path) -> bool:
    """Remove a dead build's directory under its key's lock (not if a new build took it)."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(_build_lock(cache, tmp)))
    try:
        lock.acquire(timeout=0)
    except (Timeout, OSError):
        return False
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        return not tmp.exists()
    finally:
        lock.release()


def _evict(cache: Cache, entry: Entry) -> Tuple[str, str]:
    """Remove the entry (its key lock held) unless a session holds a lease on it: ``("", "")``
    when removed, else (who holds it, "") or ("", why it could not be removed). The lease
    file's exclusive lock is held until the entry and the lease file are gone: a session that
    comes meanwhile waits, then finds no entry and builds it under the key lock. The entry is
    moved aside in one rename, then deleted: a pruner killed midway leaves no half entry in
    place. Where no lock can be taken (no ``fcntl``, a file system refusing ``flock``) the entry
    is kept and said so, never evicted: no session's lease can be seen there, and removing an
    entry a running session uses fails its tests, where an unbounded cache only costs disk."""
    lease = cache.lease_path(entry.namespace, entry.key)
    try:
        fd = cache_lease.try_exclusive(lease)
    except OSError as exc:
        return "", _cannot_lock(exc, f"its lease file {lease}")
    if fd is None:
        return held_by(cache, entry.namespace, entry.key) or _lessees(lease), ""
    try:
        aside = entry.path.parent / f".evict-{entry.key}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            os.rename(entry.path, aside)
        except OSError as exc:
            return "", f"cannot move it aside to remove it: {exc.strerror or exc}"
        _remove(aside)  # (an entry linked from another cache: the link goes, not its files)
    finally:
        cache_lease.remove_locked(lease, fd)
    return "", ""


def _cannot_lock(exc: OSError, what: str) -> str:
    """Why an entry stays whose lock could not be taken (``exc``)."""
    if exc.errno in cache_lease.REFUSING:
        return f"{cache_lease.REFUSED}: {exc.strerror or exc}"
    return f"cannot lock {what}: {exc.strerror or exc}"


def _drop_stale_leases(cache: Cache) -> None:
    """Entries a killed pruner had moved aside (no one puts an entry back: any ``.evict-*`` is
    garbage), lease files of entries that are gone (under their exclusive lock: a session
    building the entry holds it), and the pid leases of earlier releases."""
    for aside in cache.root.glob("*/*/.evict-*"):
        _remove(aside)
    locks = cache.root / ".locks"
    try:
        names = [p.name for p in locks.iterdir()]
    except OSError:
        return
    for name in names:
        if LEGACY_LEASE in name:
            unlink_quiet(locks / name)
            continue
        stem = name[:-len(cache_lease.SUFFIX)] if name.endswith(cache_lease.SUFFIX) else ""
        namespace, _, key = stem.rpartition("-")
        if not namespace or not key or (cache.root / namespace / key[:2] / key).exists():
            continue
        try:
            fd = cache_lease.try_exclusive(locks / name)
        except OSError:
            continue
        if fd is not None:
            if (cache.root / namespace / key[:2] / key).exists():
                cache_lease.release(fd)  # built meanwhile (its builder has let go already)
            else:
                cache_lease.remove_locked(locks / name, fd)
