"""ONNX quantisation ops, which ATC does not convert: a warning at each conversion.

CANN's AMCT guide ("QAT Model Adaptation to CANN Format", atlasamct_16_0148 in the 8.2 and 8.5
documentation) says a model quantised with ONNX's own QuantizeLinear and DequantizeLinear cannot
be converted by ATC into an offline model: AMCT's ``convert_qat_model`` first replaces them with
CANN's AscendQuant/AscendDequant/AscendAntiQuant (the deploy model ATC converts). canndev's and
the 2025 ops repositories' ONNX plugins register parsers for those Ascend ops only, none for
QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearConv, QLinearMatMul,
ConvInteger or MatMulInteger (a quantisation trial searched both), nor for onnxruntime's
com.microsoft quantisation contrib ops, QDQ, QOperator and weight-only (of com.microsoft they
register MultiHeadAttention only; ``graph.op_domains``, whose ``QUANT_OP_TYPES`` lists them,
says where from). Ops inside If branches count too. The guide's convert_qat_model adapts
QuantizeLinear-DequantizeLinear pairs (around Conv, Gemm, ConvTranspose, MatMul and Add, the
8.5 guide's table), so a model of other quantisation ops (onnxruntime's QOperator format) is
told to be quantised in the QDQ format instead. The emulator runs them as onnxruntime defines
them, so a check of such a model passed as if an NPU would run it. It is not refused (goldens
of such models, weight-only int4 ones included, and dataset checks of integer outputs are used
as they are); a conversion warns instead, at the test's line, naming the ops and the way to
a model ATC converts: once per model in one warnings scope (``warnings.filters``' list, which
each ``catch_warnings`` block holds its own of: pytest's around each test and ``pytest.warns``
included), cache hits too. Python's own once-per-location rule is not enough: any
``catch_warnings`` block (the compare's worker start, ``compare/parallel.py``) clears it, and an
audit's ``ascend-accuracy diagnose`` of ddddocr's quantised ``common_old.onnx`` printed the
~1000-character warning 64 times, once per conversion.
"""
from __future__ import annotations

import warnings
from typing import List, Optional, Sequence

from ...core.caller_warning import warn_at_caller

from ...graph.op_domains import found_list, quant_nodes  # the fake ATC stops at them


#: the ops AMCT's convert_qat_model adapts (the guide's table: QuantizeLinear-DequantizeLinear
#: pairs); the others (QLinearConv, onnxruntime's QOperator contrib ops, ...) it does not
QDQ_OP_TYPES = frozenset({"QuantizeLinear", "DequantizeLinear"})


class AtcQuantWarning(UserWarning):
    """A model with ONNX quantisation ops, which ATC does not convert as they are."""


def quant_ops(graph) -> List[List[str]]:
    """``[name, op type]`` of the quantisation ops of ``graph`` (a model's, before any folding:
    a weight's DequantizeLinear is parsed before it could be folded; ``quant_nodes``), in
    order."""
    return [[name, op_type] for name, op_type, _ in quant_nodes(graph)]


def amct_route(op_types: Sequence[str], then: str = "") -> str:
    """How a model holding quantisation ops of ``op_types`` becomes one ATC converts, as CANN's
    AMCT guide has it (``then``: words after the route), and where some are not QDQ pairs, how
    to quantise it so that AMCT adapts it; the warning's and the diagnosis's words alike."""
    others = [t for t in dict.fromkeys(op_types) if t not in QDQ_OP_TYPES]
    return ("adapt it with amct_onnx.convert_qat_model(model_file, save_path), whose deploy "
            "model (AscendQuant/AscendDequant) ATC converts" + then
            + (f" (it adapts QuantizeLinear-DequantizeLinear pairs, not {', '.join(others)}: "
               f"quantise the float model in the QDQ format, onnxruntime.quantization."
               f"quantize_static with quant_format=QuantFormat.QDQ)" if others else ""))


def quant_warning(label: str, ops: Sequence[Sequence[str]]) -> str:
    shown = found_list([f"{name!r} ({op})" for name, op in ops], 6)
    # the text starts the same for every model: -W 'ignore:ONNX quantisation ops' (a literal
    # prefix on the command line) silences it on any version (an upgrade trial)
    return (f"ONNX quantisation ops no CANN ONNX parser converts, in model {label!r}: "
            f"{shown}. CANN's AMCT guide (QAT model adaptation to CANN format) says such a "
            f"model cannot be converted by ATC as it is: "
            + amct_route([op for _, op in ops], then=", and check that on an NPU")
            + "; the emulator computes these ops as it does any float op (their float "
              "inputs, scales and outputs rounded to float16 where the mode computes in "
              "float16), not as the deployed model computes, so neither a pass nor a failure "
              "here says what the deployed model "
              "does (and the golden is this graph run in float32 by onnxruntime unoptimised, "
              "not a CPU's int8 kernels)")


#: the warnings scope last warned in (its ``warnings.filters`` list, held so that its identity
#: is not reused) and the models warned of in it
_WARNED: list = [None, set()]


def _first_in_scope(key) -> bool:
    """Whether ``key`` was not warned of yet in the current warnings scope (module docstring)."""
    if _WARNED[0] is not warnings.filters:  # a new catch_warnings block: a test, pytest.warns
        _WARNED[0], _WARNED[1] = warnings.filters, set()
    if key in _WARNED[1]:
        return False
    _WARNED[1].add(key)
    return True


def warn_quant(label: str, ops: Optional[Sequence[Sequence[str]]]) -> None:
    """Warn (``AtcQuantWarning``) of ``ops`` (``quant_ops``, read back from a converted entry)
    of the model ``label``, once per model and ops in a warnings scope; nothing when there are
    none."""
    if ops and _first_in_scope((label, tuple(tuple(op) for op in ops))):
        warn_at_caller(AtcQuantWarning(quant_warning(label, ops)))  # at the test's line
