"""How large a seeded integer input may be (``make_inputs`` draws from [0, 10) by default):

* an input that indexes a constant table (a Gather's ``indices``, the ``token_type_ids`` of a
  BERT export into its 2-row table) takes values below that table's size on the gathered axis,
  else onnxruntime refuses the run ("indices element out of data bounds, idx=9 must be within
  the inclusive range [-2,1]") before anything is compared;
* an input named as a mask (``attention_mask``, ``input_mask``: its name holds ``mask``, as
  onnxruntime's own BERT test data finds it) takes 0 and 1: a BERT export turns it into
  ``(1 - mask) * -10000``, which a mask value of 9 makes 80000, past float16's 65504, and the
  check failed a model that passes on every real (0/1) mask;
* an input that is a recurrent op's ``sequence_lens`` (ONNX ``LSTM``, ``GRU``, ``RNN``: input
  4) takes values in [1, seq_length], seq_length being its ``X``'s axis 0 (axis 1 under
  ``layout=1``, the ONNX spec's batch-first layout): onnxruntime refuses any other ("Invalid
  value/s in sequence_lens. All values must be >= 0 and <= seq_length"), and a length of 0 runs
  no step at all. A trial's LSTM of 6 steps drew [5, 8] from [0, 10), and the golden failed;
* an input that none of these bounds and whose name says it is a length (``waveforms_lens``
  beside ``waveforms`` [batch, N]) takes the length of the input it measures, every element
  (``graph.length_inputs``): drawn 5 of 16000 samples, an audio front-end masked every frame
  and the check passed on an all-zero output;
* an input that none of these bounds and that the model one-hot encodes, ``Equal`` against a
  constant table of two or more values (Magika's bytes against ``0..256``), takes values
  spanning that table, [min, max] (``graph.one_hot_tables``): [0, 10) left 247 of its 257 rows
  unseen, and a keep list from a seeded failure failed pasted on real bytes;
* an input that none of these bounds and that the model compares for equality with a constant
  (``Equal(sr, 16000) -> If``, silero-vad's sample rate) takes that constant, every element
  (the first ``Equal`` in graph order where several are): a seeded run takes the path the
  model singles out, not the one [0, 10) happens to pick (``graph.compared_inputs``).

Where the table cannot be traced (computed, or reached through a Reshape), the seeded indices
stay in [0, 10) and onnxruntime refuses the golden run naming only its node;
``index_hint`` says which input holds the index, whether it was seeded, and the arrays to give
in pytest's, a YAML suite's and the CLI's spelling (``golden.onnxruntime_golden`` adds it).
"""
from __future__ import annotations

import math
import re
from typing import Callable, Dict, Iterable, Mapping, Optional, Tuple

import numpy as np

from .compared_inputs import compared_constants
from .length_inputs import length_inputs
from .one_hot_tables import one_hot_ranges
from .value_readers import PASS_THROUGH, reached, readers_of
#: ops whose output has their first input's shape: a table reached through them from an
#: initializer keeps its size (a QDQ model's Gather reads ``DequantizeLinear(weight_quantized)``,
#: a float16 conversion's ``Cast(weight)``)
_SAME_SHAPE = frozenset({"DequantizeLinear", "QuantizeLinear", "Cast", "CastLike", "Identity"})
#: recurrent ops whose input 4 is ``sequence_lens`` (the ONNX spec, every opset)
_RECURRENT = frozenset({"LSTM", "GRU", "RNN"})
_SEQUENCE_LENS = 4
#: a shape (a dimension None where unknown), or None, of a tensor named so
ShapeOf = Callable[[str], Optional[Tuple[Optional[int], ...]]]


