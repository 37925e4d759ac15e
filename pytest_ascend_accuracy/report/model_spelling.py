"""The model's own spelling of op names that a golden dump gives sanitised: msit's golden naming
writes node ``p2o.BatchNormalization.1`` as file ``p2o_BatchNormalization_1``
(``dump.layout.sanitize``), while ATC's ``--keep_dtype`` and ``diagnose --mode`` take the
model's names. A compare of a device dump with such a golden knows both spellings (a row's dump
and original op names beside its golden name); advice naming the file's spelling was refused
pasted (a PP-OCRv4 trial: ``keep_dtype entry 'p2o_BatchNormalization_1' is not an op of model
...; closest: 'p2o.BatchNormalization.1'``)."""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, Iterable, Set

from ..compare.result import TensorCompare


def _spellings(row: TensorCompare) -> Set[str]:
    """The row's dump and original op names that sanitise to its golden name (not it)."""
    from ..dump.layout import sanitize

    golden = row.golden_name
    return {n for n in (row.op_name, *row.original_names)
            if n and golden and n != golden and sanitize(n) == golden}


def row_model_name(row: TensorCompare) -> str:
    """``row``'s golden op name as the model spells it where the golden sanitised it and the
    row names exactly one such op; else the golden name as it is."""
    found = _spellings(row)
    return found.pop() if len(found) == 1 else row.golden_name


def model_spellings(rows: Iterable[TensorCompare]) -> Dict[str, str]:
    """{golden op name: the model's spelling} over ``rows`` (a compare's rows), for golden names
    that are no op's own name and that exactly one name of the rows sanitises to."""
    rows = list(rows)
    real = {n for r in rows for n in (r.op_name, *r.original_names) if n}
    found: Dict[str, Set[str]] = {}
    for r in rows:
        if r.golden_name and r.golden_name not in real:
            found.setdefault(r.golden_name, set()).update(_spellings(r))
    return {golden: next(iter(names)) for golden, names in found.items() if len(names) == 1}


def in_model_spelling(findings, rows: Iterable[TensorCompare]):
    """``findings`` (``compare.fp16_range.RangeFindings``) with their op names in the model's
    spelling (``model_spellings`` of ``rows``); ``findings`` itself where none changes."""
    names = model_spellings(rows)
    if not names or not any(f.op in names for f in findings):
        return findings
    out = type(findings)(replace(f, op=names.get(f.op, f.op)) for f in findings)
    for attr, value in vars(findings).items():  # checked, ignored, passing, ignored_unlooked
        if isinstance(value, tuple):
            value = tuple(names.get(n, n) for n in value)
        setattr(out, attr, value)
    return out
