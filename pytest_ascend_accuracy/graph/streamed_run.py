"""One run of a ``stream.SegmentedModel``: segments computed in a background thread, up to
``ahead`` of them before the one the caller is writing, their tensors handed over in order.

The caller asks for tensors (``ensure``) and writes them; meanwhile a runner thread computes
the next segments (onnxruntime releases the GIL). With ``ahead=1`` one segment computes while
the caller writes the one before; with ``ahead=2`` a second one may wait, computed, so that a
segment slow to write does not leave onnxruntime idle, at the cost of one more segment's
tensors held (an emulated PP-OCRv4 det 736 run, 42 segments: onnxruntime waited for the writer
60-85 ms of a 0.49 s run with one ahead). The runner holds the tensors that cross into later
segments; the caller holds what it has not yet released. Sessions are built by whichever
side is idle: the caller while it waits for a segment (``_build_ahead``), the runner while it
waits for room (``_Runner._idle_build``). The dump writer is the slower side of an emulated
PP-OCRv4 det 736 run since the runner computes ahead: building after every take as it used to,
it spent ~0.05 s of its 0.38-0.45 s of CPU on sessions (8 alternating fresh-process warm runs:
run+dump median 0.489 s against 0.560 s, the writer's CPU 0.394 s against 0.448 s).
"""
from __future__ import annotations

import threading
from typing import Dict, Iterable, List, Mapping, Optional, Tuple

import numpy as np


