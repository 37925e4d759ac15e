"""YAML documents read with bounds, so a hostile file fails fast instead of eating the machine.

``yaml.safe_load`` builds a document with aliases in linear time (an alias is the same Python
object again), but everything that walks the result afterwards sees it expanded: nine nested
levels of nine aliases ("billion laughs") is 600 bytes of text and 9**9 leaves, enough to hang
a validator and take gigabytes. ``load_yaml`` therefore measures the loaded document once, in
time linear in its distinct objects, before anyone walks it, and refuses it with a
``ConfigError`` naming the file when

* it uses more than ``max_aliases`` aliases (a list or mapping reached a second time),
* its aliases expand it by more than ``max_alias_nodes`` nodes,
* an alias refers to an enclosing node (a recursive document), or
* it nests deeper than ``max_depth`` (the YAML composer itself recurses).

The bounds are checked on the composed node graph, before any Python object is constructed:
merge keys (``<<: [*a, *a, ...]``) are expanded by PyYAML's constructor itself (each merge
copies the merged mappings' entries), so nine levels of nine merges hung ``yaml.load`` (past
60 s and 750 MB) before a check of the loaded document could run.

libyaml's composer (``CSafeLoader``, used for baselines) recurses in C without a limit: 100,000
levels of ``[`` (or of ``- `` on one line) crashed the whole process with a segmentation fault.
A text whose nesting *could* pass ``C_SAFE_DEPTH`` (a cheap upper bound from the text) is
composed by the pure-Python loader instead, whose recursion stops with a clear error.

A document without aliases is never limited by its size. The files this package writes
(baselines) contain no aliases at all; suites may use a few anchors for shared settings.

Merge keys (``<<``) are read as the YAML merge spec has it, the same under every PyYAML
(``spec_merging``): 6.0.4's constructor drops a repeated merged key by the identity of its
string, and a suite's threshold depended on the version installed.

A key given twice in one mapping is no error to YAML readers: PyYAML keeps the last value,
silently (a baseline line ``{cosine: 1.0, cosine: 0.5}`` read as 0.5). ``load_yaml(...,
unique_keys=True)`` refuses such a document, naming the line of the key and of its first
occurrence (``check_unique_keys``). Keys are compared as they load, not as they are spelt:
``1`` and ``0x1``, ``on`` and ``yes``, ``1``, ``1.0`` and ``true`` are one Python key, and
YAML kept the last value of each silently too. A merge key (``<<``) is YAML's own way of
overriding and stays allowed, once per mapping: a second one overrode the first silently.
"""
from __future__ import annotations

from typing import Optional

from ..errors import ConfigError

MAX_ALIASES = 1000
MAX_ALIAS_NODES = 100_000
MAX_DEPTH = 200
#: documents that may nest deeper than this are never handed to libyaml's recursive composer
C_SAFE_DEPTH = 2000
_END = object()


def load_yaml(text: str, where: str, *, loader=None, max_aliases: int = MAX_ALIASES,
              max_alias_nodes: int = MAX_ALIAS_NODES, max_depth: int = MAX_DEPTH,
              unique_keys: bool = False):
    """The document in ``text`` (read from ``where``), bounded as the module says. ``loader``:
    a safe PyYAML loader class (default ``yaml.SafeLoader``). ``yaml.YAMLError`` propagates
    for the caller to word; bounds and runaway nesting raise ``ConfigError(where, ...)``, and
    so does a key given twice in one mapping with ``unique_keys`` (``check_unique_keys``)."""
    import yaml

    cls = loader or yaml.SafeLoader
    if cls is not yaml.SafeLoader and nesting_bound(text) > C_SAFE_DEPTH:
        cls = yaml.SafeLoader  # a C composer would overflow the C stack (a crash, no error)
    reader = spec_merging(cls)(text)
    try:
        node = reader.get_single_node()  # the node graph: aliases are shared nodes, linear
        if node is None:
            return None
        check_yaml_bounds(node, where, max_aliases=max_aliases, max_alias_nodes=max_alias_nodes,
                          max_depth=max_depth, children=_node_children)
        if unique_keys:  # keys built by the reader itself, which keeps them for the document
            check_unique_keys(node, where, construct=reader.construct_object)
        return reader.construct_document(node)
    except RecursionError:
        raise ConfigError(where, f"YAML nested too deeply (more than the parser's recursion "
                                 f"limit; at most {max_depth} levels are read)") from None
    finally:
        reader.dispose()


