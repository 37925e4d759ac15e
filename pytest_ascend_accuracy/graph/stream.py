"""Running an ONNX model in segments, so every intermediate tensor can be fetched without all
of them being held at once.

Marking every node output as a graph output and fetching them in one ``session.run`` holds
every intermediate tensor of the model at the same time (1.5 GB for PP-OCRv4 det at 736x736,
where a plain inference needs 0.2 GB). ``SegmentedModel`` cuts the node list (which ONNX keeps
in topological order) into consecutive segments whose fetched outputs stay under a byte budget
(sizes from shape inference) and whose initializers stay under a weight budget, so no segment
reaches protobuf's 2 GB limit even when the model's weights do (ONNX external data). Each segment is its
own onnxruntime session: its inputs are the model inputs and the earlier tensors it reads, its
outputs the wanted tensors it produces plus those later segments read. A run of it
(``streamed_run.StreamedRun``) computes the segments as the caller asks for tensors: what it
holds is the segments computed and not yet written, the tensors that cross into later segments,
and what the caller has not yet released.

Every node runs once, in the same order (optimisations off), so the values are those of a single
run up to float rounding. A Constant node whose output a later segment reads is copied into that
segment's session (``_Segment.consts``; up to ``COPIED_CONSTANT_BYTES``: a big one is handed
over as before), not handed over as its input: onnxruntime's shape
inference must see such values as constants, and refused a session whose ``Resize`` sizes came
from ``Concat(Slice(Shape(x), starts, ends), Constant)`` with the Slice's constants fed as
inputs ("Number of elements of input 'sizes' (0) must be same as rank of input 'X' (4)": every
PyTorch ``F.interpolate(size=...)`` export, IMG.LY's ISNet, audit 35); a constant fed as an
input may also get another kernel than a constant weight (a MatMul of PP-OCRv4 rec: 81 of 440
tensors differed by at most 2.6e-7 relative against polygraphy's one-session run; H111). A cut
never separates from its readers a value onnxruntime cannot hand over as a numpy array
(sequences, optionals, bfloat16/float8/int4 tensors, tensors of unknown type). A wanted
bfloat16, float8_e4m3fn or float8_e5m2 tensor, which onnxruntime's Python API cannot return ("No
corresponding Numpy type for Tensor Type"), is fetched through a Cast to float32 added to its
segment's session (exact: every such value is a float32) and handed over as the ml_dtypes array
of its own type, so its dtype stays what the model says.
The segments' sessions never spin-wait, so their idle threads leave the cores to the thread
writing the tensors out. A session is built by the run's background thread, or
ahead of time by the caller taking segments (``build_ahead``; each segment's ``lock`` keeps that
to one build).

A model loaded with its big weights left in external data (``external.load_model_refs``, with
their ``folder``) stays small: a segment's model refers to its weights and onnxruntime reads them
when the segment's session is built, so the weights are never copied through protobuf. When the
weights outgrow one segment's budget, sessions (and their weights) go as soon as they ran.
"""
from __future__ import annotations

import math
import threading
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
    lock: threading.Lock = field(default_factory=threading.Lock)  # held while a session builds
    nbytes: int = 0  # what its nodes' outputs add up to (guessed where a shape is unknown)
    #: Constant nodes of earlier segments whose outputs this one reads: copied into its session
    consts: List[int] = field(default_factory=list)
    #: output name -> (name of its Cast-to-float32 fetch, ml_dtypes name) for the outputs
    #: onnxruntime cannot return as numpy (``FETCHED_AS_FLOAT32``)
    cast_fetch: Dict[str, Tuple[str, str]] = field(default_factory=dict)

    @property
    def fetch(self) -> List[str]:
        """The names the segment's session returns, in ``outputs`` order."""
        return [self.cast_fetch[o][0] if o in self.cast_fetch else o for o in self.outputs]


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


