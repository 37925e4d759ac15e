"""Model inputs of a type onnxruntime cannot be fed from numpy (bfloat16, float8, int4) or cannot
load at all (complex): refused where the inputs are checked (``onnx_graph.check_inputs``), naming
the input and what to do, instead of onnxruntime's "Unable to convert type dtype('V2')" from the
middle of a run. A string input, which onnxruntime takes, is refused where it is read from a
``.npy`` file (``from_file``): no such file feeds it.
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
#: complex element types: onnxruntime loads no model with such an input (a review: the advice
#: "save it as complex64", pasted, failed "MLDataType for: tensor(complex64) is not currently
#: registered or supported"), and CANN documents no complex input type for an ONNX model
#: (float32, float16 through --input_fp16_nodes, uint8 through AIPP); (name, its parts' type)
_COMPLEX = {14: ("complex64", "float32"), 15: ("complex128", "float64")}
STRING = 8  # onnx.TensorProto.STRING
#: how to run a float32 export in bfloat16 on the device (an ATC --precision_mode)
BF16_MODE = "allow_fp32_to_bf16"


def check_feedable(vi, where: str, from_file: bool = False, generated: bool = False) -> None:
    """A ``ConfigError`` for a model input of a type onnxruntime cannot be fed from numpy
    (``_NOT_FEEDABLE``) or cannot load (``_COMPLEX``), saying what to do: both the golden run and
    the emulator feed onnxruntime, which said "Unable to convert type dtype('V2') into
    TensorProto element type" from the middle of a run. (A Cast to bfloat16 behind a float32
    input would not do: CPU onnxruntime computes almost no operator in bfloat16, Celu, Add,
    Relu, MatMul among them.) ``from_file``: the input is to be read from a ``.npy`` file,
    which feeds no string input either; ``generated``: its values are to be drawn from a seed,
    which makes numbers, no strings (a YAML entry of ``{seed: N}`` said only "cannot make random
    inputs of dtype object", once it ran)."""
    elem = vi.type.tensor_type.elem_type if vi.type.HasField("tensor_type") else 0
    if elem in _COMPLEX:
        kind, part = _COMPLEX[elem]
        raise ConfigError(where, (
            f"model input {vi.name!r} is {kind}: onnxruntime, which runs the golden model and the "
            f"emulator, loads no model with a {kind} input, and CANN documents no complex input "
            f"type for an ONNX model; export the model with the real and imaginary parts as "
            f"{part} inputs (two inputs, or one with a last dimension of 2) and pass {part} "
            f"arrays"))
    if elem == STRING and (from_file or generated):  # (a review: "save it as object", pasted,
        # was refused)
        why = ("a string input cannot be fed from a .npy file (an input file holds numbers or "
               "bools; numpy saves strings as Python objects, read only with pickling, off here, "
               "or as unicode text)" if from_file else
               "a seed draws random numbers, no strings, and no .npy file feeds a string input "
               "either")
        raise ConfigError(where, (
            f"model input {vi.name!r} is string: {why}, and an Ascend check holds numeric "
            f"tensors only (ATC converts no string operator); encode the strings to integer ids "
            f"before the model and export it with an int64 input in their place"))
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
