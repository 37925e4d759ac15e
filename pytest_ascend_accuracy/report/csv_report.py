"""CSV report in msaccucmp's column names and order (docs/formats.md §6.3), ONNX-golden flavour.

Columns, as msit leaves them (sources: msaccucmp ``cmp_utils/constant/const_manager.py``
``VECTOR_COMPARE_HEADER`` and ``vector_cmp/fusion_manager/compare_result.py``
``get_result_title``, which puts ``OverFlow`` right after ``Shape`` when ``-overflow_detection``
is on, as msit's ``-advisor`` run turns it on; msit ``msquickcmp/cmp_process.py`` appends
``IsNpuOps,IsOutputNode,IsPrecisionError``): ``Index,OpType,NPUDump,DataType,Address,
GroundTruth,DataType,TensorIndex,Shape,OverFlow,`` the ten metric columns,
``CompareFailReason,IsNpuOps,IsOutputNode,IsPrecisionError``. Against an ``.npy`` golden
directory msaccucmp drops the golden ``Address`` column. Numbers are written ``'{:.6f}'``,
missing values ``NaN``. ``DataType`` appears twice (actual, then golden), as in the original;
``csv.DictReader`` keeps the golden one.

Conventions: ``Index`` is the op's execution order (om-json order when known); ``Address``
is ``NaN``: msaccucmp writes the dump tensor's device address in decimal where it is not 0
(``cmp_utils/utils.py`` ``get_address_from_tensor``; the nano format and newer dump headers
hold one), but our dump readers do not keep it. ``GroundTruth`` is one value per op, on its
input and output rows alike (msaccucmp ``compare_result.py`` ``_make_ops_without_map``): ``*``
for an NPU-only op (also one whose outputs were compared with its producer's tensor), else the
original ONNX op names joined by ``,``, else the golden op its output was compared with.
``IsNpuOps`` is msit's ``GroundTruth == "*"`` (``cmp_process.py``), so an input row of a
framework op, compared with the output of the op that feeds it, is not an NPU op.
``IsOutputNode`` is msit's ``_is_output_node``: ``YES`` where the whole GroundTruth cell is the
name of a golden ONNX node that produces a graph output (the golden's ``meta["output_nodes"]``,
as msit's ``_get_model_output_node_name_list`` reads the ONNX model); a fused op's
``A,B`` never is one, an NPU-only op's ``*`` neither. msit never reads the om json's
``attr_model_out_nodes_name`` for it, and writes ``NO`` everywhere without an ONNX golden (an
``.om`` golden), as we do without a golden output list (an ``.npy`` directory). ``OverFlow``
is msaccucmp's rule on the actual tensor (fp16 and max|v| >= 65504 or an infinity: ``YES``;
fp16: ``NO``; other dtypes or no values: ``NaN``); ``IsPrecisionError`` is the
verdict of the threshold the comparison was judged with when one is given (by the cosine it
judged), else msit's fixed rule on the CSV's cosine, as msit reads it (for the float16 tensors
whose judged cosine differs, a cosine below 0.99 already means a relative Euclidean distance
above 0.05, ``‖x-y‖/‖y‖ >= sin θ``, so the judged one would not change the rule's answer).
``CosineSimilarity`` is msaccucmp's plain cosine even where the verdict judged a higher one (a
float16 tensor below its smallest normal, ``compare/tiny_values.py``): ``CompareFailReason``
then says so and gives the cosine judged. Where a float16 device holds its saturated value
against the golden's ±float32 max (the mask stand-in, ``compare/mask_stand_in.py``) the cosine,
as every figure, leaves those positions out and msaccucmp's takes them in:
``CompareFailReason`` says that too (``figures.csv_cosine_note``). The metric columns
msaccucmp leaves ``NaN`` are ``NaN`` here too: all but the cosine for a bool tensor (its
algorithms refuse bool data), all but the cosine, accumulated relative error and relative
Euclidean distance for a zero-size one (``_msaccucmp_columns``). The file is written atomically.
"""
from __future__ import annotations

import csv
import io
import math
import os
from typing import Iterable, List, Optional

from ..compare.metrics import METRIC_COLUMNS, format_metric
from ..compare.result import CompareResult, TensorCompare, Verdict, judge_row
from ..core.atomic_files import atomic_write_text
from ..core.fp16 import FP16_MAX  # msaccucmp ConstManager.OVERFLOW_MAX_VALUE
from .figures import csv_cosine_note

HEADER = (["Index", "OpType", "NPUDump", "DataType", "Address", "GroundTruth", "DataType",
           "TensorIndex", "Shape", "OverFlow"] + list(METRIC_COLUMNS.values())
          + ["CompareFailReason", "IsNpuOps", "IsOutputNode", "IsPrecisionError"])
#: op types msit never marks as a precision error
_MSIT_EXEMPT_TYPES = {"Data", "TransData", "PartitionCall"}


def msit_precision_error(row: TensorCompare) -> bool:
    """msit's rule: cos < 0.99 or RED > 0.05 or KL > 0.005 or RMSE > 1 or MeanRelErr > 1 (NaN
    cosine and some op types exempt); NaN/Inf on one side only is always an error here."""
    m = row.metrics
    if m is None or row.op_type in _MSIT_EXEMPT_TYPES or "npu_only" in row.flags:
        return False
    if m.mismatch:
        return True
    if math.isnan(m.cosine):
        return False
    return (m.cosine < 0.99 or m.rel_l2 > 0.05 or m.kl > 0.005 or m.rmse > 1.0
            or m.mean_rel > 1.0)


