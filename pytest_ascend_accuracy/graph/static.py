"""Which tensors of an ONNX graph do not depend on input values, and their values.

A tensor is *static* when it is an initializer, a ``Constant`` output, the ``Shape``/``Size``
of a tensor whose shape is fully known, or the output of a deterministic node whose inputs are
all static. ATC folds such subgraphs at conversion time (they never run on the device and are
never dumped); ``If`` conditions that are static can be decided without inputs. ``evaluate``
computes any set of tensors with onnxruntime in one run.
"""
from __future__ import annotations

from typing import Dict, Iterable, Mapping, Optional, Set

import numpy as np

from ..errors import ConversionError

#: ops whose output changes from run to run: never static
NONDETERMINISTIC = frozenset({"RandomNormal", "RandomNormalLike", "RandomUniform",
                              "RandomUniformLike", "Multinomial", "Bernoulli", "Dropout"})
#: ops whose output depends only on the input's shape
SHAPE_OPS = frozenset({"Shape", "Size"})


def static_tensors(model, info: Mapping[str, tuple]) -> Set[str]:
    """Names of the static tensors of the main graph (see module docstring).

    ``info`` is ``onnx_graph.tensor_info(model)`` (types and inferred shapes)."""
    static: Set[str] = {t.name for t in model.graph.initializer}
    static.add("")  # an omitted optional input does not make a node dynamic
    for node in model.graph.node:
        if node.op_type in NONDETERMINISTIC or node.domain not in ("", "ai.onnx"):
            continue
        if any(a.type in (5, 10) for a in node.attribute):  # subgraphs: not folded
            continue
        if node.op_type == "Constant":
            static.update(node.output)
        elif node.op_type in SHAPE_OPS:
            shape = info.get(node.input[0], (0, None))[1]
            if node.input[0] in static or (shape is not None and all(d is not None for d in shape)):
                static.update(node.output)
        elif all(i in static for i in node.input):
            static.update(o for o in node.output if o)
    static.discard("")
    return static


#: ONNX element types whose values numpy holds as they are (FLOAT, UINT8, INT8, UINT16, INT16,
#: INT32, INT64, BOOL, FLOAT16, DOUBLE, UINT32, UINT64)
_NUMPY_NATIVE = frozenset({1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13})


def constant_values(model, names: Iterable[str]) -> Dict[str, np.ndarray]:
    """The values of those ``names`` that are the output of a ``Constant`` node holding its
    tensor in ``value`` (its data in the model, of a type numpy holds as it is): the tensor
    itself, as onnxruntime would return it, without building a session for it (PP-OCR models
    keep every weight in such a node: 286 of them in cls, 342 in det, whose folding built a
    session for them alone, 15-22 ms). Other ``Constant`` forms (``value_float``,
    ``sparse_value``, strings, bfloat16, external data) are left out: ``evaluate`` computes
    them."""
    from onnx import AttributeProto, TensorProto, numpy_helper

    wanted = set(names)
    out: Dict[str, np.ndarray] = {}
    for node in model.graph.node:
        if (node.op_type != "Constant" or node.domain not in ("", "ai.onnx")
                or len(node.output) != 1 or node.output[0] not in wanted
                or len(node.attribute) != 1):
            continue
        attr = node.attribute[0]
        t = attr.t
        if (attr.name != "value" or attr.type != AttributeProto.TENSOR
                or t.data_type not in _NUMPY_NATIVE or t.data_location == TensorProto.EXTERNAL):
            continue
        try:
            out[node.output[0]] = np.array(numpy_helper.to_array(t))  # its own, writable copy
        except ValueError:  # data that does not fill its dims: onnxruntime says so, naming it
            continue
    return out


def evaluate(model, names: Iterable[str], inputs: Optional[Mapping[str, np.ndarray]] = None, *,
             folder: Optional[str] = None) -> Dict[str, np.ndarray]:
    """Values of ``names`` computed by onnxruntime on ``inputs`` (default: zero inputs of the
    model's static input shapes, enough for tensors that are static); ``folder``: where the
    model's external-data weights are (``graph.external``). Initializers and the tensors of
    ``Constant`` nodes (``constant_values``) are taken as they are. The result lists the
    initializers first, then the others, each in the order asked for."""
    import onnx

    from .external import EXTERNAL_FOLDER_KEY, initializer_array
    from .onnx_graph import declared_shape, graph_inputs, input_dtype, ort_session

    wanted = [n for n in dict.fromkeys(names) if n]
    if not wanted:
        return {}
    inits = {t.name: t for t in model.graph.initializer}
    out: Dict[str, np.ndarray] = {}
    for n in wanted:
        if n in inits:
            out[n] = initializer_array(inits[n], folder)
    computed = [n for n in wanted if n not in out]
    order = list(out) + computed  # initializers first, as before (folding adds them so)
    if computed:
        out.update(constant_values(model, computed))
    rest = [n for n in computed if n not in out]
    if not rest:
        return {n: out[n] for n in order}
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    del probe.graph.output[:]
    for n in rest:
        probe.graph.output.append(onnx.ValueInfoProto(name=n))
    if inputs is None:
        inputs = {}
        for vi in graph_inputs(probe):
            shape = declared_shape(vi)
            if any(d is None for d in shape):
                raise ConversionError(f"cannot evaluate {rest[0]!r}: input {vi.name!r} has a "
                                      f"dynamic shape; pass input_shape")
            inputs[vi.name] = np.zeros(shape, dtype=input_dtype(vi))
    try:
        sess = ort_session(probe.SerializeToString(), config={EXTERNAL_FOLDER_KEY: folder} if folder else None)
        values = sess.run(rest, dict(inputs))
    except Exception as exc:
        raise ConversionError(f"onnxruntime could not evaluate {len(rest)} tensor(s) "
                              f"(first {rest[0]!r}): {exc}") from exc
    out.update(zip(rest, values))
    return {n: out[n] for n in order}
