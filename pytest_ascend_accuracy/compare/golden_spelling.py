"""Golden op names in the spelling of the actual dump, where the golden's files sanitise them.

msit's golden naming (and a golden cache entry's) writes node ``p2o.Conv.0`` as file stem
``p2o_Conv_0`` (``dump.layout.sanitize``); a device dump's headers (or its om json) name the
same op ``p2o.Conv.0``. Matching compares the two after sanitising both, but whatever was
printed from the golden side -- the failure block's ``golden`` line, the coverage line's
unmatched golden ops -- named ops by a spelling no op of the model has, beside the dump's real
names: without ``--om-json`` a PP-OCRv4 det compare listed ``439 unmatched (..., p2o_Conv_0,
p2o_Conv_1, p2o_Mul_0, ...)``. ``in_actual_spelling`` gives such a golden op the one name of the
actual dump that sanitises to its stem; ``name_members`` finds the golden ops a fused op's own
name stands for (``p2o.Conv.1p2o.Mul.0p2o.Add.2``: its members' names joined, as ATC names a
fused op; a dump header gives only the fused op's output origin, the last member), so matching
counts them inside the fused op, as the plugin does from its conversion, not unmatched.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Optional, Set

from ..dump.layout import sanitize
from ..dump.model import DumpSet, OpRecord
from ..graph.concatenated_names import ConcatenatedNames


def name_members(op: OpRecord, stems: ConcatenatedNames) -> List[str]:
    """The parts of ``op``'s own name, spelled as it spells them, that are golden ops
    (``stems``: the golden op names, sanitised, built once for all of a dump's ops): the name
    itself when it is one, else its cut into two or more of them laid end to end; [] when
    neither."""
    key = sanitize(op.name)
    if key in stems:
        return [op.name]
    parts = _header_split(key, op, stems) if op.is_fused else None
    out, at = [], 0
    for part in parts or ():  # sanitize maps character to character: cut the name alike
        out.append(op.name[at:at + len(part)])
        at += len(part)
    return out


def _header_split(key: str, op: OpRecord, stems: ConcatenatedNames) -> Optional[List[str]]:
    """``key`` (a fused op's sanitised name) cut into golden names ending with a member its
    header names (ATC's joined name ends with the output's origin): where names allow two cuts
    the shortest one could take another op's name (``abc`` of Conv ``a`` and Relu ``bc`` read
    as ``ab`` + ``c``, ops of the next layer, a review). Where no header member ends the name,
    the shortest cut, as before."""
    for end in (sanitize(n) for n in op.original_names if n):
        if end in stems and len(end) < len(key) and key.endswith(end):
            head = key[:-len(end)]
            first = [head] if head in stems else stems.split(head)
            if first:
                return first + [end]
    return stems.split(key)  # no header member ends it: the one cut


def _spellings(actual: DumpSet, stems: ConcatenatedNames) -> Dict[str, Set[str]]:
    """{sanitised name: the actual dump's spellings of it} over its op names, original names,
    tensor origins and fused ops' members."""
    found: Dict[str, Set[str]] = {}
    for op in actual.ops:
        names = [op.name, *op.original_names,
                 *(t.origin[0] for t in (*op.outputs, *op.inputs) if t.origin)]
        if op.is_fused and sanitize(op.name) not in stems:
            names.extend(name_members(op, stems))
        for n in names:
            if n:
                found.setdefault(sanitize(n), set()).add(n)
    return found


def in_actual_spelling(golden: DumpSet, actual: DumpSet) -> DumpSet:
    """``golden`` with each op whose name is a sanitised stem (``p2o_Conv_0``) renamed to the
    one name of ``actual`` that sanitises to it (``p2o.Conv.0``); ``golden`` itself where none
    changes. A stem two spellings of the dump share, a name another golden op holds or whose
    stem another golden op shares, stays as it is."""
    names = [op.name for op in golden.ops]
    stems: Dict[str, int] = {}
    for n in names:
        stems[sanitize(n)] = stems.get(sanitize(n), 0) + 1
    candidates = [n for n in names if sanitize(n) == n and stems[n] == 1]
    if not candidates:
        return golden
    spelled = _spellings(actual, ConcatenatedNames(stems))
    taken = set(names)
    renames: Dict[str, str] = {}
    for n in candidates:
        real = spelled.get(n, set()) - {n}
        if len(real) == 1 and not (real & taken) and n not in spelled.get(n, set()):
            renames[n] = next(iter(real))
    if not renames:
        return golden
    ops = [replace(op, name=renames[op.name]) if op.name in renames else op for op in golden.ops]
    return DumpSet(ops, kind=golden.kind, root=golden.root, model_name=golden.model_name,
                   meta=golden.meta)


__all__ = ["in_actual_spelling", "name_members"]
