"""Model inputs of a type onnxruntime cannot be fed from numpy (bfloat16, float8, int4): refused
where the inputs are checked (``onnx_graph.check_inputs``), naming the input and what to do,
instead of onnxruntime's "Unable to convert type dtype('V2')" from the middle of a run.
"""
from __future__ import annotations

from ..errors import ConfigError


#: ONNX element types onnxruntime takes no numpy array of: its Python binding maps numpy's own
#: dtypes, and ml_dtypes' (bfloat16, float8, int4) are not among them; (name, the type to
#: export the input as instead)
_NOT_FEEDABLE = {16: ("bfloat16", "float32"), 17: ("float8e4m3fn", "float32"),
                 18: ("float8e4m3fnuz", "float32"), 19: ("float8e5m2", "float32"),
                 20: ("float8e5m2fnuz", "float32"), 21: ("uint4", "uint8"), 22: ("int4", "int8"),
                 23: ("float4e2m1", "float32")}
#: how to run a float32 export in bfloat16 on the device (an ATC --precision_mode)
BF16_MODE = "allow_fp32_to_bf16"


def check_feedable(vi, where: str) -> None:
    """A ``ConfigError`` for a model input of a type onnxruntime cannot be fed from numpy
    (``_NOT_FEEDABLE``), saying what to do: both the golden run and the emulator feed
    onnxruntime, which said "Unable to convert type dtype('V2') into TensorProto element type"
    from the middle of a run. (A Cast to bfloat16 behind a float32 input would not do: CPU
    onnxruntime computes almost no operator in bfloat16, Celu, Add, Relu, MatMul among them.)"""
    elem = vi.type.tensor_type.elem_type if vi.type.HasField("tensor_type") else 0
    if elem not in _NOT_FEEDABLE:
        return
    kind, instead = _NOT_FEEDABLE[elem]
    text = (f"model input {vi.name!r} is {kind}: onnxruntime, which runs the golden model and "
            f"the emulator, takes no {kind} array as an input (and computes few operators in "
            f"{kind} on the CPU); export the model "
            + (f"in {instead}" if instead == "float32" else f"with {instead} inputs")
            + f" and pass {instead} arrays")
    if kind == "bfloat16":
        text += (f" (the golden runs in float32 anyway); to have the device compute in bfloat16, "
                 f"convert that export with modes=[Mode(precision_mode={BF16_MODE!r})] "
                 f"(from pytest_ascend_accuracy import Mode; YAML: modes: "
                 f"[{{precision_mode: {BF16_MODE}}}])")
    raise ConfigError(where, text)
