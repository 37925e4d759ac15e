"""Values an Ascend accuracy check cannot hold: string tensors, sequences (maps) and optionals.

ATC converts graphs of tensors of numeric types. CANN's list of supported ONNX operators (ATC's
ONNX parser, CANN 5.0.4 and 8.0.0) has no sequence operator (``SequenceConstruct``,
``SplitToSequence``, ...) and no string operator (``StringConcat``, ``RegexFullMatch``,
``LabelEncoder``, ...), and msaccucmp compares numeric tensors only (its numpy map of the dump's
``DataType`` has no ``DT_STRING``, docs/formats.md). So such a model is refused at conversion,
naming the operators and the values, instead of failing later with a dump writer's traceback
(a string array) or a comparison that finds nothing to compare (a sequence dumped stacked into
a tensor the golden, which skips sequences, never has). Optionals are told apart from
sequences (the onnx 1.17 node-test sweep: ``OptionalGetElement`` of a plain tensor was refused
as "sequence values" with advice about sequences, though the model had none).
"""
from __future__ import annotations

from typing import Dict, List, Tuple

STRING = 8  # onnx.TensorProto.STRING
#: operators whose inputs or outputs are sequences, whatever type inference can tell
SEQUENCE_OPS = frozenset({"SequenceConstruct", "SequenceEmpty", "SequenceInsert", "SequenceErase",
                          "SequenceAt", "SequenceLength", "SplitToSequence", "ConcatFromSequence",
                          "SequenceMap"})
#: operators whose inputs or outputs are optionals (or that unwrap a tensor as one)
OPTIONAL_OPS = frozenset({"Optional", "OptionalGetElement", "OptionalHasElement"})
_OPS = {"sequence": SEQUENCE_OPS, "optional": OPTIONAL_OPS}
_KINDS = ("string", "sequence", "optional")


def _kind(type_proto) -> str:
    """"string", "sequence" (sequence, map), "optional" or "" for a numeric tensor / unknown."""
    which = type_proto.WhichOneof("value")
    if which in ("sequence_type", "map_type"):
        return "sequence"
    if which == "optional_type":
        return "optional"
    if which == "tensor_type" and type_proto.tensor_type.elem_type == STRING:
        return "string"
    if which == "sparse_tensor_type" and type_proto.sparse_tensor_type.elem_type == STRING:
        return "string"
    return ""


def value_kinds(model) -> Dict[str, str]:
    """``{value name: "string" | "sequence" | "optional"}`` for the main graph's values that are
    not numeric tensors (declared, or inferred by onnx's shape inference, best effort)."""
    import onnx

    from .shape_inference_copy import shape_inference_model

    try:  # (a model of big weights is inferred on a light copy, as tensor_info does)
        inferred = onnx.shape_inference.infer_shapes(shape_inference_model(model),
                                                     strict_mode=False)
    except Exception:  # inference is best effort: what the graph declares still counts
        inferred = model
    g = inferred.graph
    kinds: Dict[str, str] = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        kind = _kind(vi.type)
        if kind:
            kinds[vi.name] = kind
    for t in g.initializer:
        if t.data_type == STRING:
            kinds[t.name] = "string"
    for n in g.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == STRING:
                    kinds[n.output[0]] = "string"
                elif a.type == onnx.AttributeProto.STRINGS or a.name == "value_strings":
                    kinds[n.output[0]] = "string"
    return kinds


def unsupported_values(model) -> Dict[str, List[Tuple[str, str, Tuple[str, ...]]]]:
    """``{"string" | "sequence" | "optional": [(node name, op type, (its values of that kind,
    ...)), ...]}``, in graph order; empty when every value is a numeric tensor."""
    kinds = value_kinds(model)
    found: Dict[str, List[Tuple[str, str, Tuple[str, ...]]]] = {}
    for n in model.graph.node:
        names = [t for t in list(n.input) + list(n.output) if t]
        for kind in _KINDS:
            values = tuple(dict.fromkeys(t for t in names if kinds.get(t) == kind))
            if values or (n.op_type in _OPS.get(kind, ()) and n.domain in ("", "ai.onnx")):
                found.setdefault(kind, []).append((n.name, n.op_type, values))
    return found


_WHY = {
    "string": ("string tensors",
               "ATC converts no string operator (none is in CANN's supported ONNX operators) "
               "and an Ascend dump holds numeric tensors only (msaccucmp reads no DT_STRING)"),
    "sequence": ("sequence values",
                 "ATC has no sequence tensors (no sequence operator is in CANN's supported "
                 "ONNX operators) and an Ascend dump holds tensors only"),
    "optional": ("optional values",
                 "ATC has no optional values (no Optional operator is in CANN's supported ONNX "
                 "operators) and an Ascend dump holds tensors only"),
}
_FIX = {
    "string": "check the numeric part of the model: export it without the string operators "
              "(encode strings to integer ids before the model)",
    "sequence": "export the model with tensors in place of the sequences (Split, Concat, Gather "
                "of a tensor; torch.onnx exports a list as a sequence, a stacked tensor as one)",
    "optional": "export the model without the Optional operators (OptionalGetElement of a "
                "tensor is that tensor, OptionalHasElement of one is true: an Identity and a "
                "constant in their place)",
}


def refusal_text(label: str, model, kinds=_KINDS) -> str:
    """Why ``model`` (shown as ``label``) cannot be checked on Ascend, naming its operators and
    values of ``kinds``; "" when it has none."""
    found = unsupported_values(model)
    parts = []
    for kind in kinds:
        rows = found.get(kind)
        if not rows:
            continue
        what, why = _WHY[kind]
        shown = "; ".join(f"{name!r} ({op}" + (f": {', '.join(values)}" if values else "") + ")"
                          for name, op, values in rows[:8])
        more = f"; and {len(rows) - 8} more" if len(rows) > 8 else ""
        verb = "reads or writes" if len(rows) == 1 else "read or write"
        parts.append(f"model {label!r} has {what}: {len(rows)} operator"
                     f"{'s' if len(rows) != 1 else ''} {verb} them: {shown}{more}. "
                     f"{why}, so it cannot be converted or compared; {_FIX[kind]}")
    return "\n".join(parts)
