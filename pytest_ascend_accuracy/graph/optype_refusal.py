"""Why a keep_dtype ``OpType::`` entry keeps nothing on ATC, in words: the refusal
``ModelOps.check_keep_dtype`` raises.

ATC matches an ``OpType::`` entry against the type its ONNX parser gives each node
(``core.ascend_optypes``). An entry is refused where no node of the model has that type, with
the closest types it has, what the spelling is (the parser's type for an ONNX type, a finished
graph's name, an older CANN's parser type), and, where CANN versions type the nodes
differently, that naming the op keeps it in every version. An ONNX type the parser expands into
ops of several types (``EXPANDED_TYPES``: Mean into AccumulateNV2 and Muls) is refused even
where the model holds it: no type spelling keeps the whole op (review RM of audit 36).
"""
from __future__ import annotations

import difflib
from typing import Dict, List, Sequence

from ..core.ascend_optypes import (EXPANDED_TYPES, MODE_TYPES, OLDER_PARSER_TYPES,
                                   OPTYPE_PREFIX, PARSER_TYPES, finished_types,
                                   mode_parser_names, parser_type)


def optype_refusal(entry: str, typ: str, label: str, names: Sequence[str],
                   types: Sequence[str], parsed_of: Dict[str, List[str]], ascend: List[str],
                   accepted: bool) -> str:
    """The refusal of ``entry`` (``OpType::typ``) for model ``label`` (its node ``names`` and
    ONNX ``types``; ``parsed_of``: ONNX type -> the parser types of its nodes; ``ascend``: the
    parser types of the model's nodes), "" where it keeps some node (``accepted``) and is not
    an expanded type."""
    if typ in EXPANDED_TYPES:
        ops = [n for n, t in zip(names, types) if t == typ][:3]
        if ops:
            parts = " and ".join(EXPANDED_TYPES[typ])
            return (f"keep_dtype entry {entry!r}: ATC's ONNX parser expands each ONNX {typ} into "
                    f"{parts} before keep_dtype applies, so no OpType:: entry keeps it whole: "
                    f"name the op, e.g. {ops[0]!r}, which keeps every node it becomes")
    if accepted:
        return ""
    near = _close_types(typ, ascend + list(parsed_of))
    # the finished graph's name of a type here (OpType::BNInference for a BatchNorm): ATC
    # matches keep_dtype before the passes rename it, so the parser's name
    finished = [o for o in parsed_of if typ in finished_types(o) and typ not in parsed_of[o]]
    older = [o for o, old in OLDER_PARSER_TYPES.items() if typ in old]  # (MaxN: Max)
    near_entries = list(dict.fromkeys(
        [OPTYPE_PREFIX + p for o in older + finished + [t for t in near if t in parsed_of]
         if o in parsed_of for p in parsed_of[o]]
        + [OPTYPE_PREFIX + t for t in near if t not in parsed_of]))
    onnx_names = ([o for o, a in PARSER_TYPES.items() if a == typ]  # as written
                  + mode_parser_names(typ))
    here = [o for o in older if o in parsed_of and parser_type(o) != typ]
    if here:  # (not ClipByValue: the newest parser's type for a Clip with both bounds too)
        spelled = (f" (older CANN parsers' type for ONNX {here[0]}, which the newest found "
                   f"types {parser_type(here[0])})")
    elif onnx_names:
        spelled = f" (ATC's type for ONNX {' / '.join(onnx_names)})"
    elif finished:
        spelled = (f" (a finished graph's name for ONNX {finished[0]}; ATC matches keep_dtype "
                   f"on the graph as parsed, before that)")
    else:
        spelled = ""
    # where CANN versions type these nodes differently (an older parser's type, an ONNX type
    # the parser names by an attribute: a nearest Resize), op names match in every version
    by_name = [n for n, t in zip(names, types) if t in older or (t == typ and t in MODE_TYPES)]
    versions = (f"; CANN versions differ here (an older canndev parser named these nodes "
                f"{typ}): naming the op, e.g. {by_name[0]!r}, keeps it in every version"
                if by_name else "")
    return (f"keep_dtype entry {entry!r}{spelled}: no op of type {typ!r} in model {label!r}"
            + listed_closest(near_entries)
            + f" (its op types as ATC parses them: {', '.join(ascend[:12])}"
            + (", ..." if len(ascend) > 12 else "") + ")" + versions)


def _close_types(typ: str, pool: Sequence[str], n: int = 3) -> List[str]:
    """The op types of ``pool`` closest to ``typ``, case ignored (a trial's ``OpType::Lstm`` got
    no closest: difflib weighs ``Lstm`` against ``LSTM`` letter by letter)."""
    by_lower: Dict[str, List[str]] = {}
    for t in pool:
        by_lower.setdefault(t.lower(), []).append(t)
    near = difflib.get_close_matches(typ.lower(), list(by_lower), n=n, cutoff=0.4)
    return list(dict.fromkeys(t for low in near for t in by_lower[low]))


def listed_closest(near: Sequence[str]) -> str:
    """``"; closest: 'a', 'b'"`` for names already chosen, "" for none."""
    if not near:
        return ""
    return "; closest: " + ", ".join(repr(n) for n in near)


__all__ = ["listed_closest", "optype_refusal"]