#: ONNX element types onnxruntime cannot return, fetched through an exact Cast to FLOAT and
#: given back as the ml_dtypes type (the types a dump can store: ``dump.dtypes``)
FETCHED_AS_FLOAT32 = {16: "bfloat16", 17: "float8_e4m3fn", 19: "float8_e5m2"}
#: the suffix of the name a Cast-to-float32 fetch of a tensor is given (made unique)
FETCH_SUFFIX = "::as_float32"


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
                 info: Optional[Mapping[str, tuple]] = None, reserve: bool = False):
        """``info``: ``onnx_graph.tensor_info(model)`` when the caller has it already (shape
        inference is most of the time this takes). ``reserve``: a run first reserves its
        largest segment's bytes of the shared arena (``ort_arena.reserve_shared_arena``); the
        emulator's runs do, goldens do not (a golden run is the cold check's memory peak: 333
        MB against 320 MB when it did)."""
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
                self.segments.append(_Segment(current, nbytes=seg_bytes))
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
            self.segments.append(_Segment(current, nbytes=seg_bytes))
        if keep_sessions is None:  # weights over one segment's budget: held one segment at a time
            keep_sessions = held_weights <= weight_bytes
        self.keep_sessions = keep_sessions  # False: a segment's session (and weights) go after it ran
        # weights over one segment's budget stay out of the shared arena (one segment's weights
        # are allocated and freed at once: nothing there for the arena to reuse)
        self.use_arena = held_weights <= weight_bytes
        self.reserve = reserve
        self.segment_of: Dict[str, int] = {}
        for s, seg in enumerate(self.segments):
            for k in seg.nodes:
                for o in graph.node[k].output:
                    if o:
                        self.segment_of[o] = s
        self.last_segment_read: Dict[str, int] = {}
        constant = {o: k for k, n in enumerate(graph.node) if n.op_type == "Constant"
                    and n.domain in ("", "ai.onnx") and _small_constant(n)
                    for o in n.output if o}
        for s, seg in enumerate(self.segments):
            produced: Set[str] = set()
            ins: List[str] = []
            inits: List[str] = []
            for k in seg.nodes:
                for name in reads[k]:
                    if name in produced:
                        continue
                    if name in constant and self.segment_of[name] < s:
                        seg.consts.append(constant[name])  # (see the module docstring)
                        produced.add(name)
                    elif name in self.segment_of and self.segment_of[name] < s:
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
        used = set(self.producer) | set(info) | {n.name for n in graph.node}
        for seg in self.segments:
            for o in seg.outputs:
                ml_name = FETCHED_AS_FLOAT32.get((info.get(o) or (0,))[0])
                if ml_name is not None:
                    seg.cast_fetch[o] = (_unused(f"{o}{FETCH_SUFFIX}", used), ml_name)

    def run(self, feeds: Mapping[str, np.ndarray], *, ahead: int = 1):
        """A ``streamed_run.StreamedRun`` on ``feeds``, computing up to ``ahead`` segments
        beyond the one the caller takes."""
        from .streamed_run import StreamedRun

        return StreamedRun(self, feeds, ahead=ahead)

    # -- sessions ----------------------------------------------------------------------------
    def _run_segment(self, s: int, feeds: Mapping[str, object]):
        """Segment ``s``'s outputs. Sessions allocate from the process's shared arena
        (``graph.ort_arena``), whose unused memory a run gives back when it is closed
        (``StreamedRun.close``). Models whose weights exceed one segment's budget use no
        arena. A tensor fetched through a Cast to float32 (``_Segment.cast_fetch``) comes back
        as the ml_dtypes array of its own type (exact)."""
        seg = self.segments[s]
        produced = self._session(s, feeds).run(seg.fetch, feeds)
        if seg.cast_fetch:
            produced = [_from_float32(v, seg.cast_fetch[o][1]) if o in seg.cast_fetch else v
                        for o, v in zip(seg.outputs, produced)]
        return produced

    def _session(self, s: int, feeds: Mapping[str, object]):
        seg = self.segments[s]
        for name in seg.inputs:
            if not isinstance(feeds[name], np.ndarray):
                raise TypeError(f"tensor {name!r} crossing into segment {s} is not a tensor")
        signature = tuple((n, feeds[n].dtype.str, feeds[n].shape) for n in seg.inputs)
        with seg.lock:  # (a caller building it ahead finishes first)
            if seg.session is None or seg.signature != signature:
                seg.session = None
                self._build(s, signature)
            return seg.session

    def _build(self, s: int, signature) -> None:
        """Build segment ``s``'s session for ``signature`` (the caller holds its ``lock``)."""
        seg = self.segments[s]
        seg.session = _build_session(self.model, seg, s, signature, self.threads, self.folder,
                                     shared_arena=self.use_arena)
        seg.signature = signature

    def build_ahead(self, s: int, signature, unless=lambda: False) -> None:
        """Build segment ``s``'s session ahead of its run, only if no other thread is building
        it, it has none yet and ``unless()`` (asked under its lock) is not true."""
        seg = self.segments[s]
        if not seg.lock.acquire(blocking=False):
            return
        try:
            if seg.session is None and not unless():
                self._build(s, signature)
        finally:
            seg.lock.release()

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


