"""Running an ONNX model in segments, so every intermediate tensor can be fetched without all
of them being held at once.

Marking every node output as a graph output and fetching them in one ``session.run`` holds
every intermediate tensor of the model at the same time (1.5 GB for PP-OCRv4 det at 736x736,
where a plain inference needs 0.2 GB). ``SegmentedModel`` cuts the node list (which ONNX keeps
in topological order) into consecutive segments whose fetched outputs stay under a byte budget
(sizes from shape inference) and whose initializers stay under a weight budget, so no segment
reaches protobuf's 2 GB limit even when the model's weights do (ONNX external data). Each segment is its
own onnxruntime session: its inputs are the model inputs and the earlier tensors it reads, its
outputs the wanted tensors it produces plus those later segments read. ``StreamedRun`` runs the
segments as the caller asks for tensors (``ensure``): what a run holds is the segment being run,
the tensors that cross into later segments, and what the caller has not yet released.

Every node runs once, in the same order, on the same kernels (optimisations off), so the values
are exactly those of a single run. A cut never separates from its readers a value onnxruntime
cannot hand over as a numpy array (sequences, optionals, bfloat16/float8/int4 tensors, tensors
of unknown type). After each segment freed heap memory goes back to the system (``_trim_heap``)
and the next segment starts in a background thread while the caller writes this one's tensors;
the segments' sessions never spin-wait, so their idle threads leave the cores to that writer,
and a caller that waits for a segment builds the next one's session meanwhile.

A model loaded with its big weights left in external data (``external.load_model_refs``, with
their ``folder``) stays small: a segment's model refers to its weights and onnxruntime reads them
when the segment's session is built, so the weights are never copied through protobuf. When the
weights outgrow one segment's budget, sessions (and their weights) go as soon as they ran.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

import numpy as np

#: default budget of tensor bytes one segment produces
SEGMENT_BYTES = 48 << 20
#: default budget of initializer bytes one segment holds (well under protobuf's 2 GB)
WEIGHT_BYTES = 1 << 30
#: producers of sequences and optionals (never cut from their readers)
_NON_TENSOR_OPS = {"SequenceConstruct", "SequenceEmpty", "SequenceInsert", "SequenceErase",
                   "SplitToSequence", "Optional"}


@dataclass
class _Segment:
    nodes: List[int]
    inputs: List[str] = field(default_factory=list)
    outputs: List[str] = field(default_factory=list)
    inits: List[str] = field(default_factory=list)
    session: object = None
    signature: Tuple = ()


def node_reads(node) -> List[str]:
    """Names a node reads: its inputs and the outer-scope names its subgraphs use."""
    names = [i for i in node.input if i]
    for attr in node.attribute:
        for g in ([attr.g] if attr.type == 5 else list(attr.graphs) if attr.type == 10 else []):
            names.extend(_outer_names(g))
    return names


def _outer_names(graph) -> List[str]:
    local: Set[str] = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    out: List[str] = []
    for node in graph.node:
        for name in node_reads(node):
            if name not in local:
                out.append(name)
        local.update(o for o in node.output if o)
    return out


#: ONNX element types onnxruntime returns as numpy arrays (not bfloat16, float8, int4, string)
_FEEDABLE_TYPES = {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13}


def _feedable(info, name: str, op_type: str) -> bool:
    """True when ``name`` is known to be a tensor that can leave one segment and enter the next."""
    if op_type in _NON_TENSOR_OPS and op_type.startswith(("Seq", "Split", "Opt")):
        return False
    entry = info.get(name)
    return entry is not None and entry[0] in _FEEDABLE_TYPES


_NUMPY: Dict[int, Optional[np.dtype]] = {}  # ONNX element type -> numpy dtype (None: none)


def _numpy_dtype(elem_type: int) -> Optional[np.dtype]:
    if elem_type not in _NUMPY:  # onnx's lookup and np.dtype() cost microseconds a call
        from onnx import helper

        try:
            _NUMPY[elem_type] = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
        except Exception:
            _NUMPY[elem_type] = None
    return _NUMPY[elem_type]


def _itemsize(elem_type: int) -> Optional[int]:
    dtype = _numpy_dtype(elem_type)
    return None if dtype is None else dtype.itemsize


def _nbytes(info, name) -> Optional[int]:
    entry = info.get(name)
    if entry is None or entry[1] is None or any(d is None for d in entry[1]):
        return None
    itemsize = _itemsize(entry[0])
    return None if itemsize is None else math.prod(entry[1]) * itemsize


class SegmentedModel:
    """A prepared model cut into segments for fetching ``wanted`` tensors (see module doc).

    ``model`` (an ``onnx.ModelProto`` with static input shapes) is kept, not modified; sessions
    are built on first use and reused by later runs with the same input signature."""

    def __init__(self, model, wanted: Iterable[str], *, segment_bytes: Optional[int] = None,
                 weight_bytes: Optional[int] = None, threads: int = 0,
                 keep_sessions: Optional[bool] = None, folder: Optional[str] = None,
                 info: Optional[Mapping[str, tuple]] = None):
        """``info``: ``onnx_graph.tensor_info(model)`` when the caller has it already (shape
        inference is most of the time this takes)."""
        from .onnx_graph import tensor_info

        segment_bytes = SEGMENT_BYTES if segment_bytes is None else segment_bytes
        weight_bytes = WEIGHT_BYTES if weight_bytes is None else weight_bytes
        self.model = model
        self.folder = folder  # where external-data weights are read from (None: none)
        self.threads = threads
        graph = model.graph
        self.wanted = list(dict.fromkeys(wanted))
        self.inits = {t.name: t for t in graph.initializer}
        self.producer: Dict[str, int] = {}
        reads = [node_reads(n) for n in graph.node]
        last_read: Dict[str, int] = {}
        for k, node in enumerate(graph.node):
            for name in reads[k]:
                last_read[name] = k
            for name in node.output:
                if name:
                    self.producer[name] = k
        if info is None:
            info = tensor_info(model)
        self.info = info  # predicts a segment's input signature (``predicted_signature``)
        sizes = {n: _nbytes(info, n) for n in self.producer}
        known = [b for b in sizes.values() if b is not None]
        guess = int(np.mean(known)) if known else 1 << 20
        wanted_set = set(self.wanted)
        # a cut never separates these from their readers: onnxruntime cannot hand them over
        non_tensor = {o for n in graph.node for o in n.output
                      if o and not _feedable(info, o, n.op_type)}
        self.segments: List[_Segment] = []
        current: List[int] = []
        seg_bytes = seg_weights = held_weights = 0  # held: what all segments' sessions hold
        seg_inits: Set[str] = set()
        open_non_tensor: Set[str] = set()  # produced, not yet fully read
        for k, node in enumerate(graph.node):
            out_bytes = sum((sizes[o] or guess) for o in node.output if o)
            new_inits = {r for r in reads[k] if r in self.inits and r not in seg_inits}
            w = sum(_init_bytes(self.inits[r]) for r in new_inits)
            open_non_tensor = {n for n in open_non_tensor if last_read.get(n, -1) >= k}
            if current and not open_non_tensor and (seg_bytes + out_bytes > segment_bytes
                                                    or seg_weights + w > weight_bytes):
                self.segments.append(_Segment(current))
                current, seg_bytes, seg_weights, seg_inits = [], 0, 0, set()
                new_inits = {r for r in reads[k] if r in self.inits}
                w = sum(_init_bytes(self.inits[r]) for r in new_inits)
            current.append(k)
            seg_bytes += out_bytes
            seg_weights += w
            held_weights += w
            seg_inits |= new_inits
            open_non_tensor |= {o for o in node.output if o in non_tensor}
        if current:
            self.segments.append(_Segment(current))
        if keep_sessions is None:  # weights over one segment's budget: held one segment at a time
            keep_sessions = held_weights <= weight_bytes
        self.keep_sessions = keep_sessions  # False: a segment's session (and weights) go after it ran
        # weights over one segment's budget stay out of the shared arena (one segment's weights
        # are allocated and freed at once: nothing there for the arena to reuse)
        self.use_arena = held_weights <= weight_bytes
        self.segment_of: Dict[str, int] = {}
        for s, seg in enumerate(self.segments):
            for k in seg.nodes:
                for o in graph.node[k].output:
                    if o:
                        self.segment_of[o] = s
        self.last_segment_read: Dict[str, int] = {}
        for s, seg in enumerate(self.segments):
            produced: Set[str] = set()
            ins: List[str] = []
            inits: List[str] = []
            for k in seg.nodes:
                for name in reads[k]:
                    if name in produced:
                        continue
                    if name in self.segment_of and self.segment_of[name] < s:
                        ins.append(name)
                        self.last_segment_read[name] = s
                    elif name in self.inits and name not in self.producer:
                        inits.append(name)
                    elif name not in self.producer:
                        ins.append(name)  # a model input
                produced.update(o for o in graph.node[k].output if o)
            seg.inputs = list(dict.fromkeys(ins))
            seg.inits = list(dict.fromkeys(inits))
        for s, seg in enumerate(self.segments):
            outs = [o for k in seg.nodes for o in graph.node[k].output
                    if o and (o in wanted_set or self.last_segment_read.get(o, -1) > s)]
            seg.outputs = list(dict.fromkeys(outs))

    def run(self, feeds: Mapping[str, np.ndarray]) -> "StreamedRun":
        return StreamedRun(self, feeds)

    # -- sessions ----------------------------------------------------------------------------
    def _run_segment(self, s: int, feeds: Mapping[str, object]):
        """Segment ``s``'s outputs. Sessions allocate from the process's shared arena
        (``graph.ort_arena``), whose unused memory a run gives back when it is closed
        (``StreamedRun.close``). Models whose weights exceed one segment's budget use no
        arena."""
        return self._session(s, feeds).run(self.segments[s].outputs, feeds)

    def _session(self, s: int, feeds: Mapping[str, object]):
        seg = self.segments[s]
        for name in seg.inputs:
            if not isinstance(feeds[name], np.ndarray):
                raise TypeError(f"tensor {name!r} crossing into segment {s} is not a tensor")
        signature = tuple((n, feeds[n].dtype.str, feeds[n].shape) for n in seg.inputs)
        if seg.session is None or seg.signature != signature:
            seg.session = None
            self._build(s, signature)
        return seg.session

    def _build(self, s: int, signature) -> None:
        seg = self.segments[s]
        seg.session = _build_session(self.model, seg, s, signature, self.threads, self.folder,
                                     shared_arena=self.use_arena)
        seg.signature = signature

    def predicted_signature(self, s: int, feeds: Mapping[str, np.ndarray]) -> Optional[Tuple]:
        """Segment ``s``'s input signature in a run on ``feeds`` (the model inputs), from the
        tensor info of what earlier segments hand over; None when a shape is not static."""
        out = []
        for name in self.segments[s].inputs:
            if name in feeds and name not in self.segment_of:
                value = feeds[name]
                if not isinstance(value, np.ndarray):
                    return None
                out.append((name, value.dtype.str, value.shape))
                continue
            entry = self.info.get(name)
            if entry is None or entry[1] is None or any(d is None for d in entry[1]):
                return None
            dtype = _numpy_dtype(entry[0])
            if dtype is None:
                return None
            out.append((name, dtype.str, tuple(int(d) for d in entry[1])))
        return tuple(out)


def _init_bytes(tensor) -> int:
    return math.prod(tensor.dims) * (_itemsize(tensor.data_type) or 4)


def _build_session(model, seg: _Segment, s: int, signature, threads: int,
                   folder: Optional[str] = None, shared_arena: bool = False):
    """Segment ``s``'s session for inputs of ``signature`` ((name, dtype str, shape) each)."""
    import onnx
    from onnx import helper

    from .external import EXTERNAL_FOLDER_KEY, is_external
    from .onnx_graph import ort_session
    from .ort_arena import SHARED_ARENA

    graph = model.graph
    inputs = [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
                                            list(shape))
              for name, dtype, shape in signature]
    sub = onnx.ModelProto()
    sub.ir_version = max(int(model.ir_version), 4)
    sub.opset_import.extend(model.opset_import)
    sub.functions.extend(model.functions)
    g = sub.graph
    g.name = f"{graph.name or 'model'}_segment{s}"
    g.node.extend(graph.node[k] for k in seg.nodes)
    g.input.extend(inputs)
    inits = {t.name: t for t in graph.initializer}
    g.initializer.extend(inits[n] for n in seg.inits)  # external data: references, not weights
    config = {}
    if folder and any(is_external(inits[n]) for n in seg.inits):
        config[EXTERNAL_FOLDER_KEY] = folder
    sparse = {t.values.name: t for t in graph.sparse_initializer}
    g.sparse_initializer.extend(sparse[n] for n in seg.inputs if n in sparse)
    g.output.extend(onnx.ValueInfoProto(name=n) for n in seg.outputs)
    data = sub.SerializeToString()
    del sub
    # no spin-waiting: while a segment runs, the caller writes the previous one's tensors on the
    # same cores, and idle onnxruntime threads spinning between kernels take that CPU (a det
    # 736x736 emulated run: 2.1 s spinning, 1.1 s not; benchmarks/bench_check.py)
    return ort_session(data, threads=threads, arena=SHARED_ARENA if shared_arena else False,
                       spinning=False, config=config)


