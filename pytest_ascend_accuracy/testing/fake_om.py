"""FAKE ``.om`` artefacts for tests: what the fake ATC writes and the fake runtime executes.

This is **not** the Ascend offline-model format. A fake .om is a zip archive holding a marker
file, the source ONNX model and ``meta.json`` (the ATC arguments that matter: model name, soc
version, precision option and value, keep_dtype entries, fusion switches, input shapes, the
argv). Both fakes derive the same *op plan* from it, so the om json the fake ``atc --mode=1``
writes and the dumps the fake runtime writes agree, the way a real om and its dumps agree.

The plan mimics, in a deliberately small way, what ATC does to a graph:

* one fusion rule, ``FakeConvReluFusionPass`` (a GraphFusion rule): a Conv/Gemm/MatMul/Add/
  BatchNormalization node whose only output feeds exactly one Relu (and is not a graph output)
  becomes one op named after the first node, listing both original names; its output stands for
  the Relu's output. A fusion switch file with GraphFusion ``ALL: off`` or that rule ``off``
  disables it;
* storage dtype per op from the precision mode (fp16 modes store float tensors as float16,
  ``allow_fp32_to_fp16`` only for cube ops, ``origin``/``must_keep_origin_dtype`` and the fp32
  modes keep float32; keep_dtype entries keep float32). Values are computed in float32 by
  onnxruntime and only *stored* in the chosen dtype: this is not a numerics model (the CPU
  emulator backend is).
* keep_dtype as ATC applies it to a Cube op and its Relu (a UBFusion on real ATC, whatever
  section the fake's switch sits in): each node is judged on its own before that fusion, so a
  kept node and one not kept are not fused (a Cast stands between them) and a fused op is kept
  only as a whole (docs/formats.md, "keep_dtype and fusion").
"""
from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

MARKER_NAME = "FAKE_OM"
MARKER_TEXT = "pytest-ascend-accuracy fake om: NOT an Ascend offline model (tests only)\n"
FUSION_RULE = "FakeConvReluFusionPass"
FUSABLE_TYPES = ("Conv", "Gemm", "MatMul", "Add", "BatchNormalization")
CUBE_TYPES = ("Conv", "ConvTranspose", "Gemm", "MatMul")
_FP16_MODES = {"force_fp16", "fp16", "allow_mix_precision", "allow_mix_precision_fp16", "mixed_float16"}
_CUBE_FP16_MODES = {"allow_fp32_to_fp16"}
_KEEP_IGNORED = {"must_keep_origin_dtype", "origin"}


@dataclass(frozen=True)
class FakeOmOp:
    """One op of the fake converted graph (possibly a fusion of several ONNX nodes)."""

    name: str
    type: str
    members: Tuple[str, ...]          # ONNX node names it covers, in order
    inputs: Tuple[str, ...]           # ONNX tensor names consumed from outside the group
    outputs: Tuple[str, ...]          # ONNX tensor names it produces (the last member's)
    output_origins: Tuple[Tuple[str, int], ...]  # per output: (original node, output index)


