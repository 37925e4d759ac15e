"""What the diagnosis says where high precision fails and keeping every op in float32 passes:
the op high precision failed at and why that need not be float16 at all. It said "(cube ops still
take float16 inputs)" whatever failed (PP-OCRv4 det at 96x96 in fusion_off: high precision
failed at p2o.Sigmoid.0, a vector op whose golden values all lie below float16's smallest
normal, judged in float32 without float16's allowance for them; a fix-files trial)."""
from __future__ import annotations

from ..compare.result import Verdict


def high_precision_fails(verdict: Verdict, branch=None, run=None) -> str:
    """``high precision does not pass (...)``: the first op it fails at and what that op is --
    a Cube op (high precision still feeds it float16), an If whose branches hold Cube ops
    (``branch``: ``branch_keep.BranchOps``; it said "not a Cube op" of an If running a MatMul),
    an op whose golden values all lie below float16's smallest normal, or neither; of neither,
    the Cube ops upstream of it by the graph's edges (``run``: the ``runner.Runner``, whose
    golden and model give them), which high precision still feeds float16 (T2: "it fails at op
    /rpn/TopK:output:1 (TopK), not a Cube op" read as "float16 is not the cause", while the
    backbone's and the RPN head's Convs computing the scores it ranks ran in float16)."""
    from ..compare.tiny_values import FP16_TINY
    from ..report.failure_kinds import on_cube

    first = verdict.first
    if first is None:
        problem = getattr(verdict, "problem", "") or "it fails"
        return f"high precision does not pass ({problem})"
    row = first.row
    kind = f" ({row.op_type})" if row.op_type else ""
    head = f"high precision does not pass (it fails at op {row.label}{kind}"
    if on_cube(row):
        return f"{head}, a Cube op: high precision still feeds Cube ops float16 inputs)"
    inner = [n for c, n in (branch.cube if branch else ()) if c == row.label]
    if inner:
        ran, which = _branch_ran(inner, run)
        return (f"{head}, whose {which} Cube ops ({', '.join(ran[:3])}"
                f"{', ...' if len(ran) > 3 else ''}{'' if which[0] == 't' else ', either one'}): "
                f"high precision still feeds Cube ops "
                f"float16 inputs)")
    m = row.metrics
    if (m is not None and 0 < m.max_abs_golden < FP16_TINY
            and "float" in (row.golden_dtype or "float")):
        return (f"{head}, whose golden values all lie below "
                f"float16's smallest normal (|{m.max_abs_golden:.3g}|): high precision outputs it "
                f"in float32, judged without float16's allowance for values that small)")
    cube = _cube_upstream(row, run)
    if cube:
        near = ", ".join(repr(n) for n in cube[-3:][::-1])
        return (f"{head}, not a Cube op, but computed from {len(cube)} Cube "
                f"op{'s' if len(cube) > 1 else ''} that high precision still feeds float16 "
                f"inputs ({'the nearest ' if len(cube) > 3 else ''}{near}"
                f"{', ...' if len(cube) > 3 else ''}))")
    return f"{head}, not a Cube op)"


def _branch_ran(inner, run) -> tuple:
    """``(ops, words)``: the Cube ops of ``inner`` (an If's, both branches in file order) in the
    branch the golden ran, which its dump holds (it inlines the branch its inputs decide), with
    ``"taken branch runs"``; all of them, ``"branches run"`` with "(either one)" after the ops,
    where the golden holds none.
    It named silero_vad.onnx's else_branch Convs, whose 8 kHz branch never ran (audit B)."""
    from ..dump.layout import sanitize

    golden = getattr(run, "golden", None)
    ran = [n for n in inner if golden is not None and (
        golden.get(n) is not None or golden.get(sanitize(n)) is not None)]
    return (ran, "taken branch runs") if ran else (list(inner), "branches run")


def _cube_upstream(row, run) -> tuple:
    """The Cube ops upstream of ``row``'s op in graph order (``report.upstream.feeding_ops``:
    by the edges of ``run``'s model or golden); () where none, or the edges are not known."""
    from ..core.ascend_optypes import is_cube
    from ..report.upstream import feeding_ops

    golden = getattr(run, "golden", None)
    if golden is None:
        return ()
    try:
        _, up = feeding_ops(row, golden, getattr(run, "model", None))
    except Exception:  # noqa: BLE001 -- the wording only: it says what it knows
        return ()
    return tuple(n for n, t in (up or {}).items() if is_cube(t))


def every_kept_label(base, n_ops: int, branch=None) -> str:
    """The label of the step-2 run with every op kept under ``base``: ``keep_dtype(all 3 ops)``,
    ``fusion_off+keep_dtype(all 3 ops)`` under fusion off (it read ``keep_dtype(all 3 ops)``
    of a fusion_off run); with ``branch`` (``branch_keep.BranchOps``) the ops inside If branches
    it keeps by type too: ``keep_dtype(all 872 ops, and the 30 ops inside If_1941's branches by
    9 OpType:: entries)`` (it read ``keep_dtype(all 872 ops)`` and kept none of them)."""
    from ..core.modes import DEFAULT

    from .branch_keep import every_label_tail
    from .verdict_view import _same

    every = f"keep_dtype(all {n_ops} ops{every_label_tail(branch) if branch else ''})"
    return every if _same(base, DEFAULT) else f"{base.name}+{every}"
