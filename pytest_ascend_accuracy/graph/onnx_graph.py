"""ONNX model basics shared by the golden run and the emulator: loading, digests, inputs,
shapes, marking outputs, onnxruntime sessions. ``prepare.prepare_model`` builds on these.

Real exports are messy (design notes): nodes without names or with duplicate names, dynamic
input dimensions, ``If`` nodes whose taken branch depends on shapes, ``Loop``/``Scan`` bodies.
``prepare_model`` turns a model into one that both sides can run and dump the same way:

1. node names normalised (``names``: ``{op_type}_{index}``; shared names refused, E19009);
2. input shapes set from ``input_shape`` (``{name: shape}`` or ATC's ``"a:1,3;b:2"``); a dynamic
   dimension that is still unresolved raises ``ConfigError`` naming the input and dimension;
3. ``If`` nodes whose condition is computable (from the given inputs, or from constants and
   static shapes alone) are replaced by the nodes of the taken branch (``onnx_inline``);
   ``Loop``/``Scan`` (and ``If`` that could not be inlined) stay as single operators and are
   listed in the report: their internal tensors are not dumped, nothing is guessed.

``mark_all_outputs`` then makes every node output a graph output (name only; onnxruntime
accepts outputs without type information). ``make_inputs`` gives deterministic seeded inputs.
onnx and onnxruntime are imported inside functions so importing this module stays cheap.
"""
from __future__ import annotations

import os
from functools import partial
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..errors import ConfigError, ConversionError
from . import data_links, wire
from .feedable import check_feedable
from .input_names import check_input_names, listed_initializers, require_mapping
from . import input_shape_parse
from .onnxruntime_version import require_onnx
from .export_metadata import image_size
from .shape_advice import dynamic_dims_text, dynamic_shape_error
from .shape_trial import runner as trial_runner

InputShape = Optional[Mapping[str, Sequence[int]]]


# -- loading -------------------------------------------------------------------------------
def load_model(model, *, weights: bool = True) -> "onnx.ModelProto":  # noqa: F821
    """A private copy of ``model`` (a path, serialized bytes or a ModelProto). ``weights=False``:
    a file's external-data weights are not read (references stay), and a big file's own big
    weights become references into it (``wire``): the graph without its weights."""
    onnx = require_onnx()  # (a ConfigError naming the extra where onnx is not installed)

    if isinstance(model, onnx.ModelProto):
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        return copy
    if isinstance(model, (bytes, bytearray)):
        try:
            return onnx.load_from_string(bytes(model))
        except Exception as exc:  # DecodeError and friends
            raise ConfigError("model", f"not a valid ONNX model ({exc})") from exc
    path = os.fspath(model)
    if not os.path.isfile(path):
        raise ConfigError(path, "ONNX model file not found")
    if not weights and os.path.getsize(path) > wire.SCAN_ABOVE:
        try:
            light = wire.model_with_weight_refs(path)
        except Exception:  # not what it should be: onnx.load says what is wrong
            light = None
        if light is not None:
            return light
    try:
        proto = onnx.load(path, load_external_data=False)
    except Exception as exc:
        raise ConfigError(path, f"cannot read ONNX model ({type(exc).__name__}: {exc})") from exc
    if weights:  # where onnxruntime reads them, through a link too (data_links)
        data_links.load_weights(proto, path)
    return proto


def external_data_files(path) -> List[str]:
    """The ONNX external data files the model file ``path`` refers to (its weights kept beside
    it), in first-use order; [] for a model that holds its weights. A big file is read without
    its own weights (``load_model(weights=False)``), so even a model over 2 GB that also keeps
    some weights outside lists them. A missing data file raises ``ConfigError`` naming it."""
    try:
        proto = load_model(path, weights=False)
    except ConfigError:
        return []  # load_model reports an unreadable model where it is loaded
    return data_files(proto, path)


def data_files(proto, path) -> List[str]:
    """The external data files that ``proto``, loaded from the model file ``path``, refers to,
    in first-use order, ``path`` itself left out (a big file's own weights, read without them,
    refer to it); a missing one is a ``ConfigError`` naming it."""
    import onnx
    from onnx.external_data_helper import _get_all_tensors

    path = os.fspath(path)
    base = os.path.dirname(os.path.abspath(path))
    own = os.path.normpath(os.path.abspath(path))
    files: List[str] = []
    for t in _get_all_tensors(proto):
        if t.data_location == onnx.TensorProto.EXTERNAL:
            location = next((e.value for e in t.external_data if e.key == "location"), "")
            full = os.path.normpath(os.path.join(base, location))
            if full == own or full in files:
                continue
            if not os.path.isfile(full):
                raise ConfigError(path, f"external data file {location!r} of initializer "
                                        f"{t.name!r} not found next to the model")
            files.append(full)
    return files