def overflow(row: TensorCompare) -> str:
    """msaccucmp's ``OverFlow`` value for the actual tensor of ``row`` (see module doc)."""
    m = row.metrics
    if m is None or row.dtype != "float16":
        return "NaN"
    big = m.max_abs_actual >= FP16_MAX if not math.isnan(m.max_abs_actual) else False
    return "YES" if big or m.posinf_actual or m.neginf_actual else "NO"


def _npu_ops(result: CompareResult) -> set:
    """The (order, op name) of the ops whose rows msit marks ``IsNpuOps``: GroundTruth ``*``,
    which msaccucmp writes per op (``compare_result.py`` ``_make_ops_without_map``: the op's
    original names joined, ``*`` when empty), for every tensor row of the op alike. An op is
    NPU-only when it was left unmatched as such, or an output of it was compared with its
    producer's golden; an input compared with its producer's output is not (every input is)."""
    return {(r.order, r.op_name) for r in result.rows
            if "npu_only" in r.flags or (r.match == "producer" and r.slot.startswith("output"))}


def _ground_truths(result: CompareResult, npu_ops: set) -> List[str]:
    """Each row's GroundTruth: ``*`` for an NPU-only op's rows, else the op's original names,
    else, for an output, the golden op it was compared with; an input row (whose golden is its
    producer's output) takes its op's, as msaccucmp writes one GroundTruth per op."""
    own: dict = {}
    for r in result.rows:
        if r.slot.startswith("output") and r.golden_name:
            own.setdefault((r.order, r.op_name), r.golden_name)
    truths = []
    for r in result.rows:
        key = (r.order, r.op_name)
        names = ",".join(r.original_names)
        if key in npu_ops:
            truths.append("*")
        elif names:
            truths.append(names)
        elif r.slot.startswith("output"):
            truths.append(r.golden_name or "NaN")
        else:
            truths.append(own.get(key) or (r.golden_name if r.match != "producer" else "")
                          or "NaN")
    return truths


def _output_nodes(result: CompareResult) -> set:
    """The golden graph's nodes that produce a graph output (msit
    ``_get_model_output_node_name_list``: the ONNX golden's outputs, never the om json's)."""
    meta = result.meta.get("golden") if isinstance(result.meta, dict) else None
    if not isinstance(meta, dict):
        return set()
    return {str(n) for n in meta.get("output_nodes", ()) or ()}


_ALL = {key: None for key in METRIC_COLUMNS}
#: msaccucmp's algorithms refuse bool data ("Algorithm MaxAbsoluteError does not support Boolean
#: types"): only the cosine column holds a number
_BOOL = {"cosine": None}
#: a zero-size tensor: msaccucmp's reductions fail ("zero-size array to reduction operation"),
#: leaving the cosine, the accumulated relative error and the relative Euclidean distance
_EMPTY = {"cosine": None, "acc_rel": None, "rel_l2": None, "std": "(nan;nan),(nan;nan)"}


def _msaccucmp_columns(row: TensorCompare) -> dict:
    """The metric columns msaccucmp fills for ``row``'s tensors ({key: None}: ours; {key:
    text}: that text); the others are ``NaN``. Our own figures for the rest stay in the JSON
    result and drive the verdict (bool values are compared exactly, CompareFailReason says)."""
    if row.metrics is not None and row.metrics.size == 0 and 0 in tuple(row.shape):
        return _EMPTY
    if "bool" in (row.dtype, row.golden_dtype):
        return _BOOL
    return _ALL


def _shape(shape) -> str:
    """msaccucmp's spelling: ``'[%s]' % ",".join(dims)``, no spaces (``compare_result.py``)."""
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def csv_rows(result: CompareResult, verdict: Optional[Verdict] = None) -> Iterable[List[str]]:
    outputs = _output_nodes(result)
    npu_ops = _npu_ops(result)
    truths = _ground_truths(result, npu_ops)
    for row, truth in zip(result.rows, truths):
        m = row.metrics
        npu_only = (row.order, row.op_name) in npu_ops
        if verdict is not None:
            status, _ = judge_row(row, verdict.policy)
            error = status == "failed"
        else:
            error = msit_precision_error(row)
        values = []
        shown = _msaccucmp_columns(row)
        for key in METRIC_COLUMNS:
            if m is None or key not in shown:
                values.append("NaN")
            elif shown[key] is not None:
                values.append(shown[key])
            elif key == "std":
                values.append(m.std)
            else:
                values.append(format_metric(getattr(m, key)))
        reasons = [row.reason] if row.reason else []
        if m is not None:
            reasons += list(m.notes) + [n for n in (csv_cosine_note(m),) if n]
        is_output = truth.strip() in outputs  # msit _is_output_node
        yield ([str(row.order), row.op_type or "NaN", row.op_name, row.dtype or "NaN", "NaN",
                truth, row.golden_dtype or "NaN", row.tensor_index,
                _shape(row.shape) if (row.shape or m is not None) else "NaN", overflow(row)]
               + values + ["; ".join(reasons), "YES" if npu_only else "NO",
                           "YES" if is_output else "NO", "YES" if error else "NO"])


def csv_text(result: CompareResult, verdict: Optional[Verdict] = None) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(HEADER)
    for r in csv_rows(result, verdict):
        w.writerow(r)
    return buf.getvalue()


def write_csv(result: CompareResult, path, verdict: Optional[Verdict] = None) -> str:
    """Write the msaccucmp-compatible CSV (atomically); returns the path."""
    return os.fspath(atomic_write_text(path, csv_text(result, verdict), what="CSV report",
                                       errors="backslashreplace"))
