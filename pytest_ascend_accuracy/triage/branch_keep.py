"""The ops inside an ``If``'s branches for the diagnosis's keep_dtype steps.

A dump names the ``If`` a run executes as one op, so the step that keeps "every op" kept the
ops the dump names and none of a branch's: an ``If`` is kept as an op that computes nothing,
and each op of its branches runs in the conversion's precision (the emulator's
``branch_rounding``, as GraphEngine's parser makes each branch a subgraph run on the device).
ssdlite's ``keep_dtype(all 872 ops)`` failed at If_1941 (its 30 branch ops, NMS's offset trick
among them, left float16) and the diagnosis blamed the operators, though
``precision_mode='must_keep_origin_dtype'`` and the 872 names plus the branch ops' types passed.

ATC applies keep_dtype to the graph as its parser built it: ``KeepDtypeFunc`` walks
``GetAllNodes()`` (subgraphs included) and keeps a node by name or by ``OpType::`` (its parser
type); a branch op's ONNX name is not the name the parser gives it (``<subgraph>/<op>``). So
the branch ops are kept by ``OpType::`` of their parser types (``graph.branch_entries``), which
keeps every op of those types, the main graph's included; the diagnosis searches those entries
beside the names, so a fix may hold them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Tuple

from ..core.ascend_optypes import OPTYPE_PREFIX


@dataclass(frozen=True)
class BranchOps:
    """The ops a run executes inside ``If`` branches (not those a conversion inlines)."""

    #: ``OpType::`` entries of their parser types, in graph order
    entries: Tuple[str, ...] = ()
    #: how many ops they are
    count: int = 0
    #: the ops a comparison judges them in (the Ifs of the main graph)
    owners: Tuple[str, ...] = ()
    #: ``(If judged, op)`` of the Cube ops among them (high precision feeds them float16)
    cube: Tuple[Tuple[str, str], ...] = ()
    #: ``(If judged, OpType:: entry)`` of each of them
    owned: Tuple[Tuple[str, str], ...] = ()
    #: the model's ``op_catalogue.ModelOps`` where it has If branches (None: it has none),
    #: for ``graph.branch_entries.model_keep_entries``
    catalogue: object = field(default=None, compare=False, repr=False)

    def as_entries(self, names: Sequence[str]) -> List[str]:
        """``names`` as entries keep_dtype takes and that keep them (``keep_entries``): an op
        inside a branch (a conversion inlining its If dumps it by its ONNX name) by
        ``OpType::``, an If by the entries of the ops inside it."""
        if self.catalogue is None:
            return list(names)
        from ..graph.branch_entries import model_keep_entries

        return model_keep_entries(self.catalogue, names)

    def every(self, names: Sequence[str]) -> Tuple[str, ...]:
        """The keep_dtype entries of every op: ``names`` (a dump's) and the ops inside If
        branches by type (a dump names the If alone, and keeping it kept none of them: H324;
        nor does naming an op of a branch a conversion inlines: ``as_entries``)."""
        return tuple(self.as_entries([*names, *self.entries]))

    def candidates(self, names: List[str], types: Dict[str, str],
                   verdict) -> Tuple[List[str], List[str]]:
        """A keep_dtype search's candidates: ``names`` (a dump's, with their ``types``, which
        gain the entries' types), each as keep_dtype takes it (``as_entries``: silero_vad's
        op15 fix named '/model/decoder/rnn/LSTM', in the branch of an If its conversion
        inlines, and was refused pasted), and the entries; and the entries keeping the branch
        ops of the If ``verdict`` first fails at (the likeliest fix there: seeds)."""
        if self.catalogue is not None:
            names = self.as_entries(names)
        new = [e for e in self.entries if e not in types and e not in names]
        if not new and not self.owned and self.catalogue is None:  # no If branches: as they were
            return names, []
        types.update((e, e[len(OPTYPE_PREFIX):]) for e in [*names, *new]
                     if e.startswith(OPTYPE_PREFIX))
        row = verdict.first.row if verdict.first is not None else None
        ops = (row.original_names or (row.op_name,)) if row is not None else ()
        seeds = [e for c, e in self.owned if c in ops] + [
            e for e in self.as_entries(ops) if e.startswith(OPTYPE_PREFIX)]
        return names + new, list(dict.fromkeys(seeds))

    def __bool__(self) -> bool:
        return bool(self.entries)


def branch_ops(model) -> BranchOps:
    """The ops ``model`` runs inside If branches, with the ``OpType::`` entries that keep them
    (``graph.op_catalogue.ModelOps.inside``: ``compared`` is the If judged, empty for a branch
    a conversion drops, the op itself for one it brings up into the main graph)."""
    from ..core.ascend_optypes import is_cube
    from ..graph.op_catalogue import model_ops

    from ..graph.branch_entries import KEEPS_NOTHING

    ops = model_ops(model)
    run = [(c, p, n) for (n, _, c), (_, p) in zip(ops.inside, ops.inside_types)
           if c and c != n]
    # a Constant or an If computes nothing keep_dtype changes (silero_vad.onnx's fix began
    # with OpType::Constant, an artefact of the emulator rounding a branch's Constants)
    kept = [(c, p) for c, p, _ in run if p not in KEEPS_NOTHING]
    catalogue = ops if ops.inside else None
    return BranchOps(tuple(dict.fromkeys(OPTYPE_PREFIX + p for _, p in kept)), len(run),
                     tuple(dict.fromkeys(c for c, _, _ in run)),
                     tuple((c, n) for c, p, n in run if is_cube(p)),
                     tuple((c, OPTYPE_PREFIX + p) for c, p in kept), catalogue)


def is_type_entry(entry: str) -> bool:
    return entry.startswith(OPTYPE_PREFIX)


def _few(names: Sequence[str], n: int = 3) -> str:
    return ", ".join(names[:n]) + (", ..." if len(names) > n else "")


def inside_words(branch: BranchOps) -> str:
    """``the 30 ops inside If_1941's branches``."""
    owners = branch.owners
    whose = f"{owners[0]}'s" if len(owners) == 1 else f"{len(owners)} Ifs' ({_few(owners)})"
    return f"the {branch.count} op{'s' if branch.count != 1 else ''} inside {whose} branches"


