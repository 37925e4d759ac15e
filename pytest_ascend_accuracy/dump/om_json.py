"""The ``atc --mode=1`` JSON of an offline model (docs/formats.md §4): ops, fused names, sub-graphs.

Shape (what ATC writes and msaccucmp's fusion-rule parser reads; checked against real ATC 5.1
and 6.0 files, see docs/ascend_backend.md)::

    {"name": model, "graph": [{"name": g, "op": [
        {"name", "type", "id", "input": ["src:idx", "ctrl:-1", ""], "subgraph_name": [...],
         "attr": [{"key": "_datadump_original_op_names",
                   "value": {"list": {"val_type": "VT_LIST_STRING", "s": [...]}}}],
         "output_desc": [{"dtype": "DT_FLOAT16", "layout": "NC1HWC0", "shape": {"dim": [...]},
                          "attr": [{"key": "_datadump_origin_name", "value": {"s": ...}},
                                   {"key": "_datadump_origin_output_index", "value": {"i": 0}},
                                   {"key": "origin_shape", "value": {"list": {"i": [...]}}},
                                   {"key": "origin_format", "value": {"s": "NCHW"}}, ...]}]},
        ...]}, ...],
     "attr": [{"key": "attr_model_out_nodes_name", "value": {"list": {"s": ["Cast_1:0:out"]}}},
              {"key": "soc_version", "value": {"s": "Ascend310P3"}}, ...]}

An op without ``_datadump_original_op_names`` stands for itself; one whose list has no ``s`` is
NPU-only (an inserted TransData/Cast, a folded Const) with no framework counterpart of its own.
Real files also carry enum-name ``val_type`` strings, ``null`` attr values, no ``id`` for id 0
(proto3 JSON omits zeros) and ``""`` inputs; all are read. What the origins *mean* (and when
they are wrong) is ``om_pairing``'s business; this module only reads and writes the file.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from ..errors import DumpFormatError

ORIGINAL_NAMES = "_datadump_original_op_names"
ORIGIN_NAME = "_datadump_origin_name"
ORIGIN_INDEX = "_datadump_origin_output_index"
ORIGIN_FORMAT = "_datadump_origin_format"
OUT_NODES = "attr_model_out_nodes_name"
SUBGRAPH_NAME = "subgraph_name"
#: enum names ATC writes for ``list.val_type`` (proto ``ListValueType``)
_VAL_TYPE = {"s": "VT_LIST_STRING", "i": "VT_LIST_INT", "f": "VT_LIST_FLOAT",
             "b": "VT_LIST_BOOL"}

Shape = Tuple[int, ...]


@dataclass(frozen=True)
class OmTensorDesc:
    """One output desc as ATC writes it: device ``dtype``/``layout``/``shape`` and the
    framework's ``origin_shape``/``origin_format`` (``None``/``""`` when not written)."""

    dtype: str = ""  # "DT_FLOAT16"
    layout: str = ""  # device format: "NC1HWC0", "FRACTAL_NZ", "ND", ...
    shape: Optional[Shape] = None
    origin_shape: Optional[Shape] = None
    origin_format: str = ""


@dataclass(frozen=True)
class OmOp:
    """One op of the converted model. ``output_origins``: per output ``(name, index)`` or None;
    ``output_descs``: per output an ``OmTensorDesc`` (empty when the file has none);
    ``subgraphs``: names of the graphs this op runs (If/Case/While branches, PartitionedCall)."""

    name: str
    type: str
    id: int
    original_names: Tuple[str, ...] = ()
    output_origins: Tuple[Optional[Tuple[str, int]], ...] = ()
    inputs: Tuple[str, ...] = ()  # "src_op:idx" strings, as written (":-1" control, "" none)
    npu_only: bool = False  # the original-names attr is present but empty
    graph: str = ""
    output_descs: Tuple[Optional[OmTensorDesc], ...] = ()
    subgraphs: Tuple[str, ...] = ()

    @property
    def data_inputs(self) -> Tuple[Tuple[str, int], ...]:
        """``(producer, output index)`` of each data input: control edges (``x:-1``) and empty
        entries dropped, as msaccucmp's fusion-rule parser does."""
        out = []
        for item in self.inputs:
            src, sep, idx = item.rpartition(":")
            if not item or not sep or not src or idx == "-1":
                continue
            try:
                out.append((src, int(idx)))
            except ValueError:
                continue
        return tuple(out)


