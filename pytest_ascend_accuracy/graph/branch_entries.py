"""What a refusal says of a per_op, ignore or keep_dtype entry that reaches ops inside an ``If``'s
branches (``graph.op_catalogue.ModelOps.inside``: ``(name, where, compared)``).

- per_op / ignore: a glob (``If_0_then_branch__Inline_0__/decoder/*``, ``*/rnn/If*``) matching
  no op compared but ops of a branch a run executes inside an If (which a comparison judges as
  one op) names that If, as an exact name does (H113: silero_vad's glob was refused "matches no
  op ...; its ops: 'Equal_0', 'If_0', ..." and If_0 was never named);
- keep_dtype: ATC applies the file to the graph as its ONNX parser built it (docs/formats.md,
  ``--keep_dtype``), where an If's branches are subgraphs whose ops the parser renames
  ``<subgraph>/<op>`` (``PostOpProcessForSubgraph``) and an If whose condition is known
  without inputs is still an If; ``KeepDtypeFunc`` looks at every node of that graph,
  subgraphs included (``GetAllNodes``), by name or by ``OpType::``. So a branch op's ONNX name
  keeps nothing (refused), and ``OpType::`` of its parser type keeps it (taken, and offered);
  the file takes no patterns (a glob is refused saying so, with the names it matches).
"""
from __future__ import annotations

from fnmatch import fnmatchcase
from typing import List, Optional, Sequence, Tuple

from ..core.ascend_optypes import IF_TYPES
from .control_flow import UNPARSED_CONTROL_FLOW

Inside = Sequence[Tuple[str, str, str]]


def is_glob(entry: str) -> bool:
    return any(c in entry for c in "*?[")


def _names(names: Sequence[str], n: int = 8) -> str:
    return ", ".join(repr(x) for x in names[:n]) + (", ..." if len(names) > n else "")


def _owner(where: str) -> Tuple[str, str]:
    """``("If", "'cond'")`` of ``"the then_branch of If 'cond'"``."""
    owner_type, _, owner_name = where.rpartition(" of ")[2].partition(" ")
    return owner_type, owner_name


def glob_inside_text(entry: str, what: str, inside: Inside, of: str) -> Optional[str]:
    """The refusal of a per_op or ignore glob that matches no op compared, where it matches ops
    inside branches: those a run executes inside an If name that If (the op compared), those
    of branches a conversion drops are said never to run; None where it matches no such op."""
    hits = [h for h in inside if fnmatchcase(h[0], entry)]
    within = [h for h in hits if h[2] and h[2] != h[0]]  # run inside an operator
    if within:
        name, where, compared = within[0]
        owner_type, owner_name = _owner(where)
        if owner_type in UNPARSED_CONTROL_FLOW:
            return (f"{what} {entry!r} (a glob) matches ops inside {where}; ATC's ONNX parser "
                    f"converts no {owner_type} (E19010), so the model cannot be converted (its "
                    f"conversion says why and what to do)")
        ops = list(dict.fromkeys(c for _, _, c in within))
        count = f"{len(within)} op{'s' if len(within) != 1 else ''}"
        inner = f", within {compared!r}" if repr(compared) != owner_name else ""
        one = "as one op" if len(ops) == 1 else "each as one op"
        return (f"{what} {entry!r} (a glob) matches no op of {of} a comparison judges, but "
                f"{count} inside If branches, e.g. {name!r} (in {where}{inner}), which a run "
                f"executes and a comparison judges {one}: name "
                + " and ".join(repr(c) for c in ops))
    if hits and all(not c for _, _, c in hits):
        name, where, _ = hits[0]
        return (f"{what} {entry!r} (a glob) matches only ops inside branches a conversion drops, "
                f"e.g. {name!r} (in {where}): the If's condition is known without inputs and "
                f"takes the other branch, so no run executes them")
    return None


def keep_dtype_inside_text(entry: str, where: str, compared: str, parsed: str,
                           of_type: int) -> str:
    """The refusal of a keep_dtype entry naming an op inside an If's branch (run: ``compared``
    not empty), with the ``OpType::`` entry that keeps it (``parsed``: its parser type, of
    which the model has ``of_type`` ops that run)."""
    _, owner_name = _owner(where)
    if compared == entry:
        state = (", which a conversion brings into its main graph once it folds the If (its "
                 "condition is known without inputs)")
    else:
        state = f", within {compared!r}" if repr(compared) != owner_name else ""
    from ..core.ascend_optypes import is_cube

    others = (f", with the other {of_type - 1} {parsed} op{'s' if of_type != 2 else ''} of the "
              f"model" if of_type > 1 else "")
    # high precision is allow_fp32_to_fp16: vector ops keep float32 where they support it, Cube
    # ops run in float16 (it said "to run every op in float32": H324, whose branch ops were
    # vector ops while its Convs failed in float16 under it)
    hp = ("; high precision (modes=[HIGH_PRECISION], --precision_mode=allow_fp32_to_fp16) does "
          f"not keep it: it runs Cube ops such as {parsed} in float16" if is_cube(parsed) else
          "; or convert in high precision (modes=[HIGH_PRECISION], "
          "--precision_mode=allow_fp32_to_fp16), which runs vector ops such as this one in "
          "float32 where they support it, and Cube ops (Conv, MatMul, Gemm) still in float16")
    return (f"keep_dtype entry {entry!r} names an op inside {where}{state}: ATC applies keep_dtype "
            f"to the graph as its parser built it, where an If's branches are subgraphs whose ops "
            f"it renames '<subgraph>/<op>', so it keeps no branch op by its ONNX name; "
            f"'OpType::{parsed}' keeps it{others}: modes=[keep_dtype(['OpType::{parsed}'])]{hp}")


