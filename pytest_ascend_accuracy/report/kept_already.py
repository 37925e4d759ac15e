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
    return (f"; {first.row.label} runs in float32 in this mode already (its keep_dtype names "
            f"it): its error comes in with the float16 values computed before it, which "
            f"--accuracy-diagnose searches")


__all__ = ["kept_already"]
