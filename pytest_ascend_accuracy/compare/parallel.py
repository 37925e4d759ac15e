"""Tensor pairs measured by forked worker processes, for compares too big for one core.

The metrics are many numpy calls on cache-sized chunks (``kernel``): threads take turns on the
GIL and run slower than one thread (measured on this kernel), so the parallel path forks
processes. A child inherits the matched pairs and their loaders (nothing is pickled on the way
in), takes the next pair index from a shared counter, measures it with the same
``compare_pair`` as a serial compare and sends the row back over its pipe; the parent measures
pairs the same way meanwhile and hands rows on in order as soon as the prefix before them is
complete. The rows are therefore identical to a serial compare's, and progress moves in order.

Never a hang, never a lost row: a child that dies, or that sends nothing for ``STALL_S``
seconds once the parent has no pair left to take, is killed, and the parent measures every pair
it had taken but not returned. Forking is used only on Linux (``available``); Python >= 3.12
warns about forking a process that runs threads (onnxruntime's idle pools): the child only
reads files and runs numpy, so that warning is silenced for the fork itself. The
multiprocessing modules it uses are loaded when the plugin starts
(``core.multiprocessing_preload``): importing them again later can crash CPython 3.11.
"""
from __future__ import annotations

import os
import sys
import time
import warnings
from numbers import Integral
from typing import Callable, Dict, Optional

#: a compare smaller than this (actual + golden bytes) stays in one process: forking costs
#: ~20 ms, a 64 MB compare ~0.1 s
MIN_BYTES = 64 << 20
#: seconds without a row from a child, after the parent ran out of pairs, before it is killed
STALL_S = 60.0

#: figures of the last parallel compare in this process (for benchmarks): processes used and
#: the largest private memory (bytes) a child held
LAST_RUN: Dict[str, int] = {}


def available() -> bool:
    """Whether worker processes can be forked here (Linux)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def processes_for(bytes_total: int, workers: Optional[int]) -> int:
    """How many processes measure a compare of ``bytes_total`` bytes: ``workers`` when given,
    else this process's core share for a compare of at least ``MIN_BYTES``, else 1. A
    ``workers`` below 1 is refused (``ConfigError``), not taken as 1."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, Integral)
                                or workers < 1):
        from ..errors import ConfigError

        raise ConfigError("workers", f"must be 1 or more (or None: this process's core share), "
                                     f"got {workers!r}")
    if not available():
        return 1
    if workers is not None:
        return int(workers)
    if bytes_total < MIN_BYTES:
        return 1
    from ..core.cpu_share import core_share

    return core_share()


def _private_bytes() -> int:
    """This process's private memory (Private_Clean + Private_Dirty of smaps_rollup)."""
    total = 0
    try:
        with open("/proc/self/smaps_rollup", encoding="ascii") as f:
            for line in f:
                if line.startswith(("Private_Clean:", "Private_Dirty:")):
                    total += int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return 0
    return total


def _take(counter) -> int:
    """The next pair index (shared by every process of one compare)."""
    with counter.get_lock():
        index = counter.value
        counter.value += 1
    return index


def _child(measure, count: int, counter, conn) -> None:
    from ..errors import FileReplacedError

    try:
        while True:
            index = _take(counter)
            if index >= count:
                break
            conn.send((index, measure(index)))
        conn.send(("done", _private_bytes()))
    except FileReplacedError:  # ends the compare: the parent measures this pair and raises it
        pass  # (escaping, it printed a traceback per child, H102)
    finally:
        conn.close()


def measure_in_processes(count: int, measure: Callable[[int], object], processes: int,
                         on_row: Callable[[int, object], None]) -> None:
    """Measure pairs ``0..count-1`` with ``measure(index) -> row`` in ``processes`` processes
    (this one included); ``on_row(index, row)`` is called in index order, in this process."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    counter = ctx.Value("q", 0)
    for stream in (sys.stdout, sys.stderr):  # a child flushes on exit: never text twice
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    children = []
    try:
        for _ in range(max(0, min(processes, count) - 1)):
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(measure, count, counter, send), daemon=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # fork with idle threads
                proc.start()
            send.close()
            children.append([proc, recv, True])  # process, pipe, still sending
        _gather(count, measure, counter, children, on_row)
    finally:
        for proc, recv, _ in children:
            if proc.is_alive():
                proc.kill()
            proc.join()
            recv.close()


def _gather(count, measure, counter, children, on_row) -> None:
    rows: Dict[int, object] = {}
    next_out = 0
    private = 0

    def drain(timeout: float = 0.0) -> bool:
        """Take what the children sent; True when something arrived."""
        nonlocal private
        got = False
        for child in children:
            proc, recv, live = child
            while live and recv.poll(timeout):
                timeout = 0.0
                try:
                    msg = recv.recv()
                except (EOFError, OSError):  # died: what it took is measured here
                    child[2] = live = False
                    break
                got = True
                if msg[0] == "done":
                    private = max(private, msg[1])
                    child[2] = live = False
                else:
                    rows[msg[0]] = msg[1]
        return got

    def flush() -> None:
        nonlocal next_out
        while next_out in rows:
            on_row(next_out, rows.pop(next_out))
            next_out += 1

    while True:
        index = _take(counter)
        if index >= count:
            break
        rows[index] = measure(index)
        drain()
        flush()
    waited = time.monotonic()
    while next_out < count and any(c[2] for c in children):
        if drain(0.05):
            waited = time.monotonic()
        flush()
        if time.monotonic() - waited > STALL_S:  # a stuck child: killed on the way out
            for child in children:
                child[2] = False
            break
    for index in range(next_out, count):  # taken by a child that did not return them: here
        if index not in rows:
            rows[index] = measure(index)
    flush()
    deadline = time.monotonic() + 2.0  # the children's last word: their memory figure
    while any(c[2] for c in children) and time.monotonic() < deadline:
        drain(0.05)
    LAST_RUN.clear()
    LAST_RUN.update(processes=len(children) + 1, child_private_bytes=private)


__all__ = ["MIN_BYTES", "STALL_S", "LAST_RUN", "available", "processes_for",
           "measure_in_processes"]