class _Runner:
    """The background side of a run: computes segments in order, at most ``ahead`` of them not
    yet taken by the caller, and keeps the tensors later segments read. Holds no reference to
    the ``StreamedRun`` (so a run the caller drops is collected, and closes this)."""

    def __init__(self, model, feeds: Mapping[str, np.ndarray], ahead: int):
        self.model = model
        self.feeds = feeds
        self.ahead = max(1, int(ahead))
        self.cond = threading.Condition()
        self.ready: Dict[int, list] = {}  # computed, not yet taken: segment -> its outputs
        self.carry: Dict[str, object] = {}  # produced tensors a later segment reads
        self.failed: Optional[Tuple[int, BaseException]] = None
        self.upcoming: Optional[int] = None  # the segment computing, or to compute next
        self.stopping = False
        self.finished = False
        self.ran: set = set()  # segments computed in this run (added under the segment's lock)
        self.tried: set = set()  # segments whose session the runner tried to build while idle
        self.caller_waits = False  # the caller is in ``take``, waiting for a segment
        self.thread = threading.Thread(target=self._loop, name="ascend-accuracy-stream",
                                       daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        m = self.model
        try:
            for s, seg in enumerate(m.segments):
                if not seg.outputs:
                    continue
                if not self._wait_for_room(s):
                    return
                try:
                    feeds = {n: (self.carry[n] if n in self.carry else self.feeds[n])
                             for n in seg.inputs}
                    produced = m._run_segment(s, feeds)
                except BaseException as exc:  # handed to the caller when it reaches ``s``
                    with self.cond:
                        self.failed = (s, exc)
                        self.cond.notify_all()
                    return
                del feeds
                with seg.lock:  # a build ahead never builds for a segment that ran (``ran``)
                    self.ran.add(s)
                    if not m.keep_sessions:
                        seg.session = None
                with self.cond:
                    for name, value in zip(seg.outputs, produced):
                        if m.last_segment_read.get(name, -1) > s:
                            self.carry[name] = value
                    for name in [n for n in self.carry if m.last_segment_read.get(n, -1) <= s]:
                        del self.carry[name]
                    self.ready[s] = produced
                    self.cond.notify_all()
                del produced
        finally:
            with self.cond:
                self.finished = True
                self.cond.notify_all()

    def _wait_for_room(self, s: int) -> bool:
        """Wait until segment ``s`` may be computed (fewer than ``ahead`` computed segments
        wait for the caller); False when the run stops. While it waits, the runner builds the
        sessions it is about to need (``_idle_build``), one at a time, looking for room after
        each."""
        while True:
            with self.cond:
                self.upcoming = s
                if self.stopping:
                    return False
                if len(self.ready) < self.ahead:
                    return True
                # the caller waiting for a computed segment takes it at once: no time to build
                build = None if self.caller_waits else self._idle_build(s)
                if build is None:
                    while len(self.ready) >= self.ahead and not self.stopping:
                        self.cond.wait()
                    continue
            build()  # (without the lock: the caller may take a segment meanwhile)

    def _idle_build(self, s: int):
        """A build for the runner to make while the caller writes (the writer is the slower
        side of an emulated PP-OCRv4 det 736 run: the runner waited 0.22-0.27 s of a
        0.45-0.72 s run for room, the writer 0.02-0.07 s for segments): the session of ``s``
        or of one of the ``ahead`` segments after it that has none yet, each tried once; None
        when there is none to build."""
        m = self.model
        if not m.use_arena or self.feeds is None:
            return None
        t, left = s, self.ahead + 1
        while t < len(m.segments) and left:
            seg = m.segments[t]
            if seg.outputs:
                left -= 1
                if seg.session is None and t not in self.tried:
                    self.tried.add(t)
                    return lambda t=t: self._build(t)
            t += 1
        return None

    def _build(self, t: int) -> None:
        m = self.model
        try:
            signature = m.predicted_signature(t, self.feeds)
            if signature is not None:
                m.build_ahead(t, signature, unless=lambda: t in self.ran)
        except Exception:  # (nothing was assigned: the segment's run builds it, and reports why)
            pass

    def take(self, s: int, before=None) -> list:
        """Segment ``s``'s outputs once computed (its exception if it failed). ``before``
        (called without the lock, unless the run failed or ended) is given the segment the
        runner computes now or next, when the caller has to wait for ``s``: the caller builds
        sessions only while it waits, and the runner only while it waits (``_wait_for_room``),
        so neither side's builds delay the slower one."""
        with self.cond:
            waiting = s not in self.ready
        if waiting:
            self._before(s, before)
        with self.cond:
            while s not in self.ready:
                if self.failed is not None and self.failed[0] <= s:
                    raise self.failed[1]
                if self.finished or self.stopping:
                    raise RuntimeError(f"segment {s} was never computed (the run stopped)")
                self.caller_waits = True
                try:
                    self.cond.wait()
                finally:
                    self.caller_waits = False
            produced = self.ready.pop(s)
            self.cond.notify_all()
        return produced

    def _before(self, s: int, before) -> None:
        with self.cond:
            going = self.failed is None and not self.finished and not self.stopping
            upcoming = self.upcoming
        if going and before is not None:
            before(upcoming if upcoming is not None and upcoming >= s else s)

    def held(self) -> List[object]:
        with self.cond:
            return list(self.carry.values()) + [v for out in self.ready.values() for v in out]

    def stop(self) -> None:
        """Stop computing (a segment or an idle session build in progress finishes first:
        at most one build, 1-10 ms); a model that runs once (``keep_sessions=False``) drops
        the sessions built for segments that never ran."""
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
        if self.thread is not threading.current_thread():
            self.thread.join()
        with self.cond:
            self.ready.clear()
            self.carry.clear()
        if not self.model.keep_sessions:
            for s, seg in enumerate(self.model.segments):
                with seg.lock:
                    if s not in self.ran:
                        seg.session = None


class StreamedRun:
    """One run of a ``SegmentedModel``: ``ensure(names)`` runs segments until every name is
    produced; produced wanted tensors land in ``values``, which the caller pops when done.

    Segments are computed in a background thread, up to ``ahead`` of them beyond the one the
    caller takes (see the module docstring)."""

    def __init__(self, model, feeds: Mapping[str, np.ndarray], *, ahead: int = 1):
        self.model = model
        self.feeds = dict(feeds)
        self.values: Dict[str, object] = {}
        self._next = 0
        self._closed = False
        self._wanted = set(model.wanted)
        self._failed: Optional[BaseException] = None
        if model.use_arena and model.reserve and len(model.segments) > 1:
            from .ort_arena import reserve_shared_arena

            reserve_shared_arena(max(seg.nbytes for seg in model.segments))
        self._runner: Optional[_Runner] = _Runner(model, self.feeds, ahead)
        #: most tensor bytes this run held at once (carried, computed ahead, and not yet
        #: released by the caller)
        self.peak_bytes = 0

    @property
    def done(self) -> bool:
        return self._next >= len(self.model.segments)

    def ensure(self, names: Iterable[str]) -> None:
        """Run segments until each of ``names`` (a node output) has been produced."""
        names = list(names)
        need = max((self.model.segment_of.get(n, -1) for n in names), default=-1)
        while self._next <= need:
            self._run_next()
        for name in names:  # a model output that is a model input or an initializer
            if name not in self.model.segment_of and name not in self.values:
                self.values[name] = self._source(name)

    def _source(self, name: str):
        if name in self.feeds:
            return self.feeds[name]
        from .external import initializer_array

        if name in self.model.inits:
            return initializer_array(self.model.inits[name], self.model.folder)
        raise KeyError(f"no node, input or initializer produces {name!r}")

    def run_all(self) -> None:
        while not self.done:
            self._run_next()

    def _build_ahead(self, computing: Optional[int]) -> None:
        """When the caller has to wait for a segment, while the runner computes ``computing``
        (or is about to), build here the sessions of the next ``ahead`` segments with outputs
        that have none (the runner may reach them all before the next take): the runner then
        only computes. With two segments ahead and builds only while waited for, the runner
        built 28-31 of det's 42 sessions itself (52-68 ms on its clock); building one ahead,
        8-12 ms of sessions; ``ahead`` of them, 4 ms (the first). Each input signature comes
        from the tensor info (``predicted_signature``); when that cannot tell, or the build
        fails, the runner builds it when it needs it (and reports the failure there). Only for
        models whose weights fit one segment's budget: the ``ahead`` + 1 sessions alive at once
        never hold a second copy of much. (PP-OCRv4 det 736, 42 segments, a warm check's
        run+dump, building only while waiting, before the runner thread: median 0.545 s against
        0.617 s without, over 10 alternating runs.)"""
        m = self.model
        if computing is None or not m.use_arena or self._runner is None:
            return
        ran, s = self._runner.ran, computing
        for _ in range(self._runner.ahead):  # as far as the runner may get before the next take
            s += 1
            while s < len(m.segments) and not m.segments[s].outputs:
                s += 1
            if s >= len(m.segments):
                return
            if m.segments[s].session is not None:
                continue
            try:
                signature = m.predicted_signature(s, self.feeds)
                if signature is not None:
                    m.build_ahead(s, signature, unless=lambda s=s: s in ran)
            except Exception:  # (nothing was assigned: the runner builds it, and reports why)
                pass

    def _stop(self) -> None:
        """Stop the runner (a segment it is computing finishes first)."""
        if self._runner is not None:
            self._runner.stop()
            self._runner = None

    def close(self) -> None:
        """The caller is done with the run's tensors (it dropped ``values``): stop, and give the
        memory they had in the shared arena back to the system. Once; a run that is collected
        closes itself."""
        self._stop()
        if self._closed:
            return
        self._closed = True
        if self.model.use_arena:
            from .ort_arena import release_shared_arena

            release_shared_arena()
        trim_heap()  # the arena frees into glibc's heap once glibc's mmap threshold has risen

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _run_next(self) -> None:
        m = self.model
        s = self._next
        seg = m.segments[s]
        if not seg.outputs:  # nothing in it is wanted or read later
            self._next = s + 1
            return
        if self._failed is not None:
            raise RuntimeError("this run already failed (see the error it raised then); "
                               "start a new run") from self._failed
        if self._runner is None:
            raise RuntimeError("this run was closed")
        try:
            produced = self._runner.take(s, before=self._build_ahead)
        except BaseException as exc:
            self._failed = exc
            self._stop()
            raise
        held = self._runner.held()
        for name, value in zip(seg.outputs, produced):
            if name in self._wanted:
                self.values[name] = value
        del produced
        sizes = {id(v): getattr(v, "nbytes", 0) for v in held + list(self.values.values())}
        del held
        self.peak_bytes = max(self.peak_bytes, sum(sizes.values()))
        self._next = s + 1
        trim_heap()
        if self.done:
            self._stop()


_LIBC: list = []


def trim_heap() -> None:
    """Give freed heap memory back to the system (glibc ``malloc_trim``), after each segment.

    glibc raises its mmap threshold each time a large block is freed (up to 32 MB), so after
    the first tensors are released the next ones come from the heap, whose freed middle is kept:
    without this the process keeps the peak of every segment (600 MB instead of 260 MB for
    PP-OCRv4 det at 736x736). Trimming costs a few milliseconds; elsewhere than glibc it is a
    no-op."""
    if not _LIBC:
        import sys

        trim = None
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                trim = ctypes.CDLL("libc.so.6").malloc_trim
            except (OSError, AttributeError):
                trim = None
        _LIBC.append(trim)
    if _LIBC[0] is not None:
        _LIBC[0](0)


__all__ = ["StreamedRun", "trim_heap"]