def model_label(model, default: str = "model") -> str:
    """A short name for a model: the file stem for a path, the graph name otherwise."""
    import onnx

    if isinstance(model, onnx.ModelProto):
        return model.graph.name or default
    if isinstance(model, (bytes, bytearray)):
        return default
    stem = os.path.splitext(os.path.basename(os.fspath(model)))[0]
    return stem or default


# -- inputs and shapes ---------------------------------------------------------------------
def graph_inputs(model) -> List[object]:
    """The real inputs (old exports also list initializers as inputs; those are skipped)."""
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def declared_shape(value_info) -> Tuple[Optional[int], ...]:
    """Declared dims of an input: an int, or None for a dynamic (named or unknown) dim."""
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return ()
    return tuple(d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None
                 for d in t.shape.dim)


def declared_text(value_info) -> Optional[str]:
    """An input's dims as its model declares them, ``[2, 0, 4]``, ``[batch, 3]``, ``?`` for a
    dim with neither size nor name; None without a declared shape."""
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    return "[" + ", ".join(str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?")
                           for d in t.shape.dim) + "]"


def input_dtype(value_info) -> np.dtype:
    from onnx import helper

    elem = value_info.type.tensor_type.elem_type
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem))
    except Exception as exc:
        raise ConfigError(f"input {value_info.name!r}", f"unsupported element type {elem}") from exc


def parse_input_shape(input_shape, where: str = "input_shape", *, empty_ok: bool = False,
                      model=None) -> Optional[Dict[str, Tuple[int, ...]]]:
    """``{name: shape}`` or ATC's ``"in1:1,3,224,224;in2:1,10"`` -> {name: tuple of ints}
    (``input_shape_parse``); ``model``: lends its declared sizes to the static shape the
    refusal of a ``-1`` or a range ``n1~n2`` gives to paste."""
    def declared(names) -> Dict[str, Tuple[Optional[int], ...]]:
        try:
            proto = model if hasattr(model, "graph") else load_model(model, weights=False)
        except Exception:  # noqa: BLE001 - a model that does not load says so where it is read
            return {}
        return {i.name: declared_shape(i) for i in graph_inputs(proto) if i.name in names}

    return input_shape_parse.parse_input_shape_text(input_shape, where, empty_ok=empty_ok,
                                                    declared=None if model is None else declared)


def resolve_input_shapes(model, input_shape=None, *, require_static: bool = True,
                         where: str = "input_shape", empty_ok: bool = False,
                         source=None, seed: int = 0) -> Dict[str, Tuple[Optional[int], ...]]:
    """Apply ``input_shape`` to the model's inputs in place and return every input's shape.
    A named input that does not exist, a rank that differs, or a value that contradicts a
    fixed dimension raises ``ConfigError``; so does a dynamic dimension left unresolved when
    ``require_static`` (naming every input left dynamic, its dimensions and how to fix it,
    a shape that runs on ``source`` -- the model file ``model`` was read from, else ``model``
    where it holds its weights -- with the inputs of ``seed``: ``shape_advice``)."""
    shapes = parse_input_shape(input_shape, where, empty_ok=empty_ok, model=model) or {}
    inputs = {i.name: i for i in graph_inputs(model)}
    check_input_names(shapes, inputs, where, listed_initializers(model))
    resolved: Dict[str, Tuple[Optional[int], ...]] = {}
    dynamic: Dict[str, str] = {}  # input -> "'ids' dimension 1 ('S') is dynamic ([1, ?])"
    known: Dict[str, tuple] = {}  # input -> its given ((size, dim_param), ...): the advice
    for name, vi in inputs.items():
        kind = (vi.type.WhichOneof("value") or "tensor_type")[:-5]  # a sequence: no shape,
        if kind != "tensor":  # (setting one would make its type a tensor's: value_kinds)
            if name in shapes:
                raise ConfigError(where, f"input {name!r} is a {kind}, not a tensor: "
                                         "input_shape gives tensors' shapes")
            continue
        declared = declared_shape(vi)
        if name in shapes:
            given = shapes[name]
            if declared and len(declared) != len(given):
                raise ConfigError(where, f"input {name!r} has rank {len(declared)} "
                                         f"({_show(declared)}), input_shape gives {list(given)}")
            for k, (d, g) in enumerate(zip(declared, given)):
                if d is not None and d != g:
                    raise ConfigError(where, f"input {name!r} dimension {k} is fixed to {d} "
                                             f"in the model, input_shape gives {g}")
            known[name] = _dims_of(vi, given)  # its dim_params, before they are set
            _set_dims(vi, given)
            resolved[name] = given
        else:
            resolved[name] = declared
            if require_static and (any(d is None for d in declared) or not _has_shape(vi)):
                dynamic[name] = f"{name!r} {dynamic_dims_text(vi, declared)} ({_show(declared)})"
    if dynamic:  # all of them at once: fixing the first one only led to the next error
        what = (f"input {next(iter(dynamic.values()))}" if len(dynamic) == 1 else
                f"{len(dynamic)} inputs are left dynamic: " + "; ".join(dynamic.values()))
        left = {n: _dims_of(inputs[n]) for n in dynamic}
        raise dynamic_shape_error(where, what, left, known, list(inputs), runner=partial(
            trial_runner, model if source is None else source, seed, make_inputs,
            session_options), exported=image_size(model))  # (run when the advice is shown)
    return resolved