#: the most bytes of a Constant node copied into each later segment reading it (its value is
#: held once per session): shape and size constants are a few int64s; a review's 64 MB
#: Constant read by 12 segments took the golden from 4.2 s / 661 MB to 13.4 s / 1242 MB
COPIED_CONSTANT_BYTES = 64 << 10


def _small_constant(node) -> bool:
    """Whether a Constant node's value is small enough to copy (``COPIED_CONSTANT_BYTES``)."""
    for attr in node.attribute:
        if attr.name == "value" and attr.type == 4:  # TENSOR
            t = attr.t
            if t.data_location == 1:  # external data: not copied
                return False
            return math.prod(t.dims) * (_itemsize(t.data_type) or 8) <= COPIED_CONSTANT_BYTES
        if attr.name in ("value_int", "value_float", "value_string"):
            return True
        if attr.name in ("value_ints", "value_floats", "value_strings"):
            return len(attr.ints) + len(attr.floats) + len(attr.strings) <= 1024
    return False  # (sparse_value: handed over as before)


def _unused(name: str, used: Set[str]) -> str:
    """``name``, or ``name_1``, ``name_2``... : the first not in ``used`` (then added to it)."""
    out, k = name, 0
    while out in used:
        k += 1
        out = f"{name}_{k}"
    used.add(out)
    return out


def _from_float32(value, ml_name: str):
    """A float32 array fetched through a Cast as the ml_dtypes type it was cast from (exact:
    the values came from that type)."""
    import ml_dtypes

    return np.asarray(value).astype(getattr(ml_dtypes, ml_name))


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
    g.node.extend(graph.node[k] for k in [*seg.consts, *seg.nodes])
    g.input.extend(inputs)
    inits = {t.name: t for t in graph.initializer}
    g.initializer.extend(inits[n] for n in seg.inits)  # external data: references, not weights
    config = {}
    if folder and any(is_external(inits[n]) for n in seg.inits):
        config[EXTERNAL_FOLDER_KEY] = folder
    sparse = {t.values.name: t for t in graph.sparse_initializer}
    g.sparse_initializer.extend(sparse[n] for n in seg.inputs if n in sparse)
    for o, (fetch, _) in seg.cast_fetch.items():  # onnxruntime returns no bfloat16/float8 array
        g.node.append(helper.make_node("Cast", [o], [fetch], name=fetch, to=1))  # (exact)
    g.output.extend(onnx.ValueInfoProto(name=n) for n in seg.fetch)
    data = sub.SerializeToString()
    del sub
    # no spin-waiting: while a segment runs, the caller writes the previous one's tensors on the
    # same cores, and idle onnxruntime threads spinning between kernels take that CPU (a det
    # 736x736 emulated run: 2.1 s spinning, 1.1 s not; benchmarks/bench_check.py)
    return ort_session(data, threads=threads, arena=SHARED_ARENA if shared_arena else False,
                       spinning=False, config=config)


def stream_all(model, feeds: Mapping[str, np.ndarray], wanted: Sequence[str], **options):
    """A started ``StreamedRun`` of ``model`` fetching ``wanted`` (convenience for one run)."""
    return SegmentedModel(model, wanted, **options).run(feeds)