@dataclass
class FakeOm:
    """A loaded fake .om: the ONNX model (names normalised) and the conversion metadata."""

    path: Path
    model: object  # onnx.ModelProto
    meta: Dict[str, object]

    @property
    def model_name(self) -> str:
        return str(self.meta["model_name"])

    @property
    def precision(self) -> str:
        return str(self.meta.get("precision_value") or "force_fp16")

    @property
    def keep_dtype(self) -> Tuple[str, ...]:
        return tuple(self.meta.get("keep_dtype") or ())

    @property
    def input_shapes(self) -> Dict[str, Tuple[int, ...]]:
        return {k: tuple(v) for k, v in dict(self.meta.get("input_shapes") or {}).items()}

    def plan(self) -> List[FakeOmOp]:
        return plan_ops(self.model, fusion_enabled(self.meta.get("fusion_switch")), self.keeps)

    def keeps(self, name: str, onnx_type: str) -> bool:
        """Whether the keep_dtype entries keep this node (by name, or by the type ATC's parser
        gives it); none under ``must_keep_origin_dtype``/``origin``, where ATC ignores them."""
        from ..core.ascend_optypes import node_parser_type, parser_type

        if self.precision in _KEEP_IGNORED:
            return False
        kept = self.keep_dtype
        node = next((n for n in self.model.graph.node if n.name == name), None)
        # by the node where there is one: a nearest Resize parses as ResizeNearestNeighborV2
        typ = node_parser_type(node) if node is not None else parser_type(onnx_type)
        return name in kept or f"OpType::{typ}" in kept

    def output_nodes(self) -> List[Tuple[str, int, str]]:
        """The om's outputs in om order, as (producing op, its output index, ONNX output name):
        what ATC writes into the om json's ``attr_model_out_nodes_name`` (``op:index:name``).
        Like real ATC (msit's model.json: om output 1 is the framework's ``output2``), the om
        orders outputs by where their producer runs, not by ONNX ``graph.output``."""
        where: Dict[str, Tuple[int, int, str]] = {}
        for k, op in enumerate(self.plan()):
            for j, out in enumerate(op.outputs):
                where[out] = (k, j, op.name)
        graph_inputs = set(graph_input_names(self.model))
        nodes = []
        for position, out in enumerate(o.name for o in self.model.graph.output):
            k, j, op = where.get(out, (-1, 0, out if out in graph_inputs else "?"))
            nodes.append(((k, j, position), (op, j, out)))
        return [node for _, node in sorted(nodes)]

    def output_order(self) -> List[str]:
        """ONNX output names in om output order."""
        return [name for _, _, name in self.output_nodes()]

    def storage_dtype(self, op: FakeOmOp) -> str:
        """float16 or float32: how this op's float tensors are stored in its dump."""
        # a fused op's members are all kept or none (plan_ops): its first member tells
        if self.keeps(op.name, op.type):
            return "float32"
        if self.precision in _FP16_MODES:
            return "float16"
        if self.precision in _CUBE_FP16_MODES and op.type in CUBE_TYPES:
            return "float16"
        return "float32"


def write_fake_om(path: "str | Path", onnx_bytes: bytes, meta: Mapping[str, object]) -> Path:
    """Write the fake artefact (zip: marker, model.onnx, meta.json)."""
    path = Path(path)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(MARKER_NAME, MARKER_TEXT)
        zf.writestr("model.onnx", onnx_bytes)
        zf.writestr("meta.json", json.dumps(dict(meta), indent=1, sort_keys=True))
    return path


def read_fake_om(path: "str | Path") -> FakeOm:
    """Load a fake .om; ValueError naming the file when it is not one."""
    import onnx

    from ..graph.names import normalize_node_names

    path = Path(path)
    try:
        with zipfile.ZipFile(path) as zf:
            if zf.read(MARKER_NAME).decode() != MARKER_TEXT:
                raise ValueError(f"{path}: not a fake om (bad marker)")
            model = onnx.load_model(io.BytesIO(zf.read("model.onnx")))
            meta = json.loads(zf.read("meta.json"))
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path}: not a fake om written by the fake atc ({exc})") from exc
    normalize_node_names(model.graph)
    return FakeOm(path=path, model=model, meta=meta)


def fusion_enabled(switch: Optional[Mapping[str, object]]) -> bool:
    """Whether ``FakeConvReluFusionPass`` runs under a parsed fusion switch file."""
    if not switch:
        return True
    graph = dict(switch.get("GraphFusion") or {})
    if graph.get(FUSION_RULE) == "on":
        return True
    return graph.get("ALL") != "off" and graph.get(FUSION_RULE) != "off"