def _dims_of(vi, given=None) -> Tuple[Tuple[Optional[int], str], ...]:
    """``(size or None, dim_param)`` of each dimension of ``vi``, the sizes ``given`` if any."""
    dims = vi.type.tensor_type.shape.dim
    sizes = given or [d.dim_value if d.HasField("dim_value") else None for d in dims]
    return tuple(zip(sizes, [d.dim_param for d in dims] or [""] * len(sizes)))


def _has_shape(vi) -> bool:
    return vi.type.tensor_type.HasField("shape")


def _set_dims(vi, dims) -> None:
    shape = vi.type.tensor_type.shape
    del shape.dim[:]
    for d in dims:
        shape.dim.add().dim_value = int(d)


def _show(shape) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def check_inputs(model, inputs: Mapping[str, np.ndarray], where: str = "inputs") -> Dict[str, np.ndarray]:
    """Validate ``inputs`` against the model's inputs: every input given, no unknown names,
    dtype and fixed dims as declared. Returns them as numpy arrays."""
    specs = {i.name: i for i in graph_inputs(model)}
    require_mapping(inputs, lambda: list(specs), where)
    check_input_names(inputs, specs, where, listed_initializers(model))
    out: Dict[str, np.ndarray] = {}
    for name, vi in specs.items():
        check_feedable(vi, where)
        if name not in inputs:
            raise ConfigError(where, f"model input {name!r} not given; inputs: {', '.join(specs)}")
        arr = np.asarray(inputs[name])
        want = input_dtype(vi)
        if arr.dtype != want:
            raise ConfigError(where, f"input {name!r} has dtype {arr.dtype}, the model wants {want}")
        declared = declared_shape(vi)
        if _has_shape(vi) and (len(declared) != arr.ndim or any(
                d is not None and d != a for d, a in zip(declared, arr.shape))):
            raise ConfigError(where, f"input {name!r} has shape {list(arr.shape)}, the model "
                                     f"declares {_show(declared)}")
        out[name] = arr
    return out