def check_yaml_bounds(data, where: str, *, max_aliases: int = MAX_ALIASES,
                      max_alias_nodes: int = MAX_ALIAS_NODES, max_depth: int = MAX_DEPTH,
                      children=None) -> int:
    """Measure a loaded document (iteratively, each distinct list/mapping once) and raise
    ``ConfigError`` when it breaks a bound; returns its expanded node count. ``children(obj)``
    gives a container's children or None for a leaf (default: lists and dict values; a
    composed ``yaml.Node`` graph with ``_node_children``)."""
    children = children or _children
    top = children(data)
    if top is None:
        return 1
    sizes = {}  # id -> expanded size of a finished container
    active = set()  # ids of the containers on the current path
    aliases = distinct = 0
    stack = [[data, iter(top), 1]]
    active.add(id(data))
    while stack:
        frame = stack[-1]
        child = next(frame[1], _END)
        if child is _END:
            stack.pop()
            active.discard(id(frame[0]))
            sizes[id(frame[0])] = frame[2]
            distinct += 1
            if stack:
                stack[-1][2] += frame[2]
            continue
        kids = children(child)
        if kids is None:
            frame[2] += 1
            distinct += 1
            continue
        key = id(child)
        if key in active:
            raise ConfigError(where, "YAML alias refers to a node that contains it (a recursive "
                                     "document); refused")
        if key in sizes:
            aliases += 1
            frame[2] += sizes[key]
            if aliases > max_aliases:
                raise ConfigError(where, f"YAML uses more than {max_aliases} aliases (*name); "
                                         "refused as a possible alias bomb")
            expansion = _expanded_so_far(stack) - distinct
            if expansion > max_alias_nodes:
                raise ConfigError(where, f"YAML aliases expand the document by more than "
                                         f"{max_alias_nodes:,} nodes (after {aliases} aliases); "
                                         "refused as an alias bomb")
            continue
        if len(stack) >= max_depth:
            raise ConfigError(where, f"YAML nested deeper than {max_depth} levels; refused")
        active.add(key)
        stack.append([child, iter(kids), 1])
    return sizes[id(data)]


def check_unique_keys(node, where: str, *, construct=None) -> None:
    """Raise ``ConfigError(where, "line N: key 'k' given twice ...")`` for a mapping of
    the composed ``node`` graph (walked iteratively, each node once) that holds a scalar key
    twice: two keys that load as one Python key (``cosine`` and ``"cosine"``, ``1``, ``0x1``,
    ``1.0`` and ``true``; not ``1`` and ``"1"``, which load as two), or two merge keys (``<<``).
    ``construct``: builds a scalar key node's value (default: a fresh ``SafeConstructor``'s);
    a string key is its text, never built."""
    import yaml

    construct = construct or yaml.constructor.SafeConstructor().construct_object
    seen_nodes = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if current.id == "scalar" or id(current) in seen_nodes:
            continue
        seen_nodes.add(id(current))
        if current.id == "sequence":
            stack.extend(current.value)
            continue
        first = {}
        for key, value in current.value:
            stack.append(value)
            if key.id != "scalar":
                stack.append(key)
                continue
            loaded = _key_value(key, construct)
            earlier = first.get(loaded)
            line = key.start_mark.line + 1
            if earlier is not None:
                raise ConfigError(where, _twice(key, line, earlier, loaded, value.id))
            first[loaded] = (line, value.id, key.value)


_SPEC_MERGING: dict = {}


def spec_merging(cls):
    """``cls`` (a safe PyYAML loader class) whose mappings merge (``<<``) as the YAML merge
    spec has it, whatever the installed PyYAML does: a mapping's own keys over merged ones, of
    a ``<<: [*a, *b]`` list the first over later ones, nested merges flattened first. PyYAML
    6.0.3 did so; 6.0.4 drops a repeated merged key by whether the two key strings are one
    object, so a suite's ``{<<: *strict}`` whose ``strict`` merged ``{y: 0.9}`` and set
    ``y: 0.999`` itself loaded 0.999 under 6.0.3 and 0.9 under 6.0.4, and ``<<: [*d, *m]``
    both giving ``threshold`` loaded the first under one and the last under the other (the
    clean-clone CI, and reviews): a test's threshold depended on the PyYAML installed."""
    if cls not in _SPEC_MERGING:
        _SPEC_MERGING[cls] = type(f"SpecMerging{cls.__name__}", (cls,),
                                  {"flatten_mapping": _flatten_mapping})
    return _SPEC_MERGING[cls]


