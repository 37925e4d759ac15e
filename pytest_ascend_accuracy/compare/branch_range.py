"""The golden values inside the branch of a failing ``If`` the device runs as one operator.

The golden decides such an ``If`` from its inputs and dumps the branch it takes (every op of
it, ``graph/prepare.py``'s ``kept_ifs``); the device dumps the ``If``'s outputs only, so its
row is compared and its branch's ops are counted ``inside If operators``. The float16-range
read (``fp16_range.failing_ops_past_fp16``) looked at the failing ``If``'s own operands, a
bool condition: silero_vad.onnx fed int16-scale audio reaches |1.04e6| at the STFT Conv inside
its ``If`` (an audit: 205 of its 210 golden ops are there), and the hint said "no float16
overflow seen" and offered fusion off for a run with nothing fused. ``read_branches`` reads the
golden tensors of the branch that ran (those the golden holds: the ops the run lists inside
that ``If``, ``meta["inside_ops"]``) with the same rules as a failing op's, and keeps the
findings apart from the failing ops' (``RangeFindings.in_branches``): keep_dtype refuses a
branch op's name (``graph/branch_entries.py``), so they name no op to keep, only where the
values leave the range. A failing ``If`` whose branch the golden does not hold, or that the
run does not say it runs, stays in ``failing_ifs`` and out of ``branches``: the texts then
say its branch was not looked at, never that its values stay within float16.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, Mapping, Optional, Tuple

from ..dump.layout import sanitize
from ..dump.model import DumpSet
from .fp16_range import RangeFindings, failing_ops_past_fp16, golden_inputs_past_fp16

#: how many failing Ifs have their branch read, and how many golden ops of each branch at most
#: (a detector's batched-NMS If holds 31; silero_vad.onnx's 205)
IF_LIMIT = 3
BRANCH_OP_LIMIT = 1024


def ops_ran_inside(golden: DumpSet, if_name: str,
                   inside: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """``{golden op: its name in the run}`` (in golden order) for the golden ops that ran
    inside ``if_name``: the nodes ``inside`` (``{node: the If running it}``, nested Ifs' nodes
    under the outermost) lists under it and the golden holds, looked up by name and by the
    sanitized spelling of the golden's files (the golden's ``If_0_then_branch__Inline_0___stft_
    Conv`` is the run's ``If_0_then_branch__Inline_0__/stft/Conv``, the name findings give)."""
    owners: Dict[str, Tuple[str, str]] = {}
    for node, owner in (inside or {}).items():
        owners.setdefault(str(node), (str(owner), str(node)))
        owners.setdefault(sanitize(str(node)), (str(owner), str(node)))
    out: Dict[str, str] = {}
    for op in golden.ops:
        owner, node = owners.get(op.name) or owners.get(sanitize(op.name)) or ("", "")
        if owner == if_name and op.name != if_name:
            out[op.name] = node
    return out


def read_branches(found: RangeFindings, golden: DumpSet,
                  inside: Optional[Mapping[str, str]], *, model=None,
                  op_types: Optional[Mapping[str, str]] = None) -> RangeFindings:
    """Read the golden tensors of the branch of each failing If of ``found``
    (``failing_ifs``, the first ``IF_LIMIT``) into ``found.in_branches``, the Ifs read into
    ``found.branches``; ``inside``: the run's ``meta["inside_ops"]`` (None: not known, nothing
    read). ``model`` and ``op_types`` as ``golden_inputs_past_fp16`` takes them. Returns
    ``found``."""
    read, findings = list(found.branches), list(found.in_branches)
    seen = {(f.op, f.slot) for f in findings}
    for if_name in found.failing_ifs[:IF_LIMIT]:
        spelled = ops_ran_inside(golden, if_name, inside)
        names = list(spelled)[:BRANCH_OP_LIMIT]
        if not names:
            continue
        more = golden_inputs_past_fp16(golden, names, limit=len(names), model=model,
                                       op_types=op_types)
        found.checked += more.checked
        read.append(if_name)
        more = [replace(f, op=spelled.get(f.op, f.op),
                        feeds=spelled.get(f.feeds, f.feeds)) for f in more]
        for f in more:
            if (f.op, f.slot) not in seen:
                seen.add((f.op, f.slot))
                findings.append(f)
    found.branches = tuple(dict.fromkeys(read))
    found.in_branches = tuple(findings)
    return found


def failing_ops_and_branches(golden: DumpSet, verdict, rows=(), *,
                             inside: Optional[Mapping[str, str]], model=None,
                             op_types: Optional[Mapping[str, str]] = None) -> RangeFindings:
    """``fp16_range.failing_ops_past_fp16`` with the branches of its failing Ifs read
    (``read_branches``; ``inside``: ``run_inside_ops`` of the failing run), what every
    failure's hint looks at."""
    found = failing_ops_past_fp16(golden, verdict, rows, model=model, op_types=op_types)
    return read_branches(found, golden, inside, model=model, op_types=op_types)


def run_inside_ops(actual=None, result=None) -> Optional[Mapping[str, str]]:
    """``meta["inside_ops"]`` of the failing run: the actual DumpSet's, else the compare's
    record of it (``result.meta["actual"]``); None where neither says."""
    for meta in (getattr(actual, "meta", None),
                 ((getattr(result, "meta", None) or {}).get("actual"))):
        if meta and meta.get("inside_ops"):
            return meta["inside_ops"]
    return None