def make_inputs(model, *, seed: int = 0, input_shape=None,
                given: Optional[Mapping[str, object]] = None) -> Dict[str, np.ndarray]:
    """Deterministic inputs for every model input: floats uniform in [0, 1) (like msit's
    ``np.random.random``), integers in [0, 10) (or as ``integer_ranges`` says: one the model
    compares with a constant takes it), bools fair coins. Input ``k`` (graph order) draws from
    ``numpy.random.default_rng([seed, k])``. Dynamic dims need ``input_shape``. ``given``:
    arrays of some inputs, used as they are (their dynamic dims taken from them); the others
    are drawn as without them."""
    from .integer_ranges import integer_ranges

    proto = load_model(model, weights=False)  # the inputs, and the tables they index
    given = dict(given or {})
    if given:  # a given array sizes the dynamic dims of its input (shape_from_inputs' rule)
        sized = parse_input_shape(input_shape, model=proto) or {}
        input_shape = {**sized, **{vi.name: np.shape(given[vi.name]) for vi in graph_inputs(proto)
                                   if vi.name in given and vi.name not in sized
                                   and None in declared_shape(vi)}}
        input_shape.update(_shared_named_dims(proto, given, input_shape))
    from .length_inputs import declared_dims  # (read before the shapes are set on proto)

    declared = {vi.name: declared_dims(vi) for vi in graph_inputs(proto)}
    shapes = resolve_input_shapes(proto, input_shape, source=model, seed=seed)
    bounds = None  # read from the graph for the first integer input (28 ms on PP-OCRv4 det)
    out: Dict[str, np.ndarray] = {}
    for k, vi in enumerate(graph_inputs(proto)):
        if vi.name not in shapes:  # a sequence (resolve_input_shapes): no array to make
            raise ConversionError(f"model {model_label(model)!r} has a sequence input "
                                  f"{vi.name!r}: ATC has no sequence tensors; export the model "
                                  "with a tensor in its place")
        if vi.name in given:
            out[vi.name] = np.asarray(given[vi.name])
            continue
        shape = tuple(int(d) for d in shapes[vi.name])
        dtype = input_dtype(vi)
        rng = np.random.default_rng([int(seed), k])
        if dtype.kind == "f":
            arr = rng.random(shape, dtype=np.float64).astype(dtype)
        elif dtype.kind in "iu":
            if bounds is None:
                bounds = integer_ranges(proto, [vi.name for vi in graph_inputs(proto)], shapes,
                                        tensor_info, declared)
            arr = rng.integers(*bounds.get(vi.name, (0, 10)), size=shape).astype(dtype)
        elif dtype.kind == "b":
            arr = rng.random(shape) < 0.5
        else:  # bfloat16, float8, int4, string: why no array feeds it and what to do
            check_feedable(vi, f"inputs of {model_label(model)!r}", generated=True)
            raise ConfigError(f"input {vi.name!r}", f"cannot make random inputs of dtype {dtype}")
        out[vi.name] = arr
    return out


def _shared_named_dims(proto, given: Mapping[str, object], sized) -> Dict[str, tuple]:
    """The shapes of inputs not ``given`` nor ``sized`` whose every dynamic dimension is named
    as one of a given array's (``input_ids`` [batch, seq] given: ``attention_mask`` [batch,
    seq] takes its sizes, one name being one size; a review found it refused)."""
    named = {d.dim_param: int(np.shape(given[vi.name])[k]) for vi in graph_inputs(proto)
             if vi.name in given for k, d in enumerate(vi.type.tensor_type.shape.dim)
             if d.dim_param and k < np.ndim(given[vi.name])}
    out = {}
    for vi in graph_inputs(proto):
        dims = vi.type.tensor_type.shape.dim
        if (vi.name not in given and vi.name not in sized and dims
                and any(d.dim_param in named for d in dims)
                and all(d.HasField("dim_value") or d.dim_param in named for d in dims)):
            out[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else named[d.dim_param]
                                 for d in dims)
    return out


def node_output_names(model) -> List[str]:
    """Every non-empty node output of the main graph, in node order."""
    return [o for n in model.graph.node for o in n.output if o]


def mark_all_outputs(model) -> List[str]:
    """Make every node output a graph output (name only), in place; returns all output names."""
    import onnx

    existing = {o.name for o in model.graph.output}
    names = node_output_names(model)
    for name in names:
        if name not in existing:
            model.graph.output.append(onnx.ValueInfoProto(name=name))
            existing.add(name)
    return [o.name for o in model.graph.output]


#: process-wide onnxruntime thread settings (``set_ort_threads``): 0 = onnxruntime's default;
#: ``chosen``: set on purpose (``ASCEND_ACCURACY_ORT_THREADS``): ``ort_threads_beside_writer``
#: then keeps to it
_ORT_THREADS = {"intra": 0, "spinning": True, "chosen": False}


def set_ort_threads(intra: int = 0, *, spinning: bool = True, chosen: bool = False) -> None:
    """Threads per onnxruntime session in this process. Under pytest-xdist the plugin gives
    each worker its share of the cores with spinning off: N workers each starting one thread
    per core (and spinning while they wait) oversubscribe the machine. ``chosen``: the count
    was asked for (an environment setting), so runs that write as they go keep it too."""
    _ORT_THREADS["intra"] = max(0, int(intra))
    _ORT_THREADS["spinning"] = bool(spinning)
    _ORT_THREADS["chosen"] = bool(chosen)


