"""Write an op's dump as FFTS+ manual-split slices, the structure real Atlas A2 dumps have
(docs/formats.md §1.1): one file per slice named ``{op}_lxslice{k}`` with the FFTS+ file-name
fields (task type 4), each header carrying the ``_sgt_json_info`` attribute with the cut lists.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional, Sequence

import numpy as np

from ..dump.ascend_bin import DumpTensor, write_dump_file
from ..dump.ffts_slices import SGT_ATTR
from ..dump.layout import build_file_name

#: FFTS+ task type in dump file names (msaccucmp ``const_manager.py TASK_TYPE_MAP``)
FFTSPLUS_TASK_TYPE = 4


def cut_list(rank: int, axis: Optional[int], parts: int) -> List[int]:
    """One ``outputCutList``/``inputCutList`` entry: ``parts`` at the cut dim, 1 elsewhere."""
    return [parts if k == axis else 1 for k in range(rank)]


def sgt_json(parts: int, output_cuts: Sequence[Sequence[int]],
             input_cuts: Sequence[Sequence[int]] = (), *, thread_mode: bool = False) -> str:
    """The ``_sgt_json_info`` value of a manual split into ``parts`` slices (the keys msaccucmp
    reads, among the others GE writes)."""
    return json.dumps({"thread_scopeId": 1, "threadMode": thread_mode,
                       "slice_instance_num": parts, "parallel_window_size": 0,
                       "inputCutList": [list(c) for c in input_cuts],
                       "outputCutList": [list(c) for c in output_cuts]})


def write_slices(directory, op_type: str, op_name: str,
                 outputs: Sequence[Sequence[np.ndarray]], *, attr: Optional[str],
                 inputs: Sequence[Sequence[np.ndarray]] = (), output_formats=None,
                 output_origins=None, task_id: int = 1, timestamp_us: int = 1_700_000_000_000_000,
                 numbers: Optional[Sequence[int]] = None) -> List[Path]:
    """Write slice ``k`` of ``op_name`` for each ``outputs[k]`` (its output arrays; ``inputs[k]``
    its inputs); ``attr``: the ``_sgt_json_info`` value (None: no attribute). ``numbers``: the
    slice numbers written (default 0..n-1). Returns the files written, in slice order."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for k, outs in enumerate(outputs):
        number = numbers[k] if numbers is not None else k
        name = f"{op_name}_lxslice{number}"
        ts = timestamp_us + k
        fmts = output_formats or ["ND"] * len(outs)
        origins = output_origins or [None] * len(outs)
        file = build_file_name(op_type, name, task_id, 0, ts, task_type=FFTSPLUS_TASK_TYPE,
                               context_id=k, thread_id=0, device_id=0)
        ins = inputs[k] if k < len(inputs) else ()
        paths.append(write_dump_file(
            directory / file, name, [DumpTensor(np.asarray(a)) for a in ins],
            [DumpTensor(np.asarray(a), fmts[i], origin=origins[i]) for i, a in enumerate(outs)],
            dump_time=ts, attrs=[(SGT_ATTR, attr)] if attr is not None else ()))
    return paths


__all__ = ["FFTSPLUS_TASK_TYPE", "cut_list", "sgt_json", "write_slices"]