def keep_dtype_glob_text(entry: str, names: Sequence[str], inside: Inside,
                         inside_parsed: Sequence[str], of: str) -> str:
    """The refusal of a keep_dtype entry that is a glob: ATC reads each line as one name or
    ``OpType::`` entry. Names the main-graph ops it matches, and the ``OpType::`` entries that
    keep the branch ops it matches (``inside_parsed``: their parser types, as ``inside``)."""
    main = [n for n in names if fnmatchcase(n, entry)]
    types: List[str] = list(dict.fromkeys(
        p for (n, _, c), p in zip(inside, inside_parsed) if c and fnmatchcase(n, entry)))
    text = (f"keep_dtype entry {entry!r} is a glob: ATC's keep_dtype file takes op names and "
            f"OpType:: entries as written, no patterns")
    if main:
        text += f"; the ops of {of} it matches: keep_dtype([{_names(main, 12)}])"
    if types:
        typed = [f"OpType::{t}" for t in types]
        text += ("; it matches ops inside If branches, which ATC renames when it parses them: "
                 "their types keep them (with the other ops of each type): "
                 + (f"keep_dtype({typed!r})" if len(typed) <= 4 else _names(typed, 4)))
    if not main and not types:
        text += f", and it matches no op of {of}"
    return text


#: parser types whose op keep_dtype cannot change: a Constant computes nothing (a weight, its
#: consumer's precision), and an If computes nothing either (its branch ops do)
KEEPS_NOTHING = frozenset({"Constant", "If"})


def keep_entries(names: Sequence[str], op_names: Sequence[str], op_types: Sequence[str],
                 inside: Inside, inside_parsed: Sequence[str]) -> List[str]:
    """``names`` (a keep_dtype fix's ops, as a dump or a golden names them) as entries a
    keep_dtype of the model takes and that keep what they name (the model's main-graph
    ``op_names`` with their ONNX ``op_types``; ``inside`` with ``inside_parsed``, the parser
    types of its ops: ``op_catalogue.ModelOps``): an op inside an If's branch (a golden or a
    conversion that inlines the If names it so, but ATC keeps no branch op by its ONNX name:
    ``keep_dtype_inside_text``) by ``OpType::`` of its parser type; an If, whose name keeps
    none of its branch ops, by the ``OpType::`` entries of the ops run inside it (nested Ifs'
    too), the name itself where none is known. Order kept, repeats dropped. silero_vad's op15
    export: the hint and the diagnosis's fix named '/model/decoder/rnn/If' (in the branch of
    If '/model/decoder/If_1'), which pasted was refused; and '/model/decoder/If', which pasted
    was taken and the check still failed there (its Squeeze left float16)."""
    children: dict = {}
    where_of: dict = {}
    for (name, where, compared), parsed in zip(inside, inside_parsed):
        if not compared:  # a branch a conversion drops: no run executes it
            continue
        children.setdefault(_owner(where)[1], []).append((name, parsed))
        where_of.setdefault(name, parsed)
    main_ifs = {n for n, t in zip(op_names, op_types) if t in IF_TYPES}

    def under(if_name: str) -> List[str]:
        out: List[str] = []
        for name, parsed in children.get(repr(if_name), ()):
            if parsed == "If":
                out.extend(under(name))
            elif parsed not in KEEPS_NOTHING:
                out.append(f"OpType::{parsed}")
        return out

    entries: List[str] = []
    for name in names:
        parsed = where_of.get(name)
        if parsed is None and name not in main_ifs:
            entries.append(name)
        elif parsed is not None and parsed not in KEEPS_NOTHING:
            entries.append(f"OpType::{parsed}")
        elif parsed != "Constant":  # an If, of the main graph or of a branch
            entries.extend(under(name) or ([name] if parsed is None else []))
    return list(dict.fromkeys(entries))


def model_keep_entries(ops, names: Sequence[str]) -> List[str]:
    """``keep_entries`` of ``names`` in the model ``ops`` catalogues (``op_catalogue.
    ModelOps``); ``names`` as they are where the model has no If branches."""
    if not ops.inside:
        return list(names)
    return keep_entries(names, ops.names, ops.types, ops.inside,
                        [p for _, p in ops.inside_types])