def integer_ranges(model, names: Iterable[str], shapes: Mapping[str, Tuple[int, ...]],
                   tensor_info: Optional[Callable[[object], Mapping[str, tuple]]] = None,
                   declared: Optional[Mapping[str, tuple]] = None) -> Dict[str, Tuple[int, int]]:
    """``{input name: (low, high)}``: the seeded values of those of ``names`` (``model``'s
    integer graph inputs, of these ``shapes``) lie in [low, high); inputs not listed take
    [0, 10). [0, n) for ``integer_highs``'s ``n`` (at most 10); [1, seq_length + 1) for a
    recurrent op's ``sequence_lens`` (``sequence_lengths``), below a table it also indexes;
    [n, n + 1) for one of the rest that is the length ``n`` of another input
    (``length_inputs``; ``declared``: the inputs' declared dimensions, where ``model``'s were
    set to ``shapes``); [c, c + 1) for one of the rest that the model compares with a constant
    ``c`` deciding an If (``compared_inputs.compared_constants``); [low, high + 1) for one of
    the rest one-hot encoded against a table of those values (``one_hot_tables``).
    An ``X`` that is no graph input is sized by ``tensor_info(model)`` (``onnx_graph``'s:
    ``{tensor: (element type, shape)}``, called once), else it is not sized."""
    names = list(names)
    highs = integer_highs(model, names)
    out = {n: (0, min(10, high)) for n, high in highs.items()}
    inferred: Dict[str, Mapping[str, tuple]] = {}

    def shape_of(tensor: str):
        if tensor in shapes:
            return shapes[tensor]
        if tensor_info is None:
            return None
        if "info" not in inferred:  # once, and only for an X inside the graph
            inferred["info"] = tensor_info(model)
        return (inferred["info"].get(tensor) or (0, None))[1]

    lengths = sequence_lengths(model, names, shape_of)
    for name, steps in lengths.items():
        high = min(steps + 1, highs.get(name, steps + 1))  # and below a table it indexes
        out[name] = (1, high) if high > 1 else (0, 1)
    free = [n for n in names if n not in out and n not in lengths]
    for name, length in length_inputs(model, free, shapes, declared).items():  # the whole of
        out[name] = (length, length + 1)  # what it measures: every sample valid (before an If
    free = [n for n in free if n not in out]  # guard's Equal(x_len, 0): a re-review)
    for name, compared in compared_constants(model, free).items():  # the value it is equal to
        out[name] = (compared.value, compared.value + 1)  # where that decides an If
    free = [n for n in free if n not in out]
    out.update(one_hot_ranges(model, free))  # the rows of the table it is one-hot encoded by
    return out


def sequence_lengths(model, names: Iterable[str], shape_of: ShapeOf) -> Dict[str, int]:
    """``{input name: seq_length}`` for those of ``names`` that a recurrent op (``_RECURRENT``)
    reads as its ``sequence_lens``, directly or through ``PASS_THROUGH`` ops: the length of
    the op's ``X`` on its sequence axis (0, or 1 where ``layout`` is 1), ``shape_of(X)``; the
    shortest where several read it. An input whose ``X`` has no known length is not listed."""
    readers = readers_of(model.graph)
    out: Dict[str, int] = {}
    for name in names:
        found = []
        for node, slot in reached(name, readers):
            if node.op_type not in _RECURRENT or slot != _SEQUENCE_LENS or not node.input[0]:
                continue
            layout = next((a.i for a in node.attribute if a.name == "layout"), 0)
            shape = shape_of(node.input[0])
            axis = 1 if layout == 1 else 0
            if shape and len(shape) > axis and shape[axis] is not None:
                found.append(int(shape[axis]))
        if found:
            out[name] = min(found)
    return out