@dataclass(frozen=True)
class ModelOutput:
    """Output ``i`` of the om model per ``attr_model_out_nodes_name``: the framework node and
    output index producing it and the framework graph-output name (``Cast_1219:0:output0``)."""

    node: str
    index: int
    name: str


@dataclass(frozen=True)
class OmGraph:
    """The model: ``ops`` in execution order (main graph by ``id``, each sub-graph's ops right
    after the op that runs it), top-level ``attrs`` decoded, graph names in file order."""

    name: str
    ops: Tuple[OmOp, ...]
    attrs: Dict[str, object] = field(default_factory=dict)
    graphs: Tuple[str, ...] = ()

    @property
    def by_name(self) -> Dict[str, OmOp]:
        return {op.name: op for op in self.ops}

    @property
    def sub_graphs(self) -> Tuple[str, ...]:
        """Names of sub-graphs (every graph after the first, and any an op names in
        ``subgraph_name``): ATC builds them as models of their own, dumped under their own
        model-name directories (msit lists them in acl.json's dump_list)."""
        named = [s for op in self.ops for s in op.subgraphs]
        rest = list(self.graphs[1:]) + [s for s in named if s not in self.graphs]
        return tuple(dict.fromkeys(rest))

    @property
    def model_outputs(self) -> Tuple[ModelOutput, ...]:
        return om_framework_outputs(self)


def om_framework_outputs(graph: OmGraph) -> Tuple[ModelOutput, ...]:
    """Om output ``i`` -> framework output, from ``attr_model_out_nodes_name`` (entries
    ``node:index:name``; older ATC writes ``node:index``, the name is then ``node:index``).
    Empty when the file has no such attr. Om outputs follow this list, not ONNX graph.output
    order (real ATC 5.1 file: om output 1 is the framework's ``output2``). GE writes the tensor
    name as the framework spells it (``SetOutputNameAttr``: node + ":" + index + ":" + name),
    so the name may hold ``:`` itself (tf2onnx's ``Identity:0``): an entry is split at the
    first ``:<digits>:`` whose node is an op of this json, else at the first one."""
    raw = graph.attrs.get(OUT_NODES) or ()
    if isinstance(raw, str):
        raw = (raw,)
    out = []
    for entry in raw:
        entry = str(entry)
        splits = _node_index_name_splits(entry)
        if splits:
            known = [s for s in splits if s[0] in graph.by_name]
            out.append(ModelOutput(*(known or splits)[0]))
        elif ":" in entry and _is_int(entry.rpartition(":")[2]):
            node, _, index = entry.rpartition(":")
            out.append(ModelOutput(node, int(index), entry))
        else:
            out.append(ModelOutput(entry, 0, entry))
    return tuple(out)


def _node_index_name_splits(entry: str) -> List[Tuple[str, int, str]]:
    """Every reading of ``entry`` as ``node:index:name`` (index an integer, node and name not
    empty), leftmost first."""
    parts = entry.split(":")
    return [(":".join(parts[:k]), int(parts[k]), ":".join(parts[k + 1:]))
            for k in range(1, len(parts) - 1)
            if _is_int(parts[k]) and ":".join(parts[:k]) and ":".join(parts[k + 1:])]


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit()


