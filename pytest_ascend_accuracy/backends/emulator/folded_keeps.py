"""keep_dtype entries naming only ops folded at conversion are refused, as per_op entries are.

ATC computes an op whose inputs are all constants or static shapes at conversion
(``graph.folded_nodes``: ``p2o.Shape.0``, a Cast of a constant); it never runs on the device,
so keeping it in its original dtype changes nothing. ``keep_dtype(["p2o.Shape.0"])`` converted,
ran with the first failure unchanged, and ``diagnose --mode '{keep_dtype: [p2o.Shape.0]}'``
said PASSES, without a word that the entry kept nothing (a PP-OCRv4 trial), where the same name
as a ``per_op`` entry is refused ("names only ops never compared here ... folded at
conversion"). The emulator's conversion, which folds exactly these, refuses them now, naming
the closest ops that run.

An ``OpType::`` entry whose every op of that type (as ATC's parser types them,
``core.ascend_optypes.node_parser_type``) is folded is refused alike: ``keep_dtype(["OpType::
Trilu"])`` on a model whose only Trilu (a causal mask of a constant) is folded passed without a
word where naming that Trilu was refused (a transformer trial). One op of the type that runs,
in the main graph or in a subgraph, and the entry is taken.
"""
from __future__ import annotations

import difflib
from typing import Dict, Iterable, List, Sequence, Set

from ...core.ascend_optypes import OPTYPE_PREFIX


def folded_keep_problem(keep_dtype: Sequence[str], folded: Iterable[str],
                        running: Iterable[str], label: str, model=None) -> str:
    """The refusal's text for the entries of ``keep_dtype`` among ``folded`` (node names of
    the model ``label``), or "" where there are none; ``running``: the names of the ops that
    run, for the closest ones. ``model`` (a path or a ModelProto, read only where an
    ``OpType::`` entry and a folded op are both there): its ``OpType::`` entries whose every
    op is folded are refused too."""
    folded = set(folded)
    named = [k for k in keep_dtype if not k.startswith(OPTYPE_PREFIX) and k in folded]
    typed = folded_types(keep_dtype, folded, model)
    if not named and not typed:
        return ""
    near = (difflib.get_close_matches(named[0], list(running), n=3, cutoff=0.6)
            if named else [])
    closest = f"; closest ops that run: {', '.join(repr(n) for n in near)}" if near else ""
    entries = named + list(typed)
    of_type = "".join(f"its {k[len(OPTYPE_PREFIX):]} ops: {', '.join(repr(n) for n in ops[:5])}"
                      f"{', ...' if len(ops) > 5 else ''}; " for k, ops in typed.items())
    one = len(entries) == 1
    these = "it" if one else "them"
    return (f"keep_dtype entr{'y' if one else 'ies'} {', '.join(repr(n) for n in entries)} of "
            f"model {label!r} name{'s' if one else ''} only ops folded at conversion "
            f"({of_type}ATC computes them from constants and static shapes; they never run on "
            f"the device), so keeping {these} in the original dtype changes "
            f"nothing: remove {these}{closest}")


def folded_types(keep_dtype: Sequence[str], folded: Set[str], model) -> Dict[str, List[str]]:
    """``{OpType:: entry: its folded ops}`` for the entries of ``keep_dtype`` whose type some op
    in ``folded`` has and no other op of ``model`` (its If branches' included) has."""
    entries = [k for k in keep_dtype if k.startswith(OPTYPE_PREFIX)]
    if not entries or not folded or model is None:
        return {}
    from ...core.ascend_optypes import node_parser_type
    from ...graph.names import normalize_node_names
    from ...graph.onnx_graph import load_model

    graph = load_model(model, weights=False).graph
    normalize_node_names(graph)  # the names the conversion gave them
    folded_of: Dict[str, List[str]] = {}
    running: Set[str] = set()
    for node in graph.node:
        if node.name in folded:
            folded_of.setdefault(node_parser_type(node), []).append(node.name)
        else:
            running.add(node_parser_type(node))
        running.update(_branch_types(node))
    out = {}
    for entry in entries:
        typ = entry[len(OPTYPE_PREFIX):]
        if typ in folded_of and typ not in running:
            out[entry] = folded_of[typ]
    return out


def _branch_types(node) -> Set[str]:
    """The parser types of the ops of ``node``'s subgraphs (an If's branches), nested too."""
    from ...core.ascend_optypes import node_parser_type

    types: Set[str] = set()
    for attr in node.attribute:
        for sub in ([attr.g] if attr.type == 5 else list(attr.graphs) if attr.type == 10 else []):
            for inner in sub.node:
                types.add(node_parser_type(inner))
                types |= _branch_types(inner)
    return types


__all__ = ["folded_keep_problem"]