def integer_highs(model, names: Iterable[str]) -> Dict[str, int]:
    """``{input name: n}``: the seeded values of those of ``names`` (integer graph inputs of
    ``model``, a ModelProto) lie in [0, n). A mask (its name holds ``mask``): 2, or less where
    it indexes a smaller table. Else one whose
    values index a constant table of ``n`` entries (``n >= 1``; the smallest where several): a
    Gather's ``indices`` whose ``data`` is an initializer or a Constant, or one of those through
    ops that keep its shape (``_SAME_SHAPE``: a QDQ model's ``DequantizeLinear``), reached
    directly or through ops that pass the values on unchanged (``PASS_THROUGH``, as their
    first input)."""
    graph = model.graph
    dims = {t.name: tuple(t.dims) for t in graph.initializer}
    for node in graph.node:  # (in graph order: a producer before its readers)
        if node.op_type == "Constant" and node.output:
            for a in node.attribute:
                if a.name == "value":
                    dims[node.output[0]] = tuple(a.t.dims)
        elif node.op_type in _SAME_SHAPE and node.input and node.input[0] in dims:
            dims[node.output[0]] = dims[node.input[0]]
    readers = readers_of(graph)
    out: Dict[str, int] = {}
    for name in names:
        bound = _bound(name, readers, dims, set())
        if "mask" in name.lower():  # 0 and 1, or less where it indexes a 1-row table
            bound = min(2, bound or 2)
        if bound is not None:
            out[name] = bound
    return out


def _bound(tensor: str, readers, dims, seen) -> Optional[int]:
    """The smallest table size ``tensor``'s values index, or None."""
    found = []
    for node, slot in reached(tensor, readers, seen=seen):
        if node.op_type == "Gather" and slot == 1 and node.input[0] in dims:
            shape = dims[node.input[0]]
            axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
            if shape and -len(shape) <= axis < len(shape) and shape[axis] >= 1:
                found.append(int(shape[axis]))
    return min(found) if found else None


# -- an index onnxruntime refused: which input, and what to give ----------------------------
#: onnxruntime's words (1.32 CPU kernels: gather.cc, gather_elements.cc, gather_nd.cc) for an
#: index out of its data's range; the node is named ``Name:'...'`` before them
_REFUSED = re.compile(r"running (Gather|GatherElements|GatherND) node\. Name:'(.*?)' Status "
                      r"Message: (.*)", re.S)
_GATHER_RANGE = re.compile(r"idx=(-?\d+) must be within the inclusive range \[(-?\d+),(-?\d+)\]")
_GATHER_ND = re.compile(r"invalid index found, index = (-?\d+)")
_ELEMENTS = "Out of range value in index tensor"
#: seeds tried for "were these arrays make_inputs' draw?" (the plugin's, the CLI's and a YAML
#: suite's default is 0; a test's own seed is usually small)
_SEEDS_TRIED = 100


def index_hint(model, message: str, inputs: Mapping[str, object], *,
               model_path: Optional[str] = None) -> str:
    """What to add to onnxruntime's refusal ``message`` of an index out of range (Gather,
    GatherElements, GatherND) in ``model`` (the ModelProto onnxruntime ran, its node names)
    on ``inputs``: '' unless the refused indices are a graph input's values, reached through
    ops that pass them on (``PASS_THROUGH``). Where that input's array is ``make_inputs``'
    seeded draw (seed 0 to 99): '; seeded input 'ids' drew integers from [0, 10) (seed 0), but
    Gather 'g' takes [0, 1] ...: give your own arrays (pytest: ...; YAML: ...; ascend-accuracy
    diagnose ... --inputs ...)', each spelling naming one ``<input>.npy`` per model input
    (every form takes every input); ``model_path``: the model's file, for the CLI's. Else the
    given array holds the index: '; input 'ids' holds 9 ..., but Gather 'g' takes [0, 1]'."""
    found = _REFUSED.search(message or "")
    if not found:
        return ""
    op_type, node_name, said = found.groups()
    graph = model.graph
    node = next((n for n in graph.node if n.name == node_name and n.op_type == op_type), None)
    if node is None or len(node.input) < 2:
        return ""
    source = _graph_input_of(graph, node.input[1], inputs)
    if source is None:
        return ""
    takes, index = _what_it_takes(graph, node, said)
    array = np.asarray(inputs[source])
    where = f"{op_type} {node_name!r} " + (f"takes {takes}" if takes else "refused it")
    seeded = _seeded_draw(model, source, array)
    within = f"within {takes}" if takes else "in range"
    if seeded is None:
        held = f"holds {index}" if index is not None else "holds an index out of range"
        return (f"; input {source!r} {held}, but {where}: the arrays given hold an index out of "
                f"range; give {source!r} values {within}")
    (low, high), seed = seeded
    return (f"; seeded input {source!r} drew integers from [{low}, {high}) (seed {seed}), but "
            f"{where} (a table this package cannot trace to a constant, so it cannot bound the "
            f"draw): give your own arrays, a .npy file per model input (numpy.save), those of "
            f"{source!r} {within} ({_spellings(graph, model_path)})")