# --------------------------------------------------------------------------- attr values
def encode_value(value) -> dict:
    """A python value as an om-json attr ``value`` object."""
    if isinstance(value, bool):
        return {"b": value}
    if isinstance(value, int):
        return {"i": value}
    if isinstance(value, float):
        return {"f": value}
    if isinstance(value, str):
        return {"s": value}
    items = list(value)
    if all(isinstance(v, bool) for v in items) and items:
        return {"list": {"val_type": _VAL_TYPE["b"], "b": items}}
    if all(isinstance(v, int) for v in items) and items:
        return {"list": {"val_type": _VAL_TYPE["i"], "i": items}}
    return {"list": {"val_type": _VAL_TYPE["s"], "s": [str(v) for v in items]}}


def decode_value(value: dict):
    """An attr ``value`` object as a python value (list values as tuples; ``null`` -> None)."""
    if not isinstance(value, dict):
        return value
    for k in ("s", "i", "f", "b"):
        if k in value:
            v = value[k]
            return int(v) if k == "i" else v
    if "list" in value:
        lst = value["list"] or {}
        for k in ("s", "i", "f", "b"):
            if k in lst:
                return tuple(int(v) for v in lst[k]) if k == "i" else tuple(lst[k])
        return ()
    return None


def _attr_list(attrs: Dict[str, object]) -> List[dict]:
    return [{"key": k, "value": encode_value(v)} for k, v in attrs.items()]


def _attr_dict(items, where: str, path) -> Dict[str, object]:
    out = {}
    for item in items or ():
        if not isinstance(item, dict) or "key" not in item:
            raise DumpFormatError(path, f"{where}: attr entry without 'key': {item!r:.80}")
        try:
            out[item["key"]] = decode_value(item.get("value", {}))
        except (TypeError, ValueError) as exc:
            raise DumpFormatError(path, f"{where}: bad value of attr {item['key']!r}: {exc}") \
                from None
    return out


# --------------------------------------------------------------------------- write
def _desc_json(origin, desc: Optional[OmTensorDesc]) -> dict:
    out: dict = {}
    attrs = []
    if desc is not None:
        if desc.dtype:
            out["dtype"] = desc.dtype
        if desc.layout:
            out["layout"] = desc.layout
        if desc.shape is not None:
            out["shape"] = {"dim": [int(d) for d in desc.shape]} if desc.shape else {}
        if desc.origin_format:
            attrs.append({"key": "origin_format", "value": {"s": desc.origin_format}})
        if desc.origin_shape is not None:
            attrs.append({"key": "origin_shape", "value": {"list": {
                "i": [int(d) for d in desc.origin_shape], "val_type": _VAL_TYPE["i"]}}})
    if origin is not None:
        attrs += [{"key": ORIGIN_NAME, "value": {"s": origin[0]}},
                  {"key": ORIGIN_INDEX, "value": {"i": int(origin[1])}}]
        if desc is not None and desc.origin_format:
            attrs.append({"key": ORIGIN_FORMAT, "value": {"s": desc.origin_format}})
    out["attr"] = attrs
    return out


def _op_json(op: OmOp) -> dict:
    out: dict = {"name": op.name, "type": op.type, "id": int(op.id), "input": list(op.inputs)}
    if op.original_names or op.npu_only:
        lst: dict = {"val_type": _VAL_TYPE["s"]}
        if op.original_names:
            lst["s"] = list(op.original_names)
        out["attr"] = [{"key": ORIGINAL_NAMES, "value": {"list": lst}}]
    if op.subgraphs:
        out[SUBGRAPH_NAME] = list(op.subgraphs)
    n = max(len(op.output_origins), len(op.output_descs))
    descs = [_desc_json(op.output_origins[k] if k < len(op.output_origins) else None,
                        op.output_descs[k] if k < len(op.output_descs) else None)
             for k in range(n)]
    if descs:
        out["output_desc"] = descs
    return out


