"""``ascend-accuracy cache``: what the conversion/golden cache holds, and pruning it.

Without options it lists the cache by namespace (entries, size) and the total; ``--entries``
lists every entry, least recently used first. ``--max-size 2GB`` evicts least-recently-used
entries until the cache fits, ``--clear`` evicts everything; entries that a running pytest
session holds a lease on (in any container of this host: ``core.cache_lease``), or another
process builds, are kept and said so. Exit status 0, 2 on bad input.
"""
from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

from ..core.locations import DEFAULT_CACHE_DIR, path_under
from ..errors import ConfigError
from .app import EXIT_OK, Command, add_command


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", nargs="?", default=".",
                   help="what you pass to pytest (default: .): the cache is the one `pytest "
                        "PATH` run from here uses: --accuracy-cache-dir in PYTEST_ADDOPTS or "
                        "its ini file's addopts (relative to here), else its ini file's "
                        "ascend_accuracy_cache_dir (-o there overrides it; relative to the "
                        "rootdir), else .ascend-accuracy under its rootdir")
    p.add_argument("--cache-dir", default=None,
                   help="the cache directory itself (instead of finding it from PATH)")
    p.add_argument("--entries", action="store_true",
                   help="list every entry (least recently used first)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--max-size", metavar="SIZE",
                       help="evict least-recently-used entries until the cache holds at most "
                            "SIZE (e.g. 2GB, 500MB; a number without a unit is bytes, "
                            "refused below 1 MB: 500B)")
    group.add_argument("--clear", action="store_true",
                       help="evict every entry no running process holds")


def _run(args: argparse.Namespace) -> int:
    from ..core.cache import Cache
    from ..core.cache_size import (MANIFEST, tree_size, entries, format_size, parse_size,
                                   prune, unfinished_builds, broken_slots)

    root, named, bound = _cache_of(args)  # named: --cache-dir, PYTEST_ADDOPTS, the ini file...
    found = "" if args.cache_dir is not None else f" ({named})"
    if not root.exists():  # a misspelled --cache-dir: the folders beside it nearest its name
        from ..core.closest_paths import closest_in_folder

        print(f"cache {root}: empty (the directory does not exist)"
              f"{closest_in_folder(root, True, str(root))}{found}")
        return EXIT_OK
    if not root.is_dir():
        raise ConfigError(named, f"{root} is not a directory")
    if not any(root.iterdir()):
        print(f"cache {root}: empty")
        return EXIT_OK
    if not (root / ".locks").is_dir() and not any(root.glob(f"*/??/*/{MANIFEST}")):
        # (a cache's first lookup makes .locks; every finished entry has its manifest)
        raise ConfigError(named, f"{root} is not an ascend-accuracy cache (no .locks folder, no "
                                 f"entry with a {MANIFEST}): nothing in it is listed or removed")
    cache = Cache(root)
    if args.clear or args.max_size is not None:
        limit = 0 if args.clear else parse_size(args.max_size, "--max-size")
        if limit is None:
            raise ConfigError("--max-size", f"expected a size such as 2GB, got {args.max_size!r}")
        done = prune(cache, limit)
        n = len(done.removed)
        dead = (f" and {done.dead_builds} unfinished build{'s' if done.dead_builds != 1 else ''} "
                f"of killed processes ({format_size(done.dead_bytes)})" if done.dead_builds else "")
        broken = (f" and {done.broken} link{'s' if done.broken != 1 else ''} or file"
                  f"{'s' if done.broken != 1 else ''} where an entry's folder goes"
                  if done.broken else "")
        print(f"cache {root}: removed {_entries(n)} "
              f"({format_size(done.freed)}){dead}{broken}; {format_size(done.total_after)} left")
        for e in done.kept_held:
            print(f"  kept {e.namespace}/{e.key[:12]} ({format_size(e.size)}): "
                  f"{e.why or 'in use by ' + e.held_by}")
        return EXIT_OK
    listed = entries(cache)
    by_ns = defaultdict(lambda: [0, 0])
    for e in listed:
        by_ns[e.namespace][0] += 1
        by_ns[e.namespace][1] += e.size
    total = sum(e.size for e in listed)
    print(f"cache {root}: {_entries(len(listed))}, {format_size(total)}{bound}{found}")
    width = max([12] + [len(ns) for ns in by_ns])  # a dataset reference's name is long
    for ns in sorted(by_ns):
        count, size = by_ns[ns]
        print(f"  {ns:<{width}} {_entries(count):>13}  {format_size(size):>10}")
    # folders the plugin keeps here that are not entries (--accuracy-diagnose's files)
    for other in sorted(root.iterdir()):
        if other.is_dir() and not other.name.startswith(".") and other.name not in by_ns \
                and not all(c.is_dir() and len(c.name) == 2 for c in other.iterdir()):
            print(f"  and {other.name}/ ({format_size(tree_size(other))}): not cache entries, "
                  f"never pruned or cleared")
    builds = unfinished_builds(cache)
    for state, these in (("running now", [b for b in builds if not b.dead]),
                         ("of killed processes, removed by the next prune (--max-size or "
                          "--clear, or a bounded session)", [b for b in builds if b.dead])):
        if these:
            print(f"  and {len(these)} unfinished build{'s' if len(these) != 1 else ''} "
                  f"({format_size(sum(b.size for b in these))}, not counted above) {state}")
    broken = broken_slots(cache)
    if broken:  # (a trial: a file left by a partial restore was listed nowhere)
        print(f"  and {len(broken)} link{'s' if len(broken) != 1 else ''} or file"
              f"{'s' if len(broken) != 1 else ''} where an entry's folder goes (not entries; "
              f"--clear removes them, a build of the key replaces each): "
              + ", ".join(str(p.relative_to(root)) for p in broken[:3])
              + (", ..." if len(broken) > 3 else ""))
    if args.entries:
        from .other_inputs import golden_entry_text

        for e in listed:
            used = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.last_used))
            held = f"  held by {e.held_by}" if e.held_by else ""
            print(f"  {e.namespace}/{e.key[:16]}  {format_size(e.size):>10}  "
                  f"last used {used}{held}")
            made = golden_entry_text(e) if e.namespace == "golden" else ""
            if made:  # which golden is which: its model and inputs (compare DUMP GOLDEN)
                print(f"      {made}")
    return EXIT_OK