def ort_threads_beside_writer() -> int:
    """Intra-op threads for a run whose tensors this process writes out while onnxruntime
    computes the next segment (the golden and emulated runs, ``graph.stream``): this process's
    share of the cores (an xdist worker's share), at most its physical cores, less the one the
    writing thread needs, and at least 1. With the default of one thread per core, three busy
    threads took turns on two cores: the det 736x736 emulated run and its compare measured
    0.68-0.75 s and 1.02-1.12 s of CPU with one thread, 0.72-0.79 s and 1.14-1.20 s with two.
    A count set on purpose (``set_ort_threads(chosen=True)``) is kept (0: onnxruntime's
    default)."""
    if _ORT_THREADS["chosen"]:
        return _ORT_THREADS["intra"]
    from ..core.cpu_share import core_share, physical_cores

    return max(1, min(core_share(), physical_cores()) - 1)


def session_options(*, optimize: bool = False, threads: int = 0, arena: bool = True,
                    spinning: Optional[bool] = None, config: Optional[Mapping[str, str]] = None):
    """onnxruntime ``SessionOptions``: optimisations off by default so node names survive.

    ``spinning=False`` stops idle intra-op threads from spin-waiting (None: the process-wide
    setting of ``set_ort_threads``); ``config``: more session config entries."""
    from .onnxruntime_version import require_onnxruntime

    ort = require_onnxruntime()
    so = ort.SessionOptions()
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_BASIC if optimize
                                   else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    so.log_severity_level = 3
    threads = threads or _ORT_THREADS["intra"]
    if threads:
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
    if not (_ORT_THREADS["spinning"] if spinning is None else spinning):
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        so.add_session_config_entry("session.inter_op.allow_spinning", "0")
    so.enable_cpu_mem_arena = bool(arena)  # off: a segment's buffers go back when it ends
    for key, value in (config or {}).items():
        so.add_session_config_entry(key, value)
    return so


def ort_session(model_bytes: bytes, *, optimize: bool = False, threads: int = 0, arena=True,
                spinning: Optional[bool] = None, config: Optional[Mapping[str, str]] = None):
    """An onnxruntime CPU session (see ``session_options``). ``arena``: True (the session's
    own), False (none) or ``ort_arena.SHARED_ARENA`` (the process's shared one)."""
    import onnxruntime as ort

    from .ort_arena import SHARED_ARENA, shared_arena

    if arena == SHARED_ARENA:
        arena = shared_arena()
        if arena:
            config = {**(config or {}), "session.use_env_allocators": "1"}
    so = session_options(optimize=optimize, threads=threads, arena=bool(arena), spinning=spinning,
                         config=config)
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])


def ort_version() -> str:
    import onnxruntime as ort

    return ort.__version__


def tensor_info(model) -> Dict[str, Tuple[int, Optional[Tuple[Optional[int], ...]]]]:
    """``{tensor name: (ONNX element type, shape)}`` for every tensor shape inference can type.

    ``shape`` is None when unknown, and a dim is None when dynamic. Inference is best effort:
    a model it cannot handle yields only what the graph declares."""
    import onnx

    from .shape_inference_copy import shape_inference_model

    try:
        inferred = onnx.shape_inference.infer_shapes(shape_inference_model(model),
                                                     strict_mode=False, data_prop=True)
    except Exception:
        inferred = model
    g = inferred.graph
    info: Dict[str, Tuple[int, Optional[Tuple[Optional[int], ...]]]] = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is None or not tt.elem_type:
            continue
        shape = declared_shape(vi) if tt.HasField("shape") else None
        if vi.name not in info or info[vi.name][1] is None:
            info[vi.name] = (tt.elem_type, shape)
    for t in model.graph.initializer:  # (the model's: the copy inferred may lack big ones)
        info[t.name] = (t.data_type, tuple(int(d) for d in t.dims))
    for n in model.graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
                    info[n.output[0]] = (a.t.data_type, tuple(int(d) for d in a.t.dims))
    return info


def tensor_info_to_json(info) -> dict:
    """``tensor_info``'s result as JSON-able data (``tensor_info_from_json`` reads it back)."""
    return {name: [elem, None if shape is None else list(shape)] for name, (elem, shape) in info.items()}


def tensor_info_from_json(data) -> Dict[str, Tuple[int, Optional[Tuple[Optional[int], ...]]]]:
    """The ``tensor_info`` that ``tensor_info_to_json`` saved; ``ValueError`` when ``data`` is not
    such a mapping."""
    try:
        return {str(name): (int(elem), None if shape is None else
                            tuple(None if d is None else int(d) for d in shape))
                for name, (elem, shape) in data.items()}
    except (AttributeError, TypeError, ValueError) as exc:
        raise ValueError(f"not a saved tensor_info: {exc}") from None


def as_model_bytes(model) -> bytes:
    return model.SerializeToString()
