"""The operators of a model by the names the model and ATC use: the one source of truth for
every op name the plugin accepts or prints.

``model_ops(model)`` lists the node names (unnamed nodes named as ``graph.names`` does) and
their ONNX types. It validates what a user names -- keep_dtype entries (names or
``OpType::X``), per-op thresholds, ignored ops -- raising ``ConfigError`` with the entry, the
model and the closest real names (for a keep_dtype entry that is a fused op's name, its
members' names: ``split_concatenated_names``); and it gives sanitized names
(``p2o_BatchNormalization_1``, what dump *file names* hold) back their real spelling
(``p2o.BatchNormalization.1``).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from ..core.ascend_optypes import OPTYPE_PREFIX, node_parser_type, parser_type
from ..dump.layout import sanitize
from .branch_entries import (glob_inside_text, is_glob, keep_dtype_glob_text,
                             keep_dtype_inside_text)
from .control_flow import UNPARSED_CONTROL_FLOW
from .concatenated_names import split_concatenated_names
from ..errors import ConfigError

_CACHE: Dict[str, "ModelOps"] = {}


@dataclass(frozen=True)
class ModelOps:
    """Node names in graph order with their ONNX types, of the model called ``label``."""

    label: str
    names: Tuple[str, ...]
    types: Tuple[str, ...]
    #: the type ATC's parser gives each node (``node_parser_type``: a nearest Resize's is
    #: ``ResizeNearestNeighborV2``); empty: ``parser_type`` of ``types``
    parsed: Tuple[str, ...] = ()
    #: ``(name, where, compared)`` of the nodes inside subgraphs
    #: (``graph.control_flow.subgraph_ops``): not ops of their own to a run, refused with where
    #: they are and the op to name (``compared``), but for those a conversion brings up into
    #: its main graph (``compared`` is the name itself): ops of a model's catalogue
    inside: Tuple[Tuple[str, str, str], ...] = ()
    #: ``(ONNX type, ATC parser's type)`` of each node of ``inside`` (a model's catalogue):
    #: keep_dtype's ``OpType::`` entries reach the ops of an If's branches (``GetAllNodes``)
    inside_types: Tuple[Tuple[str, str], ...] = ()
    #: the names an error offers as the closest (default: ``names``): a device dump's, where
    #: the golden's names are taken too (an If's inlined branch ops, offered, were refused
    #: pasted as "never compared")
    offered: Tuple[str, ...] = ()
    #: ``(tensor, op, output index)`` of every node output: a tensor's name given for an op's
    #: is refused naming the op that makes it (``_unknown``)
    outputs: Tuple[Tuple[str, str, int], ...] = ()

    @property
    def type_of(self) -> Dict[str, str]:
        return dict(zip(self.names, self.types))

    def real_name(self, name: str) -> str:
        """``name`` as the model spells it: a sanitized name maps back when exactly one node
        sanitizes to it; anything else is returned unchanged."""
        if name in self._name_set:
            return name
        hits = self._by_sanitized.get(sanitize(name), ())
        return hits[0] if len(hits) == 1 else name

    def closest(self, name: str, pool: Optional[Sequence[str]] = None, n: int = 3) -> List[str]:
        """The real names closest to ``name``: its unsanitized spelling first, then difflib."""
        pool = list(self.names if pool is None else pool)
        out = [r for r in self._by_sanitized.get(sanitize(name), ()) if r in pool]
        for cand in difflib.get_close_matches(name, pool, n=n, cutoff=0.5):
            if cand not in out:
                out.append(cand)
        return out[:n]

    def check_names(self, entries: Iterable[str], what: str, where: Optional[str], *,
                    tensors: bool = True) -> None:
        """Every entry names a node of the model, or is a glob (``fc2/*``) matching one; the
        sanitized spelling of a name matches nothing and is refused with the real name.
        ``tensors``: ``OP:output:N`` is taken for a node ``OP`` (a model's node names say
        nothing of its tensors; names that list them, a comparison's, pass False). An op inside
        an If's branch is refused naming the op compared (``inside``), unless a conversion
        brings it into the main graph (a model's catalogue) or the device's dump has it; a
        glob alike (``_glob_taken``)."""
        for entry in entries:
            if (self.offered and self._compared.get(entry, entry) != entry
                    and entry not in self._offered_set):
                # a branch op the device runs inside an If: only a golden, which inlines the
                # If it keeps, has it, and it would judge nothing; the refusal names the If
                raise ConfigError(where, self._unknown(entry, what))
            if entry in self._name_set or (tensors and tensor_op(entry) in self._name_set):
                continue
            if self.types and self._compared.get(entry) == entry:
                continue  # a model's op its conversion brings up out of an inlined If
            if is_glob(entry):
                if self._glob_taken(entry):
                    continue
                raise ConfigError(where, self._unknown(entry, what))
            if tensors and split_concatenated_names(tensor_op(entry) or entry, self.names):
                continue  # a fused op's name (conv1relu1): it names ops where a mode fuses them
            raise ConfigError(where, self._unknown(entry, what))

    def _glob_taken(self, entry: str) -> bool:
        """A per_op/ignore glob matches an op compared: a name (a comparison's: of the device's
        dump where ``offered``, not only branch ops a golden has), or an op a conversion brings
        up out of an inlined If (a model's catalogue)."""
        from fnmatch import fnmatchcase

        inner = [(n, c) for n, _, c in self.inside if fnmatchcase(n, entry)]
        if self.offered and any(c and c != n for n, c in inner) and not any(
                fnmatchcase(n, entry) for n in self.offered):
            return False  # ops the device runs inside an If: refused naming it
        return (any(fnmatchcase(n, entry) for n in self.names)
                or bool(self.types) and any(c == n for n, c in inner))

    def _run_types(self) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
        """(ONNX types, ATC parser types) of the ops a run executes, If branches' included."""
        run = [ts for ts, (_, _, c) in zip(self.inside_types, self.inside) if c]
        return (self.types + tuple(t for t, _ in run),
                (self.parsed or tuple(map(parser_type, self.types))) + tuple(p for _, p in run))

    def check_keep_dtype(self, entries: Iterable[str], where: Optional[str]) -> None:
        """Op names must be node names; ``OpType::X`` must be the type ATC's parser gives some
        node (``core.ascend_optypes.PARSER_TYPES``), else ATC would keep nothing: of the main
        graph or of an If's branch a run executes (ATC keeps by type on every parsed node)."""
        types, parsed = self._run_types()
        ascend = list(dict.fromkeys(parsed))
        parsed_of: Dict[str, List[str]] = {}  # ONNX type -> the parser types of its nodes
        for t, p in dict.fromkeys(zip(types, parsed)):
            parsed_of.setdefault(t, []).append(p)
        # an ONNX type is taken where the parser keeps its name for some node (a linear Resize
        # is Resize, a nearest one ResizeNearestNeighborV2: OpType::Resize keeps no nearest one)
        # (and where the type an ONNX spelling is written as is some node's: a Clip with min
        # only is Maximum, so OpType::Clip, written ClipByValue, would keep none of them)
        onnx = [t for t in parsed_of if t in parsed_of[t] or parser_type(t) in parsed_of[t]]
        for entry in entries:
            if entry.startswith(OPTYPE_PREFIX):
                typ = entry[len(OPTYPE_PREFIX):]
                refused = optype_refusal(entry, typ, self.label, self.names, self.types,
                                         parsed_of, ascend, accepted=typ in ascend or typ in onnx)
                if refused:
                    raise ConfigError(where, refused)
            elif is_glob(entry) and entry not in self._name_set:
                raise ConfigError(where, keep_dtype_glob_text(
                    entry, self.names, self.inside, [p for _, p in self.inside_types],
                    f"model {self.label!r}"))
            elif entry not in self._name_set:
                members = split_concatenated_names(entry, self.names)
                if members:  # a fused op as the failure block prints it: ATC wants its members
                    # the names it joins, not every op fused in: a BatchNorm folded into a
                    # Conv leaves no part in conv1relu1 (the failure block's "original ops",
                    # from the om json, list it; keeping the Conv keeps what was folded in)
                    raise ConfigError(where, f"keep_dtype entry {entry!r} is the name of a fused "
                                             f"op: keep_dtype takes the original node names, "
                                             f"which that name joins: "
                                             + ", ".join(repr(m) for m in members))
                raise ConfigError(where, self._unknown(entry, "keep_dtype entry"))

    def _unknown(self, entry: str, what: str) -> str:
        ops = [n for n in self.offered or self.names if not _ANY_TENSOR.search(n)]  # not tensors
        # not the Constants (a Paddle2ONNX model's 878 unnamed weights, named Constant_N here:
        # each one offered was refused as folded at conversion, audit 36 A)
        ops = [n for n in ops if self.type_of.get(n) != "Constant"] or ops
        # an op's name is offered for an op's name, a tensor's (topk:output:1) for a tensor's
        near = self.closest(entry, None if tensor_op(entry) else ops)
        of = (f"model {self.label!r}" if self.label != "the dumps" else self.label)
        members = split_concatenated_names(entry, ops)
        if members:  # a fused op's name, in a check whose mode does not fuse it
            dumps = self.label == "the dumps"
            return (f"{what} {entry!r} is the name of a fused op, which {of} "
                    f"{'do' if dumps else 'does'} not have ({'their' if dumps else 'its'} mode "
                    f"does not fuse it): name a member, e.g. {members[0]!r}, which applies to "
                    "the fused op in the modes that fuse it and to itself in the others")
        # nothing close: some of the real names, so the user sees how they are spelled (a CI
        # trial's ignore=["zzz"] read "'zzz' is not an op of model 'passing_mlp'" and no more)
        keep = what.startswith("keep_dtype")
        if is_glob(entry) and not keep:
            text = glob_inside_text(entry, what, self.inside, of)
            if text:
                return text
        # a branch's op (a trial: "is not an op", untrue; the closest failed pasted); for
        # keep_dtype one a conversion brings up too (ATC keeps by name before it does)
        owner = next(((w, c, i) for i, (n, w, c) in enumerate(self.inside)
                      if n == entry and (c != entry or keep)), None)
        if owner:
            owner, compared, i = owner
            owner_type, _, owner_name = owner.rpartition(" of ")[2].partition(" ")
            if owner_type in UNPARSED_CONTROL_FLOW:
                return (f"{what} {entry!r} names an op inside {owner}; ATC's ONNX parser "
                        f"converts no {owner_type} (E19010), so the model cannot be converted "
                        f"(its conversion says why and what to do)")
            if not compared:
                return (f"{what} {entry!r} names an op inside {owner}, a branch a conversion "
                        f"drops: the If's condition is known without inputs and takes the "
                        f"other branch, so no run executes this op")
            if keep and i < len(self.inside_types):
                parsed = self.inside_types[i][1]
                return keep_dtype_inside_text(entry, owner, compared, parsed,
                                              self._run_types()[1].count(parsed))
            within = f", within {compared!r}" if repr(compared) != owner_name else ""
            head = f"{what} {entry!r} names an op inside {owner}{within}, which a run executes and "
            return head + f"a comparison judges as one op: name {compared!r}"
        made = next(((op, i) for t, op, i in self.outputs if t == entry and op != entry), None)
        if made is not None:  # (a string-alike "closest" op judged another)
            return f"{what} {entry!r} is a tensor of {of}, output {made[1]} of op {made[0]!r}: " \
                   f"name the op, {made[0]!r}"
        whose = "their" if self.label == "the dumps" else "its"
        listed = f"; {whose} ops: {_some_names(ops)}" if ops else ""
        if entry.startswith(OPTYPE_PREFIX) and not what.startswith("keep_dtype"):
            return f"{what} {entry!r}: " + self._no_optype(entry[len(OPTYPE_PREFIX):], of,
                                                           listed)
        if any(c in entry for c in "*?[") and not near:
            return f"{what} {entry!r} (a glob) matches no op of {of}{listed}"
        text = f"{what} {entry!r} is not an op of {of}"
        if sanitize(entry) == entry and near and sanitize(near[0]) == entry and near[0] != entry:
            text += " (that is the name as dump file names write it)"
        return text + (_closest_text(near) if near else listed)

    def _no_optype(self, typ: str, of: str, listed: str) -> str:
        """What to write instead of an ``OpType::`` entry outside keep_dtype: a glob matching
        exactly the ops of that type where one does, else their names (``listed``: some of
        the ops, where their types are not known here: a catalogue of the compared dumps')."""
        import fnmatch
        import os.path

        of_type = [n for n, t in zip(self.names, self.types) if t == typ or parser_type(t) == typ]
        head = ("OpType:: entries are keep_dtype's (ATC's --keep_dtype file); per_op and "
                "ignore take op names or globs of them")
        if not self.types:  # names only: no claim about the types
            return head + listed
        if not of_type:
            return head + f", and {of} has no op of type {typ!r}"
        glob = os.path.commonprefix(of_type) + "*"
        if len(of_type) > 1 and len(glob) > 1 and \
                [n for n in self.names if fnmatch.fnmatchcase(n, glob)] == of_type:
            return head + f": the {len(of_type)} {typ} ops are {glob!r}"
        return head + f": the {typ} ops are " + _some_names(of_type)

    def __post_init__(self):
        by: Dict[str, List[str]] = {}
        for n in self.names:
            by.setdefault(sanitize(n), []).append(n)
        object.__setattr__(self, "_name_set", frozenset(self.names))
        object.__setattr__(self, "_by_sanitized", {k: tuple(v) for k, v in by.items()})
        object.__setattr__(self, "_compared", {n: c for n, _, c in self.inside})
        object.__setattr__(self, "_offered_set", frozenset(self.offered))


_TENSOR_SUFFIX = re.compile(r":output:\d+$")
#: a tensor's name in a comparison's rows: one output or one input of an op
_ANY_TENSOR = re.compile(r":(?:output|input):\d+$")


def tensor_op(entry: str) -> Optional[str]:
    """``topk`` of ``topk:output:1`` (one output of an op, as the failure table names it; op
    inputs are not compared by the plugin); None for an entry without such a suffix."""
    m = _TENSOR_SUFFIX.search(entry)
    return entry[:m.start()] if m else None


def _some_names(names: Sequence[str], n: int = 8) -> str:
    """``'a', 'b', ...``: the first ``n`` of ``names``, ``...`` where there are more."""
    return ", ".join(repr(x) for x in names[:n]) + (", ..." if len(names) > n else "")


from .optype_refusal import listed_closest as _closest_text, optype_refusal  # noqa: E402


def model_ops(model, loaded=None) -> ModelOps:
    """The model's ops (a path, bytes or an ``onnx.ModelProto``), cached by content digest;
    ``loaded``: the model already read (``load_model(model, weights=False)``), not read again."""
    from .names import normalize_node_names
    from .content_digests import model_digest
    from .control_flow import subgraph_nodes
    from .onnx_graph import load_model, model_label

    digest = model_digest(model)
    hit = _CACHE.get(digest)
    if hit is not None:  # same ops; the label is this model's own (a copy may have another name)
        return replace(hit, label=model_label(model))
    proto = loaded if loaded is not None else load_model(model, weights=False)  # the nodes
    graph = type(proto.graph)()
    graph.node.extend(proto.graph.node)
    normalize_node_names(graph)
    # which Ifs a conversion inlines (read with the weights): only for a model with an If
    inlined = (conversion_inlined_ifs(model) if any(n.op_type == "If" for n in graph.node)
               else {})
    inner = subgraph_nodes(graph, inlined)
    ops = ModelOps(model_label(model), tuple(n.name for n in graph.node),
                   tuple(n.op_type for n in graph.node),
                   tuple(node_parser_type(n) for n in graph.node),
                   tuple((n, w, c) for n, w, c, _ in inner),
                   inside_types=tuple((x.op_type, node_parser_type(x)) for *_, x in inner),
                   outputs=tuple((t, n.name, i) for n in graph.node
                                 for i, t in enumerate(n.output) if t))
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[digest] = ops
    return ops


def conversion_inlined_ifs(model) -> Dict[str, str]:
    """``{If name: "then"|"else"}`` of the ``If`` nodes a conversion inlines (their condition
    known without inputs: ``graph.inline``), nested ones brought up included, as
    ``prepare_model(model)`` inlines them; {} where that cannot be worked out (the conversion
    says why)."""
    from .external import load_model_refs
    from .inline import inline_ifs
    from .names import normalize_node_names
    from .prepare import sort_nodes

    try:
        proto, folder = load_model_refs(model)
        normalize_node_names(proto.graph)
        sort_nodes(proto.graph)
        return dict(inline_ifs(proto, folder=folder))
    except Exception:  # noqa: BLE001 -- nothing known inlined: every If an operator
        return {}


def check_mode(mode, model, where: Optional[str], others: Sequence = ()) -> None:
    """Validate a mode's keep_dtype entries against the model before it is converted.
    ``others``: the other models the same test converted before this one; an op name of one of
    them that this model lacks is theirs, not a typo (a marker's ``modes=[keep_dtype([...])]``
    converts every model of the test: the fix a hint gave for the model that failed first)."""
    if not mode.keep_dtype:
        return
    ops = model_ops(model)
    entries = list(mode.keep_dtype)
    if others:
        theirs = set()
        for other in others:
            theirs |= set(model_ops(other).names)
        entries = [e for e in entries if e in ops.names or e not in theirs]
    ops.check_keep_dtype(entries, where)


def check_model_settings(model, per_op, ignore, mode, where: Optional[str]) -> None:
    """A check's per_op and ignore entries and its mode's keep_dtype entries name ops of
    ``model`` (or op types, globs, ``OP:output:N``), else a ``ConfigError`` with the closest."""
    check_entry_names(model_ops(model), per_op, ignore, where)
    check_mode(mode, model, where)


def check_entry_names(ops: ModelOps, per_op, ignore, where: Optional[str]) -> None:
    """A check's ``per_op`` and ``ignore`` entries name ops of the model ``ops`` lists, else a
    ``ConfigError`` at ``where`` with the closest names."""
    ops.check_names(list(per_op or ()), "per_op entry", where)
    ops.check_names(list(ignore or ()), "ignore entry", where)


def with_real_names(dump, ops: ModelOps):
    """A copy of ``dump`` (a DumpSet, e.g. a golden read back from sanitized file names) whose
    op names are the model's own spelling."""
    from ..dump.model import DumpSet

    changed = False
    new_ops = []
    for op in dump.ops:
        real = ops.real_name(op.name)
        if real != op.name:
            changed = True
            op = replace(op, name=real)
        new_ops.append(op)
    if not changed:
        return dump
    return DumpSet(new_ops, kind=dump.kind, root=dump.root, model_name=dump.model_name,
                   meta=dump.meta)


def check_setting_names(per_op: Iterable[str], ignore: Iterable[str], names: Iterable[str],
                        label: str, where: Optional[str], offered: Iterable[str] = (),
                        inside: Tuple[Tuple[str, str, str], ...] = (),
                        clashes: Iterable[str] = (),
                        outputs: Tuple[Tuple[str, str, int], ...] = ()) -> None:
    """Per-op threshold and ignore entries must name some of ``names`` (the ops of the compared
    dumps: real names, or globs matching one), else they would silently judge nothing;
    ``offered``: the names an error offers (default: ``names``); ``inside``: the model's ops
    inside subgraphs (``ModelOps.inside``), refused saying where they are; ``clashes``: names
    that are an op's and another op's tensor's (``name_clashes``), refused: they judge both;
    ``outputs``: the model's ``(tensor, op, index)`` (``ModelOps.outputs``): a tensor's name
    (Netron's ``/model.22/Concat_output_0``) is refused naming the op that makes it, where
    that op is one of ``names`` (difflib offered ``/model.22/Concat_6``, another op)."""
    from fnmatch import fnmatchcase

    clashes = frozenset(clashes)
    per_op, ignore = list(per_op), list(ignore)
    if not per_op and not ignore:
        return
    for what, entries in (("per_op entry", per_op), ("ignore entry", ignore)):
        for entry in entries:
            hit = entry if entry in clashes else next(  # a glob too (a review)
                (c for c in sorted(clashes) if any(ch in entry for ch in "*?[")
                 and fnmatchcase(c, entry)), None)
            if hit:  # a trial: ignore=["conv:output:0"] also ignored op conv's output
                raise ConfigError(where, f"{what} {entry!r} names an op and also, as the failure "
                                         f"table spells tensors, an output of op "
                                         f"{hit.rsplit(':', 2)[0]!r}: it would apply to both; "
                                         f"rename one of the two ops in the model")
    names = tuple(dict.fromkeys(n for n in names if n))
    known = frozenset(names)
    ops = ModelOps(str(label), names, (), inside=inside,
                   offered=tuple(dict.fromkeys(n for n in offered if n)),
                   outputs=tuple(o for o in outputs if o[1] in known))
    ops.check_names(per_op, "per_op entry", where, tensors=False)
    ops.check_names(ignore, "ignore entry", where, tensors=False)


def check_dump_setting_names(per_op: Iterable[str], ignore: Iterable[str], dumps: Iterable,
                             where: Optional[str], default_label: str = "the dumps",
                             actual=None, inside: Tuple[Tuple[str, str, str], ...] = (),
                             outputs: Tuple[Tuple[str, str, int], ...] = ()) -> None:
    """``check_setting_names`` against the compared dumps: their ops' names and original
    names; the label is the first dump's model name (``default_label`` when none has one).
    ``actual``: the device's dump among them, whose names alone an error offers (a golden's
    other ops are never compared); ``outputs``: the model's tensors (``check_setting_names``).
    Reads no op when there is no entry to check."""
    per_op, ignore = list(per_op), list(ignore)
    if not per_op and not ignore:
        return
    dumps = list(dumps)

    def names(of):
        return (n for dump in of for op in dump.ops for n in (op.name,) + tuple(op.original_names)
                + tuple(f"{op.name}:{t.slot}" for t in op.outputs + op.inputs))

    label = next((d.model_name for d in dumps if getattr(d, "model_name", None)), None)
    ops = {n for dump in dumps for op in dump.ops for n in (op.name,) + tuple(op.original_names)}
    tensors = {f"{op.name}:{t.slot}" for dump in dumps for op in dump.ops
               for t in op.outputs + op.inputs}
    check_setting_names(per_op, ignore, names(dumps), label or default_label, where,
                        offered=names([actual]) if actual is not None else (), inside=inside,
                        clashes=ops & tensors, outputs=outputs)