def parse_fusion_switch(text: str) -> Dict[str, Dict[str, str]]:
    """Parse a fusion switch file: JSON ``{"Switch": {"GraphFusion": {...}, "UBFusion": {...}}}``
    or the legacy one-rule-per-line ``RuleName:off`` format. ValueError when it is neither."""
    stripped = text.strip()
    if stripped.startswith("{"):
        data = json.loads(stripped)
        switch = data.get("Switch") if isinstance(data, dict) else None
        if not isinstance(switch, dict):
            raise ValueError("JSON fusion switch file needs a top-level 'Switch' object")
        out: Dict[str, Dict[str, str]] = {}
        for section, rules in switch.items():
            if section not in ("GraphFusion", "UBFusion") or not isinstance(rules, dict):
                raise ValueError(f"unknown fusion section {section!r} (GraphFusion or UBFusion)")
            for rule, value in rules.items():
                if value not in ("on", "off"):
                    raise ValueError(f"{section}.{rule} must be 'on' or 'off', got {value!r}")
            out[section] = dict(rules)
        return out
    graph: Dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        rule, sep, value = line.partition(":")
        if not sep or value.strip() not in ("on", "off") or not rule.strip():
            raise ValueError(f"line {number}: expected 'RuleName:on|off', got {line!r}")
        graph[rule.strip()] = value.strip()
    return {"GraphFusion": graph}


def plan_ops(model, fusion: bool = True,
             keeps: Optional[Callable[[str, str], bool]] = None) -> List[FakeOmOp]:
    """The fake converted graph: one PlannedOp per ONNX node, or per fused pair. ``keeps(name,
    onnx_type)``: whether keep_dtype keeps a node; a kept node is not fused with one not kept."""
    def kept(node) -> bool:
        return keeps is not None and keeps(node.name, node.op_type)

    graph = model.graph
    consumers: Dict[str, List] = {}
    for node in graph.node:
        for name in node.input:
            if name:
                consumers.setdefault(name, []).append(node)
    graph_outputs = {o.name for o in graph.output}
    fused_into: Dict[str, object] = {}
    if fusion:
        for node in graph.node:
            if node.op_type not in FUSABLE_TYPES or len(node.output) != 1:
                continue
            users = consumers.get(node.output[0], [])
            if (len(users) == 1 and users[0].op_type == "Relu"
                    and node.output[0] not in graph_outputs and users[0].name not in fused_into
                    and kept(node) == kept(users[0])):
                fused_into[users[0].name] = node
    ops: List[FakeOmOp] = []
    absorbed = {n.name for n in fused_into.values()}
    for node in graph.node:
        if node.name in absorbed:
            continue
        head = fused_into.get(node.name)
        if head is not None:
            external = tuple(i for i in head.input if i) + tuple(
                i for i in node.input if i and i not in head.output)
            ops.append(FakeOmOp(
                name=head.name, type=head.op_type, members=(head.name, node.name), inputs=external,
                outputs=tuple(node.output),
                output_origins=tuple((node.name, k) for k in range(len(node.output)))))
        else:
            ops.append(FakeOmOp(
                name=node.name, type=node.op_type, members=(node.name,),
                inputs=tuple(i for i in node.input if i), outputs=tuple(node.output),
                output_origins=tuple((node.name, k) for k in range(len(node.output)))))
    return ops


def graph_input_names(model) -> List[str]:
    """Real (non-initializer) graph inputs, in order."""
    inits = {i.name for i in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in inits]


def static_input_shapes(model, overrides: Optional[Mapping[str, Sequence[int]]] = None
                        ) -> Dict[str, Tuple[int, ...]]:
    """Input shapes after ``--input_shape``; ValueError naming an input that stays dynamic."""
    overrides = dict(overrides or {})
    inits = {i.name for i in model.graph.initializer}
    shapes: Dict[str, Tuple[int, ...]] = {}
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        if inp.name in overrides:
            dims = tuple(int(d) for d in overrides.pop(inp.name))
        else:
            dims = tuple(d.dim_value if d.HasField("dim_value") else -1
                         for d in inp.type.tensor_type.shape.dim)
        if any(d < 0 for d in dims):
            raise ValueError(f"input {inp.name!r} has dynamic dims {list(dims)} and no "
                             f"--input_shape fixes them: the FAKE atc builds no dynamic-shape "
                             f"model (a real ATC builds one); give a static --input_shape")
        shapes[inp.name] = dims
    if overrides:
        raise ValueError(f"--input_shape names {sorted(overrides)} that are not model inputs")
    return shapes