def _cache_of(args: argparse.Namespace):
    """(the cache directory, where it was named, its bound) for ``args``: ``--cache-dir`` as
    given, else the one ``pytest PATH`` run from here uses: ``--accuracy-cache-dir`` in
    ``PYTEST_ADDOPTS`` or the ini file's ``addopts`` (relative to here, where pytest runs,
    as the plugin takes the option: ``plugin.settings_values.read_cache_dir``), else the ini
    key (``-o`` first; relative to the rootdir), else the default. The ini file is refused where
    pytest would refuse it: a misspelled key (``core.ini_keys``), a bad value
    (``backends.ini_values``)."""
    from ..backends.ini_values import check_ini_values, read_cache_size
    from ..core.cache_size import format_size
    from ..core.ini_keys import PLUGIN_INI_KEYS, addopts_form, misspelled_ini_key, misspelled_text
    from .pytest_args import added_arguments, option_given, overrides_given
    from .pytest_ini import find_pytest_ini

    if args.cache_dir is not None:
        return Path(args.cache_dir).expanduser(), "--cache-dir", ""
    _check_exists(args.path)
    ini = find_pytest_ini(args.path)
    inifile = _relative(ini.inifile) if ini.inifile else None
    added = added_arguments(ini, inifile)
    overrides = overrides_given(added)
    values = {**ini.values, **{k: o.value for k, o in overrides.items()}}

    def source(key):
        return overrides[key].where if key in overrides else inifile

    misspelled = misspelled_ini_key(values, PLUGIN_INI_KEYS + _PYTEST_INI_KEYS)
    if misspelled is not None:  # the setting it meant would be ignored: another cache pruned
        key = misspelled[0]
        raise ConfigError(source(key) or "ini", misspelled_text(
            *misspelled, overrides[key].value if key in overrides else values.get(key),
            form=addopts_form(ini.inifile), override=key in overrides))
    check_ini_values(values, source)  # what pytest refuses: nothing listed or removed
    key = "ascend_accuracy_cache_dir"
    option = option_given(added, "--accuracy-cache-dir")
    setting = values.get(key, "").strip()
    if option is not None:
        if not option.value.strip():
            raise ConfigError(f"--accuracy-cache-dir in {option.where}",
                              "given with an empty value, which pytest refuses")
        root = path_under(Path.cwd(), option.value)
        where = f"--accuracy-cache-dir in {option.where}"
    elif setting:
        root, where = path_under(ini.rootdir, setting), f"{key} in {source(key)}"
    else:
        root = ini.rootdir / DEFAULT_CACHE_DIR
        where = (f"the default under the rootdir {_relative(ini.rootdir)}"
                 + (f", ini file {inifile}" if inifile else ", no ini file"))
    size = values.get("ascend_accuracy_cache_size", "").strip()
    limit = read_cache_size(size) if size else None  # (checked above, naming its source)
    bound = "" if limit is None else f", bound {format_size(limit)}"
    return Path(_relative(root)), where, bound


#: pytest's own ini keys near one of ours without its prefix: never taken for a misspelling
_PYTEST_INI_KEYS = ("cache_dir", "addopts")


def _check_exists(path: str) -> None:
    """``PATH`` (its file part: ``tests/test_a.py::test_b``) exists, as ``pytest PATH`` needs;
    else an error naming it and the closest names in its folder, before anything is listed or
    removed (a missing path would otherwise find the cache of a folder above it)."""
    from ..errors import closest_text

    given = Path(path.split("::", 1)[0]).expanduser()
    if given.exists():
        return
    folder = given.parent
    try:
        names = [p.name for p in folder.iterdir()] if folder.is_dir() else []
    except OSError:
        names = []
    near = closest_text(given.name, names, n=3)
    where = "" if folder.is_dir() else f"; {folder} is not a directory either"
    raise ConfigError(path, f"file or directory not found (the PATH argument is what you would "
                            f"pass to pytest){near}{where}")


def _entries(n: int) -> str:
    return f"{n} entr{'y' if n == 1 else 'ies'}"


def _relative(path: Path) -> str:
    """``path`` relative to the current directory when under it, else absolute."""
    import os

    rel = os.path.relpath(path)
    return rel if not rel.startswith(os.pardir) else str(path)


add_command(Command("cache", "show what the conversion/golden cache holds; prune it "
                    "(--max-size SIZE, --clear)", _configure, _run))