def write_om_json(path, model_name: str, ops: Iterable[OmOp],
                  attrs: Optional[Dict[str, object]] = None) -> None:
    """Write the ``atc --mode=1`` JSON for ``ops`` (one graph named after the model, or one per
    distinct ``OmOp.graph``, main graph first). Per output it writes what ATC writes: the
    origin attrs, and with an ``OmTensorDesc`` the device ``dtype``/``layout``/``shape`` and
    ``origin_shape``/``origin_format`` (``_datadump_origin_format`` next to an origin). An
    NPU-inserted op is ``OmOp(..., npu_only=True)``; give it ``output_origins`` naming its
    consumer to write what real ATC writes for TransData before a Conv. ``attrs`` may hold
    ``attr_model_out_nodes_name`` as a list of ``"node:index:name"`` strings."""
    ops = sorted(ops, key=lambda o: o.id)
    named = {s for op in ops for s in op.subgraphs}
    mains = [op.graph or model_name for op in ops if (op.graph or model_name) not in named]
    graphs: Dict[str, List[dict]] = {mains[0] if mains else model_name: []}
    for op in ops:
        graphs.setdefault(op.graph or model_name, []).append(_op_json(op))
    doc = {"name": model_name,
           "graph": [{"name": g, "op": g_ops} for g, g_ops in graphs.items()],
           "attr": _attr_list(attrs or {})}
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    # compact: json's C encoder (indent= takes the pure-Python one: 16 ms -> 2 ms for 140 ops);
    # text UTF-8 cannot hold (an AIPP file named from undecodable bytes in atc_cmdline, a
    # review) as \\udcff, a JSON escape, which reads back as the same text
    tmp.write_text(json.dumps(doc, separators=(",", ":"), ensure_ascii=False), encoding="utf-8",
                   errors="backslashreplace")
    tmp.replace(path)


