"""A float16-range keep_dtype fix as the CLI's and the Python API's failure text give it
(``failure_text.default_hint``; the plugin's is ``hints.next_step``): the ops to keep, whether
high precision is offered beside them, how to check the fix, and, where it may still fail pasted
(``fp16_fix_ops.KeepNames.partial``), how to find one by running."""
from __future__ import annotations

from ..compare.result import Verdict
from .printable import printable

#: what the CLI's ``ascend-accuracy diagnose --mode ...`` check of a fix means by its exit status:
#: 0 where the mode passes, and 0 too where it failed and the diagnosis went on to restore
#: accuracy with more ops kept (a ConvNeXt's 8-op fix, "passes with exit status 0", exited 0
#: with RESTORED and 3 more MatMuls kept: T1)
CLI_EXIT_NOTE = (" passes with exit status 0 (its first line says PASSES where this mode passes "
                 "as given, and RESTORED, also with exit status 0, where it passed only with "
                 "more ops kept, which its fix names)")


def keep_dtype_text(verdict: Verdict, names, reason: str, result, dumped, *,
                    cli: bool) -> str:
    """The next step of a failure whose float16-range fix keeps ``names`` (``reason``: why, from
    ``fp16_fix_ops.keep_dtype_names``), for the CLI (``cli``: ATC's --keep_dtype and the
    ``diagnose`` command to check it, with ``dumped``, the dump's own mode) or the API."""
    from .cli_commands import cli_diagnose, cli_mode, not_carried
    from .fp16_fix_ops import API_DIAGNOSE

    hp, blocker = high_precision_offered(verdict, names, result)
    if cli:
        from ..core.modes import HIGH_PRECISION, keep_dtype

        return (f"{reason}: keep these ops in float32 (ATC --keep_dtype=FILE, one op name a "
                f"line){' or convert in high precision' if hp else ''}; check it on the ONNX "
                f"model the dump ran: {cli_diagnose(verdict, keep_dtype(names), result)}"
                + (f" (or{cli_mode(HIGH_PRECISION, dumped)})" if hp else f" ({blocker})")
                + CLI_EXIT_NOTE + not_carried(result))
    shown = ", ".join(repr(printable(n)) for n in names[:5])
    more = ", ..." if len(names) > 5 else ""
    # modes, as the library takes them (no function has a keep_dtype= argument): a backend's
    # convert(model, mode), diagnose(mode=), ascend_model, modes=[...]
    kept = f"keep_dtype([{shown}{more}])"
    where = "(from pytest_ascend_accuracy import HIGH_PRECISION, keep_dtype)"
    still = f"; where it still fails, {API_DIAGNOSE}" if getattr(names, "partial", False) else ""
    if not hp:
        return (f"{reason}: keep these ops in float32, converting in mode {kept} "
                f"({blocker}) {where}{still}")
    return (f"{reason}: convert in mode HIGH_PRECISION, or keep these ops in float32 in mode "
            f"{kept} {where}{still}")


def high_precision_offered(verdict: Verdict, names, result) -> tuple:
    """(whether the float16-range fix keeping ``names`` offers high precision too, why not)."""
    from .failure_kinds import high_precision_blocker
    from .fp16_fix_ops import high_precision_may_fix

    if not high_precision_may_fix(verdict, names):
        return False, "high precision still feeds Cube ops float16"
    blocker = high_precision_blocker(verdict, names, result.rows if result is not None else ())
    return not blocker, blocker