class StreamedRun:
    """One run of a ``SegmentedModel``: ``ensure(names)`` runs segments until every name is
    produced; produced wanted tensors land in ``values``, which the caller pops when done.

    While the caller writes one segment's tensors the next segment already runs in a background
    thread (onnxruntime releases the GIL), so computing and writing overlap; at most one
    segment is in flight."""

    def __init__(self, model: SegmentedModel, feeds: Mapping[str, np.ndarray], *, prefetch: bool = True):
        self.model = model
        self.prefetch = prefetch
        self._pending = None  # (segment index, Future of its outputs)
        self._closed = False
        self._pool = None
        self.feeds = dict(feeds)
        self.values: Dict[str, object] = {}
        self._carry: Dict[str, object] = {}
        self._next = 0
        self._wanted = set(model.wanted)
        #: most tensor bytes this run held at once (carried + not yet released by the caller)
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

    def _compute(self, s: int):
        seg = self.model.segments[s]
        feeds = {n: (self._carry[n] if n in self._carry else self.feeds[n]) for n in seg.inputs}
        return self.model._run_segment(s, feeds)

    def _start(self, s: int) -> None:
        """Start segment ``s`` in the background (feeds taken now, from this thread)."""
        from concurrent.futures import ThreadPoolExecutor

        m = self.model
        while s < len(m.segments) and not m.segments[s].outputs:
            s += 1
        if s >= len(m.segments):
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="ascend-accuracy-stream")
        seg = m.segments[s]
        feeds = {n: (self._carry[n] if n in self._carry else self.feeds[n]) for n in seg.inputs}
        self._pending = (s, self._pool.submit(m._run_segment, s, feeds))

    def _build_ahead(self, future, s: int) -> None:
        """While the background thread computes a segment, build the session of segment ``s``
        (the next one with outputs) here, if it has none: the background thread then only
        computes. Its input signature comes from the tensor info (``predicted_signature``);
        when that cannot tell, or the build fails, the background thread builds it when it
        needs it, as before (and reports the failure there). Only for models whose weights fit
        one segment's budget: a second session's weights are then never a second copy of much.
        (PP-OCRv4 det 736, 42 segments, a warm check's run+dump: median 0.545 s against 0.617 s
        over 10 alternating runs; about half the sessions are built here.)"""
        m = self.model
        while s < len(m.segments) and not m.segments[s].outputs:
            s += 1
        if s >= len(m.segments) or future.done() or not m.use_arena \
                or m.segments[s].session is not None:
            return
        try:
            signature = m.predicted_signature(s, self.feeds)
            if signature is not None:
                m._build(s, signature)
        except Exception:
            m.segments[s].session = None

    def _stop(self) -> None:
        """Wait for a segment still in flight and stop the background thread."""
        if self._pending is not None:
            self._pending[1].cancel()
            try:
                self._pending[1].result()
            except Exception:
                pass
            self._pending = None
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

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
        _trim_heap()  # the arena frees into glibc's heap once glibc's mmap threshold has risen

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
        if self._pending is not None and self._pending[0] == s:
            future = self._pending[1]
            self._build_ahead(future, s + 1)  # (still pending: an interrupt stops it there)
            self._pending = None
            try:
                produced = future.result()
            except BaseException:
                self._stop()
                raise
        else:
            produced = self._compute(s)
        for name, value in zip(seg.outputs, produced):
            if m.last_segment_read.get(name, -1) > s:
                self._carry[name] = value
            if name in self._wanted:
                self.values[name] = value
        del produced
        held = {id(v): getattr(v, "nbytes", 0) for v in list(self._carry.values()) + list(self.values.values())}
        self.peak_bytes = max(self.peak_bytes, sum(held.values()))
        for name in [n for n in self._carry if m.last_segment_read.get(n, -1) <= s]:
            del self._carry[name]
        self._next = s + 1
        if not m.keep_sessions:
            seg.session = None
        _trim_heap()
        if self.prefetch:
            self._start(s + 1)
        if self.done:
            self._stop()


_LIBC = []


def _trim_heap() -> None:
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


def stream_all(model, feeds: Mapping[str, np.ndarray], wanted: Sequence[str], **options) -> StreamedRun:
    """A started ``StreamedRun`` of ``model`` fetching ``wanted`` (convenience for one run)."""
    return SegmentedModel(model, wanted, **options).run(feeds)