def every_label_tail(branch: BranchOps) -> str:
    """What the every-op step keeps beyond the ops the dump names: ``, and the 30 ops inside
    If_1941's branches by 9 OpType:: entries``; empty without branch ops."""
    if not branch:
        return ""
    n = len(branch.entries)
    return f", and {inside_words(branch)} by {n} OpType:: entr{'ies' if n != 1 else 'y'}"


def kept_words(keep: Sequence[str]) -> str:
    """``2 op(s)``, or where ``OpType::`` entries are among them ``1 op(s) and every op of type
    Add (OpType::Add)``: an entry of a type keeps each op of it."""
    types = [k[len(OPTYPE_PREFIX):] for k in keep if is_type_entry(k)]
    names = [k for k in keep if not is_type_entry(k)]
    if not types:
        return f"{len(names)} op(s)"
    of = (f"every op of type{'s' if len(types) != 1 else ''} {', '.join(types)} "
          f"({', '.join(OPTYPE_PREFIX + t for t in types)})")
    return f"{len(names)} op(s) and {of}" if names else of


def every_kept_mode(base, default, model):
    """(``base`` keeping every op in its original dtype, the dump's op names, ``branch_ops``):
    the mode of the diagnosis's ``keep_dtype_all`` step (its label left to the caller), from
    ``default``, the evaluation under ``base``: the dump's ops and, by type, those inside If
    branches (``BranchOps.every``). One definition, so the verdict that reads that step's run
    back finds the run the step made."""
    from ..core.modes import Mode
    from .runner import framework_ops

    names, branch = framework_ops(default)[0], branch_ops(model)
    return base | Mode(keep_dtype=branch.every(names)), names, branch