# --------------------------------------------------------------------------- read
def read_om_json(path) -> OmGraph:
    """Parse an om json: ops of every graph in execution order (see ``OmGraph``)."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DumpFormatError(path, f"cannot read om json: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise DumpFormatError(path, f"not valid JSON: {exc}") from None
    except RecursionError:
        raise DumpFormatError(path, "not valid JSON: nested too deeply") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("graph"), list):
        raise DumpFormatError(path, "not an atc --mode=1 model json: no 'graph' list")
    per_graph: Dict[str, List[OmOp]] = {}
    for g_index, graph in enumerate(doc["graph"]):
        if not isinstance(graph, dict):
            raise DumpFormatError(path, f"graph[{g_index}] is not an object")
        gname = str(graph.get("name", ""))
        ops = per_graph.setdefault(gname, [])
        for o_index, op in enumerate(_items(graph.get("op"), f"graph[{g_index}].op", path)):
            where = f"graph[{g_index}].op[{o_index}]"
            try:
                ops.append(_read_op(op, where, gname, path))
            except DumpFormatError:
                raise
            except _SHAPE_ERRORS as exc:
                raise DumpFormatError(path, f"{where}: malformed op entry ({type(exc).__name__}: "
                                            f"{exc})") from None
    try:
        attrs = _attr_dict(doc.get("attr"), "model attr", path)
    except DumpFormatError:
        raise
    except _SHAPE_ERRORS as exc:
        raise DumpFormatError(path, f"model attr: malformed ({type(exc).__name__}: {exc})") from None
    return OmGraph(str(doc.get("name", "")), _execution_order(per_graph), attrs,
                   tuple(per_graph))


def _execution_order(per_graph: Dict[str, List[OmOp]]) -> Tuple[OmOp, ...]:
    """Main graph (the first) sorted by id; each sub-graph's ops (sorted by their own ids)
    right after the op naming it in ``subgraph_name``; unreferenced graphs last."""
    names = list(per_graph)
    if not names:
        return ()
    placed, out = set(), []

    def emit(gname: str) -> None:
        placed.add(gname)
        for op in sorted(per_graph[gname], key=lambda o: o.id):
            out.append(op)
            for sub in op.subgraphs:
                if sub in per_graph and sub not in placed:
                    emit(sub)

    emit(names[0])
    for gname in names[1:]:
        if gname not in placed:
            emit(gname)
    return tuple(out)


#: what a JSON value of the wrong kind raises while an op entry is read (a number where a list
#: belongs, a string where an object belongs, an id of Infinity); found by the reliability fuzz
#: suite, all reported as DumpFormatError naming the entry
_SHAPE_ERRORS = (TypeError, AttributeError, ValueError, OverflowError)


def _items(value, where: str, path) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise DumpFormatError(path, f"{where} must be a list, got {type(value).__name__}")
    return value


def _dims(value) -> Optional[Shape]:
    if isinstance(value, dict):
        value = value.get("dim", ())
    if value is None:
        return None
    return tuple(int(d) for d in value)


def _read_desc(desc: dict, attrs: Dict[str, object]) -> Optional[OmTensorDesc]:
    fmt = attrs.get("origin_format") or attrs.get(ORIGIN_FORMAT) or ""
    origin_shape = attrs.get("origin_shape")
    if not any(k in desc for k in ("dtype", "layout", "shape")) and not fmt \
            and origin_shape is None:
        return None
    return OmTensorDesc(str(desc.get("dtype") or ""), str(desc.get("layout") or ""),
                        _dims(desc.get("shape")) if "shape" in desc else None,
                        tuple(int(d) for d in origin_shape) if origin_shape is not None else None,
                        str(fmt))


def _read_op(op, where: str, graph: str, path) -> OmOp:
    if not isinstance(op, dict) or "name" not in op:
        raise DumpFormatError(path, f"{where}: op without a name")
    where = f"{where} ({op['name']})"
    try:
        op_id = int(op.get("id", 0))
    except (TypeError, ValueError, OverflowError):
        raise DumpFormatError(path, f"{where}: id {op.get('id')!r} is not an integer") from None
    attrs = _attr_dict(op.get("attr"), where, path)
    npu_only = False
    names: Tuple[str, ...] = ()
    if ORIGINAL_NAMES in attrs:
        names = tuple(str(n) for n in (attrs[ORIGINAL_NAMES] or ()) if n != "")
        npu_only = not names
    origins: List[Optional[Tuple[str, int]]] = []
    descs: List[Optional[OmTensorDesc]] = []
    for k, desc in enumerate(op.get("output_desc") or ()):
        desc = desc or {}
        d = _attr_dict(desc.get("attr"), f"{where} output_desc[{k}]", path)
        name = d.get(ORIGIN_NAME)
        # no index attr: the desc's own position, as msaccucmp's default_index
        # (fusion_rule_parser._parse_output_desc); present but empty ({}: proto3 JSON leaves
        # out a zero) is 0
        index = int(d.get(ORIGIN_INDEX) or 0) if ORIGIN_INDEX in d else k
        origins.append((str(name), index) if name else None)
        try:
            descs.append(_read_desc(desc, d))
        except _SHAPE_ERRORS as exc:
            raise DumpFormatError(path, f"{where} output_desc[{k}]: bad shape ({exc})") from None
    inputs = tuple(str(i) for i in op.get("input") or ())
    # GE writes a removed instance as "" (OpDesc::RemoveSubgraphInstanceName): no graph, and
    # no model a dump_list may name (H108); anything but a list of strings names none either
    subgraphs = op.get(SUBGRAPH_NAME) or ()
    subgraphs = (subgraphs,) if isinstance(subgraphs, str) else (
        tuple(subgraphs) if isinstance(subgraphs, list) else ())
    subgraphs = tuple(s for s in subgraphs if isinstance(s, str) and s)
    return OmOp(str(op["name"]), str(op.get("type", "")), op_id, names, tuple(origins), inputs,
                npu_only, graph, tuple(descs) if any(descs) else (), subgraphs)


__all__ = ["OmOp", "OmGraph", "OmTensorDesc", "ModelOutput", "om_framework_outputs",
           "write_om_json", "read_om_json", "encode_value", "decode_value"]
