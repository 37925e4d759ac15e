"""JSON report: the saved CompareResult (re-judgeable with ``CompareResult.load``) plus the
verdict it was judged with and, for a test with a per-operator baseline, the baseline check's
outcome (``"baseline"``: passed, status, line, file, message) and, from the plugin, the run that
wrote it (``"run"``: id, started, written, nodeid, check, passed, first_failing_op;
``report.report_set.run_block``). Strict JSON: NaN is written as null, infinities as
"inf"/"-inf"."""
from __future__ import annotations

import json
import os
from typing import Dict, Mapping, Optional

from ..compare.metrics import encode_float
from ..compare.result import CompareResult, Verdict
from ..core.atomic_files import atomic_write_text
from .model_outputs import json_outputs


def verdict_dict(verdict: Verdict) -> Dict[str, object]:
    return {
        "passed": verdict.passed,
        "policy": verdict.policy.to_dict(),
        "judged": verdict.judged, "ignored": verdict.ignored, "skipped": verdict.skipped,
        "unmatched": verdict.unmatched,
        "passing_threshold": verdict.passing_threshold,
        "failures": [{"op_name": f.row.op_name, "slot": f.row.slot, "order": f.row.order,
                      "metric": f.threshold.metric, "threshold": f.threshold.value,
                      "value": encode_float(f.value), "would_pass": f.would_pass,
                      "reason": f.reason} for f in verdict.failures],
    }


def json_text(result: CompareResult, verdict: Optional[Verdict] = None,
              baseline: Optional[Mapping[str, object]] = None,
              run: Optional[Mapping[str, object]] = None) -> str:
    data = result.to_dict()
    if run is not None:  # first: a reader (``report.run_index``) finds it at the top
        data = {"run": dict(run), **data}
    if verdict is not None:
        data["verdict"] = verdict_dict(verdict)
    data["model_outputs"] = json_outputs(result, verdict)  # graph outputs by name (audit 35 F6)
    if baseline is not None:  # the threshold verdict may pass while the baseline failed
        data["baseline"] = dict(baseline)
    return json.dumps(data, indent=1, allow_nan=False)


def write_json(result: CompareResult, path, verdict: Optional[Verdict] = None,
               baseline: Optional[Mapping[str, object]] = None,
               run: Optional[Mapping[str, object]] = None) -> str:
    """Write the result (and verdict, the baseline check's outcome, the run) as JSON
    atomically; ``CompareResult.load`` reads it back."""
    return os.fspath(atomic_write_text(path, json_text(result, verdict, baseline, run),
                                       what="JSON report"))