def seeded_input_hint(model, message: str, inputs: Mapping[str, object], *,
                      source=None, model_path: Optional[str] = None) -> str:
    """What to add to onnxruntime's refusal ``message`` of ``model`` (the ModelProto it ran)
    on ``inputs``: ``index_hint``'s words where an index was out of range; else, where
    ``inputs`` are ``make_inputs``' seeded draw (seed 0 to 99) and a seeded integer input of
    ``source`` (the model as given, before its ``If``s were decided: ``model`` where None) is
    compared with a constant ('sr' by ``Equal(sr, 16000)``), '; seeded input 'sr' drew 16000
    (seed 0), the constant the model compares it with (Equal 'eq'): the run took the path that
    value picks; to run it with the values you deploy, give them yourself (pytest: ...; YAML:
    ...; ascend-accuracy diagnose ... --inputs ...)', for each such input."""
    said = index_hint(model, message, inputs, model_path=model_path)
    if said:
        return said
    from .compared_inputs import compared_constants

    graph = (model if source is None else source).graph
    inits = {t.name for t in graph.initializer}
    names = [i.name for i in graph.input if i.name not in inits]
    compared = compared_constants(model if source is None else source,
                                  [n for n in names if n in inputs])
    if not compared:
        return ""
    seed = _draw_seed(names, inputs)
    if seed is None:
        return ""
    drew = []
    for name, (value, node) in compared.items():
        array = np.asarray(inputs[name])
        if array.dtype.kind in "iu" and array.size and bool(np.all(array == value)):
            drew.append(f"seeded input {name!r} drew {value} (seed {seed}), the constant the "
                        f"model compares it with (Equal {node!r})")
    if not drew:
        return ""
    return (f"; {'; '.join(drew)}: the run took the path that value picks; to run it with the "
            f"values you deploy, give them yourself, a .npy file each (numpy.save) "
            f"({_spellings(graph, model_path, seeded=(seed, list(compared)))})")


def _draw_seed(names, inputs) -> Optional[int]:
    """The seed (below ``_SEEDS_TRIED``) whose ``make_inputs`` draw the float inputs of
    ``inputs`` are (their first 16 values: input ``k`` draws from ``default_rng([seed, k])``),
    or None (no float input of 4 values or more, or none matches)."""
    floats = [(k, np.asarray(inputs[n]).reshape(-1)[:16]) for k, n in enumerate(names)
              if n in inputs and np.asarray(inputs[n]).dtype.kind == "f"
              and np.asarray(inputs[n]).size >= 4]
    if not floats:
        return None
    for seed in range(_SEEDS_TRIED):
        if all(np.array_equal(np.random.default_rng([seed, k]).random(len(head)).astype(
                head.dtype), head) for k, head in floats):
            return seed
    return None


def _graph_input_of(graph, tensor: str, inputs) -> Optional[str]:
    """The graph input (one of ``inputs``) whose values ``tensor`` is, through
    ``PASS_THROUGH`` ops (their first input), or None."""
    producers = {o: n for n in graph.node for o in n.output if o}
    seen = set()
    while tensor not in inputs:
        node = producers.get(tensor)
        if node is None or node.op_type not in PASS_THROUGH or not node.input or tensor in seen:
            return None
        seen.add(tensor)
        tensor = node.input[0]
    return tensor


