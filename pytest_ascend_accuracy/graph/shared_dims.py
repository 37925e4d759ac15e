"""What to add to an error of a run that failed at the inputs' shapes: those shapes, and the
named dimensions two inputs share that they give two sizes.

ONNX names a dynamic dimension (``dim_param``); one name on several inputs (``'T'`` of ``a``
and ``b``) is one size, as TensorRT checks at run time. onnxruntime does not check it: the run
fails at the first op that combines them ('Incompatible dimensions'), naming neither the inputs
nor the dimension, and a Reshape that cannot take a width names no width.
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Sequence, Tuple

from .onnx_graph import graph_inputs, load_model


def shapes_text(shapes: Mapping[str, Sequence[int]]) -> str:
    """'a: [1, 5, 8], b: [1, 6, 8]'."""
    return ", ".join(f"{name}: [{', '.join(str(int(d)) for d in dims)}]"
                     for name, dims in shapes.items())


def conflicts(model, shapes: Mapping[str, Sequence[int]]) -> List[str]:
    """For each dimension name of ``model``'s inputs that ``shapes`` give several sizes:
    "'T' is one size in the model (dimension 1 of 'a' and dimension 1 of 'b'), given 5 and 6"."""
    uses: Dict[str, List[Tuple[str, int, int]]] = {}  # name -> (input, dimension, size)
    for vi in graph_inputs(model):
        if vi.name not in shapes or not vi.type.HasField("tensor_type"):
            continue
        given = list(shapes[vi.name])
        for k, dim in enumerate(vi.type.tensor_type.shape.dim):
            if dim.dim_param and k < len(given):
                uses.setdefault(dim.dim_param, []).append((vi.name, k, int(given[k])))
    out = []
    for param, seen in uses.items():
        sizes = sorted({size for _, _, size in seen})
        if len(sizes) > 1:
            where = " and ".join(f"dimension {k} of {name!r}" for name, k, _ in seen)
            out.append(f"{param!r} is one size in the model ({where}), given "
                       + " and ".join(str(s) for s in sizes))
    return out


def failure_context(model, shapes: Mapping[str, Sequence[int]]) -> str:
    """' (at input shapes a: [1, 5, 8], b: [1, 6, 8]; 'T' is one size ...)', or '' where the
    model cannot be read again or was given no shapes."""
    if not shapes:
        return ""
    try:
        proto = load_model(model, weights=False)
    except Exception:  # the error being reported is the one to show
        return f" (at input shapes {shapes_text(shapes)})"
    said = conflicts(proto, shapes)
    return f" (at input shapes {shapes_text(shapes)}" + "".join(f"; {c}" for c in said) + ")"
