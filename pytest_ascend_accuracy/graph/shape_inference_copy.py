"""The model onnx's shape inference is given (``onnx_graph.tensor_info``,
``value_kinds.value_kinds``): the model itself, or a light copy in which each big weight is a
typed graph input of its shape.

``onnx.shape_inference.infer_shapes`` serialises the model it is given, parses it in C++,
serialises the inferred model and the caller parses that: every weight is copied four times a
call, and a conversion calls it four times (the golden's segment plan once more). Measured on
the development VM: a 201 MB MatMul chain took 0.82 s a call against 0.03 s on the light copy,
YOLOv8n (the ``nudenet`` wheel's ``320n.onnx``, 12 MB of weights) 13 ms against 6 ms; and
protobuf stops at 2 GB, so a bigger model's shapes came out unknown (its segments uncut) until
the light copy (2026-12-03, then only above 256 MB of weights).

A float weight's values never decide a shape. Shape inference reads values only where shapes
are computed from them: the integer tensors of data propagation (a Reshape's shape, a Slice's
starts, a table a shape is gathered from) and a Resize's or Upsample's float scales, a few
values each. So a floating-point tensor above ``FLOAT_DECLARED_ABOVE``, and a tensor of any
type above ``ANY_DECLARED_ABOVE`` (for protobuf's limit), an initializer or the value of a
main-graph Constant node (PaddleOCR's exports hold their weights in Constant nodes), is
declared, not copied, and the shapes come out the same. The copy is made only where such
tensors add up to more than ``LIGHT_ABOVE``: on a graph of small weights, copying its nodes
costs more than it saves. So that inference sees what it sees on the model (two reviews found
each case differed): a Constant whose output is also a graph output stays (declared there
without a type, it would stand for the weight); an input that lists a big initializer keeps
its declaration where it has a type (inference takes it) and is typed from the initializer
where it has none; sparse initializers are copied; ``onnx_graph.tensor_info`` takes
initializers' and Constants' types and dims from the model. Where a declaration (a value_info,
an input's type) contradicts a weight's dims or leaves them open, the copy keeps the weight's
own and its users' shapes come out known where the model's did not.
"""
from __future__ import annotations

import math

#: a floating-point weight above this many bytes is declared, not copied
FLOAT_DECLARED_ABOVE = 64 << 10
#: a tensor of any type above this many bytes is declared, not copied (protobuf's 2 GB limit;
#: an integer tensor shapes are computed from is far smaller)
ANY_DECLARED_ABOVE = 64 << 20
#: the light copy is made where the declared tensors add up to more than this many bytes
LIGHT_ABOVE = 4 << 20

_FLOAT_TYPES = ("FLOAT", "DOUBLE", "FLOAT16", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
                "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "FLOAT4E2M1", "COMPLEX64", "COMPLEX128")


def shape_inference_model(model):
    """``model`` itself, or the light copy described above (``model`` is never changed)."""
    import onnx
    from onnx import helper

    floats = {getattr(onnx.TensorProto, name) for name in _FLOAT_TYPES
              if hasattr(onnx.TensorProto, name)}
    total = 0  # the bytes of the tensors declared

    def declared(t) -> bool:
        nonlocal total
        size = _data_bytes(t)
        if size > ANY_DECLARED_ABOVE or (size > FLOAT_DECLARED_ABOVE and t.data_type in floats):
            total += size
            return True
        return False

    g = model.graph
    big = {t.name: t for t in g.initializer if declared(t)}
    outputs = {o.name for o in g.output}  # (declared untyped there, its users lose the shape)
    constants = {}  # node index -> its big value
    for k, n in enumerate(g.node):
        if (n.op_type == "Constant" and n.domain in ("", "ai.onnx") and len(n.output) == 1
                and n.output[0] not in outputs):
            value = next((a.t for a in n.attribute
                          if a.name == "value" and a.type == onnx.AttributeProto.TENSOR), None)
            if value is not None and declared(value):
                constants[k] = value
    if total <= LIGHT_ABOVE:
        return model
    light = onnx.ModelProto()
    light.ir_version = max(int(model.ir_version), 4)
    light.opset_import.extend(model.opset_import)
    light.functions.extend(model.functions)
    lg = light.graph
    lg.name = g.name
    lg.node.extend(n for k, n in enumerate(g.node) if k not in constants)

    def typed(name, t):  # the input that stands for a weight: its type and its dims
        return helper.make_tensor_value_info(name, t.data_type, list(t.dims))

    # an input that lists a big initializer keeps its declaration where it has a type (inference
    # takes it, as on the model), and is typed from the initializer where it has none
    lg.input.extend(typed(i.name, big[i.name]) if i.name in big and not (
        i.type.HasField("tensor_type") and i.type.tensor_type.elem_type) else i for i in g.input)
    listed = {i.name for i in g.input}
    lg.input.extend(typed(t.name, t) for t in big.values() if t.name not in listed)
    lg.input.extend(typed(g.node[k].output[0], t) for k, t in constants.items())
    lg.output.extend(g.output)
    lg.value_info.extend(g.value_info)
    lg.initializer.extend(t for t in g.initializer if t.name not in big)
    lg.sparse_initializer.extend(g.sparse_initializer)
    return light


def _data_bytes(t) -> int:
    """The bytes of a TensorProto's values held in the proto, from its dims and element type
    (reading ``raw_data`` copies it: 3 ms a read for ResNet-18's 45 MB; ``ByteSize``
    serialises it); 0 for values kept in an external file, or of a type numpy has no size for."""
    if t.data_location == 1:  # EXTERNAL: the proto holds a file reference, not the values
        return 0
    if t.data_type not in _ITEMSIZE:
        from onnx import helper

        try:
            _ITEMSIZE[t.data_type] = helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
        except (KeyError, TypeError, ValueError):
            _ITEMSIZE[t.data_type] = 0
    return math.prod(int(d) for d in t.dims) * _ITEMSIZE[t.data_type]


_ITEMSIZE: dict = {}  # ONNX element type -> bytes of a numpy element (0: none)


__all__ = ["ANY_DECLARED_ABOVE", "FLOAT_DECLARED_ABOVE", "LIGHT_ABOVE", "shape_inference_model"]