def _what_it_takes(graph, node, said: str) -> Tuple[Optional[str], Optional[int]]:
    """('[0, 1]' or None, the refused index or None) from onnxruntime's words ``said`` (a
    Gather names its range) or the data's size where the model holds it (GatherElements)."""
    gather = _GATHER_RANGE.search(said)
    if gather:
        index, _, high = (int(v) for v in gather.groups())
        return f"[0, {high}]", index
    nd = _GATHER_ND.search(said)
    if nd:
        return None, int(nd.group(1))
    if _ELEMENTS in said:
        dims = {t.name: tuple(t.dims) for t in graph.initializer}
        shape = dims.get(node.input[0])
        axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
        if shape and -len(shape) <= axis < len(shape):
            return f"[0, {int(shape[axis]) - 1}]", None
    return None, None


def _seeded_draw(model, name: str, array: np.ndarray):
    """((low, high), seed) where ``array`` is ``make_inputs``' draw of input ``name`` of
    ``model`` for a seed below ``_SEEDS_TRIED`` (input ``k`` draws from
    ``default_rng([seed, k])``), else None."""
    graph = model.graph
    inits = {t.name for t in graph.initializer}
    names = [i.name for i in graph.input if i.name not in inits]
    if name not in names or array.dtype.kind not in "iu" or array.size > 1 << 20:
        return None
    k = names.index(name)
    bounds = integer_ranges(model, [name], {name: array.shape}).get(name, (0, 10))
    # a draw of few values matches some seed by chance (a user's [5] read as seed 16's draw,
    # a review): claimed only where a chance match of any seed tried is below 1e-3
    if array.size * math.log10(max(bounds[1] - bounds[0], 2)) < math.log10(_SEEDS_TRIED) + 3:
        return None
    for seed in range(_SEEDS_TRIED):
        drawn = np.random.default_rng([seed, k]).integers(*bounds, size=array.shape)
        if np.array_equal(drawn.astype(array.dtype), array):
            return bounds, seed
    return None


def _spellings(graph, model_path: Optional[str], seeded=None) -> str:
    """'pytest: inputs={...} in the test's accuracy_inputs(...) (import numpy); YAML: inputs:
    {...}; ascend-accuracy diagnose MODEL --inputs a=a.npy ...', one ``<input>.npy`` per model
    input (``model_path``: the model's file, else ``MODEL.onnx``). ``seeded``: (seed, names):
    pytest's form gives only those inputs and seeds the others, 'seed=0, inputs={...}'."""
    import shlex

    from ..core.yaml_text import yaml_flow_map

    inits = {t.name for t in graph.initializer}
    files: Dict[str, str] = {}
    for vi in graph.input:
        if vi.name not in inits:
            stem = _file_stem(vi.name)
            taken = set(files.values())  # two names of one stem ('a:0', 'a/0'): numbered
            files[vi.name] = next(f for f in (f"{stem}{s}.npy" for s in ("", *range(1, 99)))
                                  if f not in taken)
    pytest_form = ", ".join(f"{n!r}: numpy.load({f!r})" for n, f in files.items()
                            if seeded is None or n in seeded[1])
    pytest_form = (f"inputs={{{pytest_form}}}" if seeded is None
                   else f"seed={seeded[0]}, inputs={{{pytest_form}}}")
    cli = " ".join(f"--inputs {shlex.quote(f'{n}={f}')}" for n, f in files.items())
    target = shlex.quote(model_path) if model_path else "MODEL.onnx"
    return (f"pytest: {pytest_form} in the test's accuracy_inputs(...) (import "
            f"numpy); YAML: inputs: {yaml_flow_map(files)}; ascend-accuracy diagnose {target} "
            f"{cli}")


def _file_stem(name: str) -> str:
    """``name``'s characters a file name can hold (others ``_``)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".") or "input"
