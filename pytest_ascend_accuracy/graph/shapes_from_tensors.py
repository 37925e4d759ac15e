"""The sizes a model's dynamic inputs had in a run, read back from the shapes of its tensors.

A golden stored with ``golden_dump(model, inputs)`` runs at the arrays' shapes and records
``"input_shape": {}`` when none was given; a diagnose command printed from it without
``--input-shape`` was refused ('3 inputs are left dynamic', a BERT trial). The golden's own
tensors hold those sizes: shape inference spreads the inputs' named dimensions (``batch``,
``seq``) over the tensors the ops make (``[batch, seq, 32]``), and each stored tensor's header
gives that tensor's concrete shape (``(2, 8, 32)``), so ``batch`` is 2 and ``seq`` 8. A
dimension no name ties (left unset on the input) gets a name of its own first.

Only what holds together is returned: a named dimension two tensors give two sizes is not
taken, and the shapes found are checked by inferring the model at them again: every tensor
whose shape that fixes must have its stored shape, else nothing is returned.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

#: one stored tensor: (op name as the dump names it, "output:K" / "input:K", its shape)
Tensor = Tuple[str, str, Sequence[int]]
#: a tensor's inferred dimensions: a size, a dimension name, or None when unknown
Dims = Tuple[object, ...]

#: the prefix of the names given to input dimensions left unnamed (not a name exports use)
_UNNAMED = "__pytest_ascend_accuracy_unnamed__"


def input_shapes_from_tensors(model, tensors: Iterable[Tensor],
                              given: Optional[Mapping[str, Sequence[int]]] = None,
                              ) -> Dict[str, Tuple[int, ...]]:
    """``{input: shape}`` for each tensor input of ``model`` (a path or ModelProto) that neither
    the model nor ``given`` fixes and whose sizes ``tensors`` tell; {} where they contradict
    each other or the model. Op names are the model's node names (unnamed nodes named as the
    golden run names them) or their file-name stems (``a/b`` as ``a_b``)."""
    from .names import normalize_node_names
    from .onnx_graph import load_model

    proto = load_model(model, weights=False)
    normalize_node_names(proto.graph)
    given = {str(k): tuple(int(d) for d in v) for k, v in (given or {}).items()}
    sizes: Dict[str, Set[int]] = {}  # dimension name -> the sizes tensors give it
    open_inputs = _name_open_dims(proto, given, sizes)
    if not open_inputs:
        return {}
    seen = _tensor_shapes(proto, tensors)
    dims, strict = _inferred(proto)
    direct: Dict[str, Tuple[int, ...]] = {}
    for name, shape in seen:
        if name in open_inputs and not dims.get(name):
            direct[name] = shape  # a stored op input that is the graph input (no rank known)
        _bind(dims.get(name), shape, sizes)
    found: Dict[str, Tuple[int, ...]] = {}
    for name, declared in open_inputs.items():
        shape = direct.get(name) or _resolve(declared, sizes)
        if shape is not None and all(d > 0 for d in shape):
            found[name] = shape
    if found and not _consistent(model, {**given, **found}, seen, strict):
        return {}
    return found


def _name_open_dims(proto, given, sizes: Dict[str, Set[int]]) -> Dict[str, Dims]:
    """Set ``given`` on the inputs (their named dimensions' sizes into ``sizes``) and name each
    unnamed dynamic dimension, in place; the inputs left dynamic with their dimensions (``()``
    for no declared shape)."""
    from .onnx_graph import graph_inputs

    open_inputs: Dict[str, Dims] = {}
    for vi in graph_inputs(proto):
        if vi.type.WhichOneof("value") != "tensor_type":
            continue
        if vi.name in given:
            _bind(tuple(d.dim_param or None for d in vi.type.tensor_type.shape.dim),
                  given[vi.name], sizes)
            _set_sizes(vi, given[vi.name])
            continue
        if not vi.type.tensor_type.HasField("shape"):
            open_inputs[vi.name] = ()
            continue
        dims: List[object] = []
        for k, d in enumerate(vi.type.tensor_type.shape.dim):
            if d.HasField("dim_value") and d.dim_value > 0:
                dims.append(int(d.dim_value))
            else:
                d.dim_param = d.dim_param or f"{_UNNAMED}{vi.name}:{k}"
                dims.append(d.dim_param)
        if any(isinstance(d, str) for d in dims):
            open_inputs[vi.name] = tuple(dims)
    return open_inputs


def _set_sizes(vi, sizes) -> None:
    shape = vi.type.tensor_type.shape
    del shape.dim[:]
    for s in sizes:
        shape.dim.add().dim_value = int(s)


def _tensor_shapes(proto, tensors: Iterable[Tensor]) -> List[Tuple[str, Tuple[int, ...]]]:
    """(graph tensor name, stored shape) of each stored tensor whose op and slot name one."""
    from ..dump.layout import sanitize

    nodes = {n.name: n for n in proto.graph.node}
    stems: Dict[str, object] = {}
    for n in proto.graph.node:
        stem = sanitize(n.name)
        stems[stem] = None if stem in stems else n  # a stem two nodes share names neither
    out = []
    for op, slot, shape in tensors:
        node = nodes.get(op) or stems.get(sanitize(op))
        kind, _, index = str(slot).partition(":")
        if node is None or kind not in ("input", "output") or not index.isdigit():
            continue
        names = node.output if kind == "output" else node.input
        if int(index) >= len(names):
            continue
        if names[int(index)]:
            out.append((names[int(index)], tuple(int(d) for d in shape)))
    return out


def _inferred(proto) -> Tuple[Dict[str, Dims], bool]:
    """(every tensor's inferred dimensions (a size, a dimension name or None), {} where shape
    inference fails on the model; whether strict inference passed: it refuses sizes two ops
    cannot both take, as an Add of [2, 8, 4] and [2, 9, 1])."""
    import onnx

    strict = True
    try:
        inferred = onnx.shape_inference.infer_shapes(proto, strict_mode=True, data_prop=True)
    except Exception:  # an op it cannot check, or sizes that do not fit: best effort then
        strict = False
        try:
            inferred = onnx.shape_inference.infer_shapes(proto, strict_mode=False,
                                                         data_prop=True)
        except Exception:  # a model it cannot read gives no sizes, the advice says so
            return {}, False
    g = inferred.graph
    out: Dict[str, Dims] = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        t = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if t is None or not t.HasField("shape"):
            continue
        out[vi.name] = tuple(int(d.dim_value) if d.HasField("dim_value") else
                             (d.dim_param or None) for d in t.shape.dim)
    return out, strict


def _bind(dims: Optional[Dims], shape: Tuple[int, ...], sizes: Dict[str, Set[int]]) -> None:
    """The size ``shape`` gives each dimension name of ``dims``, where the two agree on the
    rank and on every fixed size (else the tensor says nothing)."""
    if not dims or len(dims) != len(shape):
        return
    if any(isinstance(d, int) and d != s for d, s in zip(dims, shape)):
        return
    for d, s in zip(dims, shape):
        if isinstance(d, str):
            sizes.setdefault(d, set()).add(int(s))


def _resolve(declared: Dims, sizes: Mapping[str, Set[int]]) -> Optional[Tuple[int, ...]]:
    if not declared:
        return None
    out = []
    for d in declared:
        if isinstance(d, int):
            out.append(d)
        elif len(sizes.get(d, ())) == 1:
            out.append(next(iter(sizes[d])))
        else:
            return None  # unknown, or given two sizes
    return tuple(out)


def sizes_fit(model, shapes: Mapping[str, Tuple[int, ...]]) -> bool:
    """Whether ONNX's strict shape inference, where it takes the model with its dimensions
    named, takes it at ``shapes`` too: False where two ops cannot both take those sizes (a
    Reshape to [2, -1] of one element); True where it cannot judge."""
    from .onnx_graph import load_model

    _, strict = _inferred(load_model(model, weights=False))
    return _consistent(model, shapes, (), strict)


def _consistent(model, shapes: Mapping[str, Tuple[int, ...]], seen, strict: bool) -> bool:
    """Whether the model inferred at ``shapes`` gives each stored tensor whose shape that fixes
    its stored shape (a wrong guess shows where any op's sizes depend on an input's), and,
    where strict inference passed with the dimensions named (``strict``), passes at them."""
    from .onnx_graph import graph_inputs, load_model

    proto = load_model(model, weights=False)
    for vi in graph_inputs(proto):
        if vi.name in shapes and vi.type.WhichOneof("value") == "tensor_type":
            _set_sizes(vi, shapes[vi.name])
    dims, passed = _inferred(proto)
    if strict and not passed:
        return False
    for name, shape in seen:
        got = dims.get(name)
        if got and all(isinstance(d, int) for d in got) and tuple(got) != shape:
            return False
    return True