def _flatten_mapping(self, node) -> None:
    """``node``'s merge keys replaced by the pairs they merge, placed before its own pairs so
    that later pairs win when the mapping is built: own keys last, and of a ``<<`` list the
    first mapping's pairs after the others'."""
    from yaml.constructor import ConstructorError
    from yaml.nodes import MappingNode, SequenceNode

    merged, index = [], 0
    while index < len(node.value):
        key, value = node.value[index]
        if key.tag == "tag:yaml.org,2002:merge":
            del node.value[index]
            sources = value.value if isinstance(value, SequenceNode) else [value]
            parts = []
            for source in sources:  # PyYAML's own messages, for a list entry and otherwise
                if not isinstance(source, MappingNode):
                    what = ("a mapping" if isinstance(value, SequenceNode)
                            else "a mapping or list of mappings")
                    raise ConstructorError("while constructing a mapping", node.start_mark,
                                           f"expected {what} for merging, but found "
                                           f"{source.id}", source.start_mark)
                self.flatten_mapping(source)
                parts.append(source.value)
            for part in reversed(parts):  # the first listed last: its values win
                merged.extend(part)
        else:
            if key.tag == "tag:yaml.org,2002:value":  # '=': a string key, as PyYAML has it
                key.tag = "tag:yaml.org,2002:str"
            index += 1
    if merged:
        node.value = merged + node.value


#: stands for a merge key (``<<``): never equal to a loaded key (a quoted "<<" is a string)
_MERGE = object()


def _key_value(key, construct):
    # str, without building it (baselines: all keys); a "=" key (tag value) too, which
    # SafeConstructor.flatten_mapping turns into a str before building (a review: it was
    # refused as "could not determine a constructor")
    if key.tag in ("tag:yaml.org,2002:str", "tag:yaml.org,2002:value"):
        return key.value
    if key.tag == "tag:yaml.org,2002:merge":
        return _MERGE
    return construct(key)


def _twice(key, line: int, earlier, loaded, value_id: str) -> str:
    """The message for ``key`` (on ``line``) given twice, first as ``earlier`` (line, value
    kind, text)."""
    on = "on the same line" if earlier[0] == line else f"first on line {earlier[0]}"
    if earlier[2] != key.value:  # 1 and 0x1, on and yes: one key once loaded
        on += f", as {earlier[2]!r}: one key once loaded"
    # two lists or two mappings (a second models:) hold what the user wants both of: removing
    # one would drop its entries, as YAML silently did
    fix = "merge them into one" if earlier[1] == value_id != "scalar" else "remove one"
    if loaded is _MERGE:  # which of two << keys wins: the last up to PyYAML 6.0.3, then not
        return (f"line {line}: key '<<' given twice in one mapping ({on}); which one wins "
                f"differs between YAML readers and versions: merge them into one list, <<: "
                f"[...], listing first the one whose values win (as the merge spec has it)")
    return (f"line {line}: key {key.value!r} given twice in one mapping ({on}); YAML would "
            f"keep the last value (the one read before this was checked) silently: {fix}")


def nesting_bound(text: str) -> int:
    """An upper bound of a YAML text's nesting depth: the deepest run of open flow brackets
    (counted everywhere, quotes and comments included), plus the widest indentation, plus the
    most ``-``, ``?`` and ``:`` on one line (compact nesting such as ``- - - x``)."""
    import numpy as np

    raw = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    step = ((raw == ord("[")) | (raw == ord("{"))).astype(np.int64) \
        - ((raw == ord("]")) | (raw == ord("}")))
    flow = int(np.cumsum(step).max(initial=0))
    lines = text.splitlines() or [""]
    indent = max(len(line) - len(line.lstrip(" ")) for line in lines)
    compact = max(line.count("-") + line.count("?") + line.count(":") for line in lines)
    return flow + indent + compact


def _expanded_so_far(stack) -> int:
    return sum(frame[2] for frame in stack)


def _children(obj):
    if isinstance(obj, dict):
        return obj.values()
    return obj if isinstance(obj, list) else None


def _node_children(node):
    """Children of a composed YAML node (keys and values of a mapping), None for a scalar."""
    if node.id == "mapping":
        return [part for pair in node.value for part in pair]
    return node.value if node.id == "sequence" else None


def fast_safe_loader(yaml) -> Optional[type]:
    """libyaml's CSafeLoader (5x faster on a 5,000-line baseline) when it is consistent with the
    ``yaml`` package, else the pure-Python SafeLoader. After ``yaml`` is imported a second time
    (pytester's in-process runs restore ``sys.modules``), the cached C extension still builds
    nodes of the first import's classes and every document fails with "could not determine a
    constructor for the tag None"."""
    c = getattr(yaml, "_yaml", None)
    if c is not None and getattr(yaml, "CSafeLoader", None) is not None and all(
            getattr(c, n, None) is getattr(yaml.nodes, n)
            for n in ("MappingNode", "SequenceNode", "ScalarNode")):
        return yaml.CSafeLoader
    return yaml.SafeLoader


__all__ = ["load_yaml", "check_yaml_bounds", "check_unique_keys", "fast_safe_loader",
           "nesting_bound", "MAX_ALIASES", "MAX_ALIAS_NODES", "MAX_DEPTH", "C_SAFE_DEPTH"]
