"""The cache's size: what it holds (``entries``), its bound (``parse_size`` of ini
``ascend_accuracy_cache_size``) and least-recently-used eviction (``prune``).

Eviction follows the cache's own locking (``core.cache``): an entry is only removed while its
key lock is held (taken without waiting: an entry being built is skipped), an entry a live
process holds a lease on is left in place, and any other is first moved aside in one rename
(put back if a process leased it meanwhile). So a process that looked an entry up keeps its
files however small the bound, and nothing is half-removed in place. Only folders holding an
entry's manifest are entries: nothing else under the root, or in a directory that is no
cache, is ever removed.
``core.cache`` imports this module (never the other way round).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from ..errors import ConfigError

#: an entry's manifest of its files (sizes, sha256), written last by ``core.cache``
MANIFEST = ".manifest.json"
#: ``.locks/<namespace>-<key>.use-<pid>``: process <pid> uses the entry
LEASE = ".use-"
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
    return int(size)


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
    """One cache entry: where, how big, when last used, and which live processes hold it."""

    namespace: str
    key: str
    path: Path
    size: int
    last_used: float
    holders: tuple = ()


def _entry_size(path: Path) -> int:
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


def holders(cache: Cache, namespace: str, key: str, *, drop_dead: bool = False) -> List[int]:
    """Pids of live processes holding a lease on the entry (this one included)."""
    from .atomic_files import pid_alive

    out = []
    for lease in (cache.root / ".locks").glob(f"{namespace}-{key}{LEASE}*"):
        pid = lease.name.rsplit(LEASE, 1)[1]
        if pid.isdigit() and pid_alive(int(pid)):
            out.append(int(pid))
        elif drop_dead:
            try:
                lease.unlink()
            except OSError:
                pass
    return sorted(out)


def _live_leases(cache: Cache) -> Dict[str, List[int]]:
    """``<namespace>-<key>`` -> pids of the live processes leasing it."""
    from .atomic_files import pid_alive

    out: Dict[str, List[int]] = {}
    try:
        names = [p.name for p in (cache.root / ".locks").iterdir()]
    except OSError:
        return out
    alive: Dict[int, bool] = {}
    for name in names:
        stem, sep, pid = name.rpartition(LEASE)
        if sep and pid.isdigit():
            if int(pid) not in alive:
                alive[int(pid)] = pid_alive(int(pid))
            if alive[int(pid)]:
                out.setdefault(stem, []).append(int(pid))
    return out


def entries(cache: Cache) -> List[Entry]:
    """Every finished entry, least recently used first."""
    out = []
    root = cache.root
    if not root.is_dir():
        return out
    leased = _live_leases(cache)  # one listing of .locks, not one per entry
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
                out.append(Entry(ns_dir.name, path.name, path, _entry_size(path), used,
                                 tuple(sorted(leased.get(f"{ns_dir.name}-{path.name}", ())))))
    out.sort(key=lambda e: (e.last_used, e.namespace, e.key))
    return out


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

    @property
    def freed(self) -> int:
        return sum(e.size for e in self.removed)


def prune(cache: Cache, max_bytes: int) -> PruneResult:
    """Evict least-recently-used entries until the cache holds at most ``max_bytes`` (0 clears
    it); entries another process builds or holds (a lease of a live process) stay."""
    from filelock import FileLock, Timeout

    listed = entries(cache)
    result = PruneResult(total_before=sum(e.size for e in listed))
    total = result.total_before
    for entry in listed:
        if total <= max_bytes:
            break
        lock = FileLock(str(cache.lock_path(entry.namespace, entry.key)))
        try:
            lock.acquire(timeout=0)
        except Timeout:  # being built (or evicted) by another process right now
            result.kept_held.append(entry)
            continue
        except OSError:
            continue
        try:
            if _evict(cache, entry):
                result.removed.append(entry)
                total -= entry.size
            else:
                result.kept_held.append(entry)
        finally:
            lock.release()
    result.total_after = total
    _drop_stale_leases(cache)
    for build in unfinished_builds(cache, measure_running=False):
        if build.dead and _drop_dead_build(cache, build.path):
            result.dead_builds += 1
            result.dead_bytes += build.size
    return result


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


def _evict(cache: Cache, entry: Entry) -> bool:
    """Remove the entry unless a live process holds it: held, it is not touched; else it is
    moved aside, and put back if a process leased it meanwhile, or removed. A process leases
    before it looks, so one that looks after the move sees no entry and rebuilds under the
    key lock, which this holds until the entry is gone or back. (Moving a held entry aside
    first, as before, took its files from the process reading them for a moment: a reviewer's
    second session on the same cache failed its reads while a bounded session pruned.)"""
    if holders(cache, entry.namespace, entry.key, drop_dead=True):
        return False
    aside = entry.path.parent / f".evict-{entry.key}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        os.rename(entry.path, aside)
    except OSError:
        return False
    if holders(cache, entry.namespace, entry.key):
        try:
            os.rename(aside, entry.path)
        except OSError:  # pragma: no cover - the key lock keeps the place free
            shutil.rmtree(aside, ignore_errors=True)
            return True
        return False
    shutil.rmtree(aside, ignore_errors=True)
    return True


def _drop_stale_leases(cache: Cache) -> None:
    """Leases of processes that are gone (killed sessions never released theirs), and entries
    a killed pruner had moved aside."""
    from .atomic_files import pid_alive

    for aside in cache.root.glob("*/*/.evict-*"):
        pid = aside.name.split("-")[-2]
        if not (pid.isdigit() and pid_alive(int(pid))):
            shutil.rmtree(aside, ignore_errors=True)

    for lease in (cache.root / ".locks").glob(f"*{LEASE}*"):
        pid = lease.name.rsplit(LEASE, 1)[1]
        if not (pid.isdigit() and pid_alive(int(pid))):
            try:
                lease.unlink()
            except OSError:
                pass
