"""What the diagnosis says where the first failing op is one the ONNX model itself computes in
float16 (a ``model.half()`` export, a Cast to float16 before it: ``report.float16_model.
in_float16``). High precision and keep_dtype leave a float16 op float16 (ATC --precision_mode;
the emulator since ``backends.emulator.float16_model``), and buffer reuse and fusion off change
no op's precision, so no mode the flow tries can fix such an op's own overflow: an attention
export whose scores overflow float16 walked them all and ended "no conversion mode restores
accuracy ... check the operator implementations against the reference", blaming the device for
the model's own float16. The verdict says so instead, with the next step the failure's hint
gives (export in float32, check that export), spelled for the caller (``budget_option`` tells
the plugin's from the command's)."""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Optional, Sequence

from ..compare.result import Verdict
from ..report.float16_model import FLOAT16_MODEL_ADVICE, FLOAT16_MODEL_REASON, in_float16
from ..report.printable import printable
from .result import PLUGIN_BUDGET_OPTION
from .verdict_view import _names


def float16_first(verdict: Verdict, model) -> Optional[str]:
    """The label of ``verdict``'s first failing op where the ONNX ``model`` (the one the golden
    ran) computes it in float16, else None."""
    first = verdict.first
    if first is None or not in_float16(first.row, model):
        return None
    return printable(first.row.label)


def check_export(budget_option: str, model) -> str:
    """How the caller checks the float32 export: the plugin's test pointed at it and run with
    ``--accuracy-diagnose`` again, or the command (or ``diagnose()``) run on it."""
    if budget_option == PLUGIN_BUDGET_OPTION:
        return ("point the test's ascend_model and golden_dump calls at that export and rerun it "
                "with --accuracy-diagnose")
    shown = (printable(os.fspath(model)) if isinstance(model, (str, os.PathLike))
             else "the model")
    return (f"rerun this ascend-accuracy diagnose command with that export in place of {shown} "
            "(diagnose(export, ...) in Python)")


def export_step(label: str, budget_option: str, model) -> str:
    """``next step: export the model in float32 ...; `` and how the caller checks that export."""
    return (f"next step: {FLOAT16_MODEL_ADVICE.format(label=label)}; "
            f"{check_export(budget_option, model)}")


def no_mode_verdict(flow, verdict: Verdict, failing: Sequence[str],
                    tried: Sequence[str]) -> Optional[str]:
    """The verdict of ``flow`` (``flow._Flow``) where no mode tried passes and the first
    failing op of ``verdict`` (the run under the flow's own mode, ``failing`` its failing ops)
    is one the model computes in float16: the modes ``tried``, that none changes a float16
    op's precision, and the next step; None where that op is not computed in float16 (the
    flow's own words then: check the operator implementations)."""
    model = flow.run.model
    label = float16_first(verdict, model)
    if label is None:
        return None
    return (f"no conversion mode restores accuracy, and none can: under {flow.base.name} the "
            f"model differs from the golden network from op {label} on ({len(failing)} op(s): "
            f"{_names(failing)}), and " + FLOAT16_MODEL_REASON.format(label=label)
            + f"; buffer reuse and fusion off change no op's precision either: no mode tried "
              f"passes ({', '.join(tried) or 'none'}; the diagnosis's steps: list says where "
              f"each fails); {export_step(label, flow.budget_option, model)}")


def stopped_note(flow) -> str:
    """``; but the ONNX model itself computes ...: a larger budget tries more modes, ...; next
    step: ...``, appended to the verdict of a ``flow`` the budget stopped, where the first failing
    op under its own mode is one the model computes in float16 (a larger budget only tries
    more modes, which cannot change it), else ""."""
    first = flow.run.memo.get(replace(flow.base, label=None))
    label = None if first is None else float16_first(first.verdict, flow.run.model)
    if label is None:
        return ""
    return (f"; but {FLOAT16_MODEL_REASON.format(label=label)}: a larger budget tries more "
            f"modes, none of which changes that; "
            f"{export_step(label, flow.budget_option, flow.run.model)}")
