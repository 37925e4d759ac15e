"""The model's output tensors beside the ops that make them, in the HTML and JSON reports of any
check, passing too.

A failure's ``model outputs:`` line (``outputs_note``) maps each output row to the ONNX output it
makes (IMG.LY's ISNet: ``graph_output_cast1 (output 1890: ...)``, its float16 converter's Casts
making the 12 outputs), but a passing check's ``report.html`` never named ``1890`` or ``output``
(audit 35 F6): a reader could not find "how did the matte do" there. The golden records which
op output each graph output is (``meta["golden"]["output_tensors"]``); the page heads with the
outputs and their figures, each linking to its table row, whose golden cell names the output,
and ``compare.json`` lists them under ``"model_outputs"``."""
from __future__ import annotations

from typing import Dict, List, Tuple

from ..compare.result import CompareResult
from .figures import judged_cosine, six_places


def output_names(result: CompareResult) -> Dict[Tuple[str, str], str]:
    """``{(golden op, "output:k"): graph output name}`` as the golden records them, {} where it
    does not (a device dump, a golden read from files)."""
    meta = result.meta.get("golden") if isinstance(result.meta, dict) else None
    tensors = (meta or {}).get("output_tensors") or {}
    return {(str(v[0]), f"output:{v[1]}"): str(t) for t, v in tensors.items()
            if isinstance(v, (list, tuple)) and len(v) == 2}


def output_rows(result: CompareResult, verdict=None) -> List[dict]:
    """Each compared row making a graph output, in graph order: ``{"output": name, "op": the
    row's label, "slot", "order", "row": its index in result.rows, "cosine", "rel_l2",
    "max_abs"}`` (figures None where not computed), and with a ``verdict``, ``"passed"`` and
    the failure's ``"reason"`` (None where it passes; ``passed`` None and ``"ignored"`` where
    the check ignores it): a one-element output failing by its
    relative error read "cosine 1.000000" on the page with nothing saying it failed (audit 36
    B F5)."""
    names = output_names(result)
    failing = {id(f.row): f for f in verdict.failures} if verdict is not None else {}
    out = []
    for i, r in enumerate(result.rows):
        name = names.get((r.golden_name, r.golden_slot))
        if name is None:
            continue
        m = r.metrics
        out.append({"output": name, "op": r.label, "slot": r.slot, "order": r.order, "row": i,
                    "cosine": None if m is None else _finite(judged_cosine(m)),
                    "rel_l2": None if m is None else _finite(m.value("rel_l2")),
                    "max_abs": None if m is None else _finite(m.max_abs)})
        if verdict is not None and verdict.policy.is_ignored(r.names):  # not judged (review RM)
            out[-1].update(passed=None, reason="ignored")
        elif verdict is not None:
            f = failing.get(id(r))
            out[-1].update(passed=f is None, reason=None if f is None else f.reason)
    return out


def _finite(v):
    import math

    return float(v) if v is not None and math.isfinite(v) else None


def outputs_html(result: CompareResult, escape, verdict=None) -> str:
    """The page's ``model outputs:`` line (``escape``: its HTML escaping), each output naming
    its op and figures and linking to its table row, and with a ``verdict``, ``FAILS`` and the
    reason where it fails; "" where the golden records none."""
    items = []
    for o in output_rows(result, verdict):
        figures = "; ".join(f"{k} {six_places(o[k])}" for k in ("cosine", "rel_l2", "max_abs")
                            if o[k] is not None)
        fails = (f' <strong class="fail">FAILS</strong>: {escape(o["reason"])}'
                 if o.get("passed") is False else "")
        items.append(f'<a href="#r{o["row"]}">{escape(o["output"])}</a> (op '
                     f'{escape(o["op"])}{"; " + escape(figures) if figures else ""}){fails}')
    return f'<p id="model-outputs">model outputs: {", ".join(items)}</p>' if items else ""


def json_outputs(result: CompareResult, verdict=None) -> List[dict]:
    """``output_rows`` without the page's row index, for ``compare.json``."""
    return [{k: v for k, v in o.items() if k != "row"} for o in output_rows(result, verdict)]


__all__ = ["json_outputs", "output_names", "output_rows", "outputs_html"]
