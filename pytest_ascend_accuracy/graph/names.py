"""Node naming for real-world ONNX exports: unnamed nodes and duplicate names.

Golden dumps, emulator dumps and keep_dtype entries all refer to operators by node name, so
every node needs one unique, stable name. Unnamed nodes get ``{op_type}_{k}`` as ATC's ONNX
parser names them, ``k`` counting the unnamed nodes of the main graph only, from 0
(``OnnxModelParser::AdaptAndFindAllOnnxGraph``: ``op_type() + "_" + to_string(index++)`` for a
node without a name), so the names match the op names of a device's dumps and om json. msit's
golden dumper numbers by node position instead (``Abs_1`` for the second node whoever named
the first): the two agree only where no named node comes before an unnamed one, and where
they differ a device op paired with another node's golden tensor (docs/formats.md §7).
Duplicate names are then made unique deterministically: the first
node (in graph order) keeps the name, each later one gets the smallest ``{name}_{k}`` (k = 1,
2, ...) that no node of the graph uses. Nothing here depends on inputs, so the golden run and
every emulator conversion of the same model name every node the same way.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Set


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


def unique_name(base: str, used: Set[str]) -> str:
    """The smallest ``{base}_{k}`` (k >= 1) not in ``used``; adds it to ``used``."""
    k = 1
    while f"{base}_{k}" in used:
        k += 1
    name = f"{base}_{k}"
    used.add(name)
    return name
