"""The ``atc --mode=1`` JSON of an offline model (reference §4): op order and fused-op names.

Shape (what ATC writes and msaccucmp's fusion-rule parser reads)::

    {"name": model, "graph": [{"name": g, "op": [
        {"name", "type", "id", "input": ["src:idx", ...],
         "attr": [{"key": "_datadump_original_op_names",
                   "value": {"list": {"val_type": 1, "s": [...]}}}],
         "output_desc": [{"attr": [{"key": "_datadump_origin_name", "value": {"s": ...}},
                                   {"key": "_datadump_origin_output_index", "value": {"i": 0}}]}]},
        ...]}, ...],
     "attr": [{"key": "soc_version", "value": {"s": "Ascend310P3"}}, ...]}

An op without ``_datadump_original_op_names`` stands for itself; one whose list has no ``s``
is an NPU-only op (inserted TransData/Cast) with no framework counterpart.
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


@dataclass(frozen=True)
class OmOp:
    """One op of the converted model. ``output_origins``: per output ``(name, index)`` or None."""

    name: str
    type: str
    id: int
    original_names: Tuple[str, ...] = ()
    output_origins: Tuple[Optional[Tuple[str, int]], ...] = ()
    inputs: Tuple[str, ...] = ()  # "src_op:idx" strings
    npu_only: bool = False  # the original-names attr is present but empty
    graph: str = ""


@dataclass(frozen=True)
class OmGraph:
    """The model: ``ops`` sorted by id (execution order), top-level ``attrs`` decoded."""

    name: str
    ops: Tuple[OmOp, ...]
    attrs: Dict[str, object] = field(default_factory=dict)

    @property
    def by_name(self) -> Dict[str, OmOp]:
        return {op.name: op for op in self.ops}


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
        return {"list": {"val_type": 3, "b": items}}
    if all(isinstance(v, int) for v in items) and items:
        return {"list": {"val_type": 2, "i": items}}
    return {"list": {"val_type": 1, "s": [str(v) for v in items]}}


def decode_value(value: dict):
    """An attr ``value`` object as a python value (list values as tuples)."""
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


# --------------------------------------------------------------------------- write / read
def _op_json(op: OmOp) -> dict:
    out: dict = {"name": op.name, "type": op.type, "id": int(op.id), "input": list(op.inputs)}
    if op.original_names or op.npu_only:
        lst = {"val_type": 1, "s": list(op.original_names)} if op.original_names else {}
        out["attr"] = [{"key": ORIGINAL_NAMES, "value": {"list": lst}}]
    descs = []
    for origin in op.output_origins:
        attrs = []
        if origin is not None:
            attrs = [{"key": ORIGIN_NAME, "value": {"s": origin[0]}},
                     {"key": ORIGIN_INDEX, "value": {"i": int(origin[1])}}]
        descs.append({"attr": attrs})
    if descs:
        out["output_desc"] = descs
    return out


def write_om_json(path, model_name: str, ops: Iterable[OmOp],
                  attrs: Optional[Dict[str, object]] = None) -> None:
    """Write the ``atc --mode=1`` JSON for ``ops`` (one graph named after the model, or one per
    distinct ``OmOp.graph``, main graph first)."""
    graphs: Dict[str, List[dict]] = {}
    for op in sorted(ops, key=lambda o: o.id):
        graphs.setdefault(op.graph or model_name, []).append(_op_json(op))
    if model_name not in graphs:
        graphs = {model_name: [], **graphs}
    doc = {"name": model_name,
           "graph": [{"name": g, "op": g_ops} for g, g_ops in graphs.items()],
           "attr": _attr_list(attrs or {})}
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)


def read_om_json(path) -> OmGraph:
    """Parse an om json; ops of every graph, sorted by ``id`` (file order for equal ids)."""
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
    ops: List[OmOp] = []
    for g_index, graph in enumerate(doc["graph"]):
        if not isinstance(graph, dict):
            raise DumpFormatError(path, f"graph[{g_index}] is not an object")
        gname = str(graph.get("name", ""))
        for o_index, op in enumerate(_items(graph.get("op"), f"graph[{g_index}].op", path)):
            where = f"graph[{g_index}].op[{o_index}]"
            try:
                ops.append(_read_op(op, where, gname, path))
            except DumpFormatError:
                raise
            except _SHAPE_ERRORS as exc:
                raise DumpFormatError(path, f"{where}: malformed op entry ({type(exc).__name__}: "
                                            f"{exc})") from None
    ops.sort(key=lambda o: o.id)
    try:
        attrs = _attr_dict(doc.get("attr"), "model attr", path)
    except DumpFormatError:
        raise
    except _SHAPE_ERRORS as exc:
        raise DumpFormatError(path, f"model attr: malformed ({type(exc).__name__}: {exc})") from None
    return OmGraph(str(doc.get("name", "")), tuple(ops), attrs)


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
    for k, desc in enumerate(op.get("output_desc") or ()):
        d = _attr_dict((desc or {}).get("attr"), f"{where} output_desc[{k}]", path)
        name = d.get(ORIGIN_NAME)
        origins.append((str(name), int(d.get(ORIGIN_INDEX) or 0)) if name else None)
    inputs = tuple(str(i) for i in op.get("input") or ())
    return OmOp(str(op["name"]), str(op.get("type", "")), op_id, names, tuple(origins), inputs,
                npu_only, graph)


__all__ = ["OmOp", "OmGraph", "write_om_json", "read_om_json", "encode_value", "decode_value"]
