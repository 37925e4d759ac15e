"""Node naming for real-world ONNX exports: unnamed nodes and duplicate names.

Golden dumps, emulator dumps and keep_dtype entries all refer to operators by node name, so
every node needs one unique, stable name. Unnamed nodes get ``{op_type}_{k}`` as ATC's ONNX
parser names them, ``k`` counting the unnamed nodes from 0 (the main graph's first; the
parser's counter then goes on through the subgraphs, breadth first: ``atc_op_names``'s
``first_unnamed``)
(``OnnxModelParser::AdaptAndFindAllOnnxGraph``: ``op_type() + "_" + to_string(index++)`` for a
node without a name), so the names match the op names of a device's dumps and om json. msit's
golden dumper numbers by node position instead (``Abs_1`` for the second node whoever named
the first): the two agree only where no named node comes before an unnamed one, and where
they differ a device op paired with another node's golden tensor (docs/formats.md §7).
Duplicate names are then made unique deterministically: the first
node (in graph order) keeps the name, each later one gets the smallest ``{name}_{k}`` (k = 1,
2, ...) that no node of the graph uses. Nothing here depends on inputs, so the golden run and
every emulator conversion of the same model name every node the same way.

A model's own repeated names are not renamed but refused (``parser_refusals.name_refusal``,
applied by ``prepare.prepare_model``): ATC's ONNX parser refuses them. ``atc_op_names`` lists
the ops it makes of a graph (``Ascend/parser`` ``parser/onnx/onnx_parser.cc`` @069eb8b2,
``ModelParseToGraphImpl``): the nodes, named (``AdaptAndFindAllOnnxGraph``); a ``Data`` op
named after each graph input that is no initializer (``ParseInput``; an input an initializer
also holds "will be considered as a const node"); a ``Const`` op ``{name}_{k}`` per
initializer, ``k`` counting them in the order of their names (``ParseInitializer`` walks a
``std::map``); all appended to the node list. Its ``Prechecker`` then checks each op's name
against every op before it (``parser/common/pre_checker.cc``, ``CheckName``: an equal name adds
the cause ``NAME_REPEATED`` to both and reports ``E19009``), and any such cause fails the parse
(``is_precheck_failed``). ``repeated_names`` finds those names. The renaming is left to the ops
preparation adds (an inlined ``If`` branch's, ``inline``), which ATC names in its own way.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Set, Tuple


def normalize_node_names(graph) -> Dict[str, int]:
    """Name unnamed nodes and make names unique, in place. Returns counts for reports:
    ``{"unnamed": n, "renamed_duplicates": m}``."""
    unnamed = 0
    for node in graph.node:
        if not node.name:
            node.name = f"{node.op_type}_{unnamed}"
            unnamed += 1
    renamed = uniquify_names(list(graph.node))
    return {"unnamed": unnamed, "renamed_duplicates": renamed}


def uniquify_names(nodes: List, taken: Iterable[str] = ()) -> int:
    """Make the names of ``nodes`` unique (first occurrence keeps its name), also avoiding the
    names in ``taken``. Returns how many nodes were renamed."""
    all_names: Set[str] = set(taken) | {n.name for n in nodes}
    seen: Set[str] = set(taken)
    renamed = 0
    for node in nodes:
        if node.name in seen:
            node.name = unique_name(node.name, all_names)
            renamed += 1
        all_names.add(node.name)
        seen.add(node.name)
    return renamed


def atc_op_names(graph, first_unnamed: int = 0) -> List[Tuple[str, str, Optional[int]]]:
    """``(name, what it is, node index or None)`` of each op ATC's ONNX parser makes of
    ``graph`` (a main graph, as the module docstring says), in the order its pre-check meets
    them; ``what``: ``node[2] (Relu)``, ``graph input 'x' (its Data op)``, ``initializer 'w'
    (its Const op)``. ``first_unnamed``: the number the parser's counter of unnamed nodes is
    at (one counter across the main graph and then its subgraphs). ``graph`` is not changed."""
    ops: List[Tuple[str, str, Optional[int]]] = []
    unnamed = first_unnamed
    for j, node in enumerate(graph.node):
        name = node.name
        if not name:
            name = f"{node.op_type}_{unnamed}"
            unnamed += 1
        ops.append((name, f"node[{j}] ({node.op_type})", j))
    inits = sorted({t.name for t in graph.initializer if t.name})
    held = set(inits)
    ops += [(i.name, f"graph input {i.name!r} (its Data op)", None)
            for i in graph.input if i.name not in held]
    ops += [(f"{n}_{k}", f"initializer {n!r} (its Const op)", None) for k, n in enumerate(inits)]
    return ops


def repeated_names(graph, first_unnamed: int = 0) -> Dict[str, List[Tuple[str, Optional[int]]]]:
    """The op names ``atc_op_names`` gives more than one op of ``graph``, each with its ops'
    ``(what, node index or None)``, in the order the names first repeat; {} when none."""
    seen: Dict[str, List[Tuple[str, Optional[int]]]] = {}
    repeated: Dict[str, List[Tuple[str, Optional[int]]]] = {}
    for name, what, j in atc_op_names(graph, first_unnamed):
        seen.setdefault(name, []).append((what, j))
        if len(seen[name]) == 2:
            repeated[name] = seen[name]
    return repeated


def unique_name(base: str, used: Set[str]) -> str:
    """The smallest ``{base}_{k}`` (k >= 1) not in ``used``; adds it to ``used``."""
    k = 1
    while f"{base}_{k}" in used:
        k += 1
    name = f"{base}_{k}"
    used.add(name)
    return name
