"""A failing op the failing mode keeps in float32 already: its error came in with the float16
values before it.

Audit 33 (PP-OCRv6 rec fed 0..255 pixels): a pasted 231-op keep list failed at ``Sigmoid.0``,
which it kept (``dtypes float32``); the next hint said "no float16 overflow seen" and offered a
fusion-off probe, as for any failure. Keeping the op again changes nothing: what fails is the
float16 values computed before it, which ``--accuracy-diagnose`` searches.
"""
from __future__ import annotations


def kept_already(verdict, mode) -> str:
    """``"; OP runs in float32 in this mode already: ..."`` where the first failing op's dump
    is float32 or wider and ``mode`` keeps it (its keep_dtype names it), else ``""``."""
    from .fp16_fix_ops import FLOAT32_UP

    first = verdict.first
    if first is None or mode is None or first.row.dtype not in FLOAT32_UP:
        return ""
    names = {first.row.op_name, first.row.golden_name, *first.row.original_names}
    if not names & set(getattr(mode, "keep_dtype", ()) or ()):
        return ""
    from ..core.ascend_optypes import is_cube

    if is_cube(first.row.op_type):  # (review RS: a kept Conv of a 310P takes float16 inputs)
        return (f"; {first.row.label}, a Cube op, outputs float32 in this mode already (its "
                f"keep_dtype names it), but computes from float16 inputs on a chip without "
                f"float32 Cube kernels (Atlas 300I/300V, training: --soc-version): its error "
                f"comes in with float16 values, its own inputs' or those computed before it, "
                f"which --accuracy-diagnose searches")
    return (f"; {first.row.label} runs in float32 in this mode already (its keep_dtype names "
            f"it): its error comes in with the float16 values computed before it, which "
            f"--accuracy-diagnose searches")


__all__ = ["kept_already"]
