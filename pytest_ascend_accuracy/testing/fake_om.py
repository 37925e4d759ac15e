"""FAKE ``.om`` artefacts for tests: what the fake ATC writes and the fake runtime executes.

This is **not** the Ascend offline-model format. A fake .om is a zip archive holding a marker
file, the source ONNX model and ``meta.json`` (the ATC arguments that matter: model name, soc
version, precision option and value, keep_dtype entries, fusion switches, input shapes, the
argv). Both fakes derive the same *op plan* from it, so the om json the fake ``atc --mode=1``
writes and the dumps the fake runtime writes agree, the way a real om and its dumps agree.

The plan mimics, in a deliberately small way, what ATC does to a graph:

* constant folding: a node ``graph.folded_nodes`` names at the converted input shapes (a
  constant, a shape of a known tensor, what only they feed) is computed at conversion: it
  neither runs nor dumps, and the om json holds a ``Const`` for each folded tensor an op that
  runs reads, its output's origin naming the node that made it (``fake_om_folding``);
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

The om's inputs and outputs (name, dtype, dims) are fixed at conversion, as ATC fixes them, in
``meta.json`` (``om_inputs``/``om_outputs``, ``write_fake_om``); the fake runtime's ``load``
reads them and runs nothing (aclmdlLoadFromFile runs no model). Output dims are inferred at the
converted shapes (``_converted``); one left unknown is -1, as ACL reports it (its
aclmdlGetOutputSizeByIndex is 0). An input ``--input_fp16_nodes`` names is float16 in the om
(GE ``ProcessInputFP16``: its Data node DT_FLOAT16, a Cast to the model's type after it).
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


IoSpec = Tuple[str, str, Tuple[int, ...]]  # (name, numpy dtype name, dims; -1: unknown)


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

    @property
    def fp16_inputs(self) -> Tuple[str, ...]:
        """The inputs ``--input_fp16_nodes`` names (meta's, else read from the atc command)."""
        if "input_fp16_nodes" in self.meta:
            return tuple(n for n in str(self.meta["input_fp16_nodes"] or "").split(";") if n)
        return fp16_nodes_of_cmdline(str(self.meta.get("atc_cmdline") or ""))

    def io_specs(self) -> Tuple[List[IoSpec], List[IoSpec]]:
        """The om's (inputs, outputs) as ``(name, numpy dtype name, dims)``, outputs in om
        order; dims -1 where the conversion left them unknown. An om written before they were
        recorded gets them computed as ``write_fake_om`` computes them."""
        if "om_inputs" in self.meta and "om_outputs" in self.meta:
            return ([(n, d, tuple(s)) for n, d, s in self.meta["om_inputs"]],
                    [(n, d, tuple(s)) for n, d, s in self.meta["om_outputs"]])
        return om_io_specs(self.model, self.input_shapes, self.fp16_inputs, self.output_order())

    def plan(self) -> List[FakeOmOp]:
        """The ops that run: the nodes ATC folds (``fake_om_folding``) neither run nor dump."""
        from .fake_om_folding import running_model

        switch = self.meta.get("fusion_switch")
        return plan_ops(running_model(self), fusion_enabled(switch), self.keeps)

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
    """Write the fake artefact (zip: marker, model.onnx, meta.json); the om's inputs and
    outputs (``FakeOm.io_specs``) are fixed here, at conversion, unless meta gives them."""
    path = Path(path)
    meta = dict(meta)
    if "om_inputs" not in meta or "om_outputs" not in meta:
        import onnx

        from ..graph.names import normalize_node_names

        om = FakeOm(path, onnx.load_model_from_string(onnx_bytes), meta)
        normalize_node_names(om.model.graph)  # output_order names ops as read_fake_om does
        inputs, outputs = om_io_specs(om.model, om.input_shapes, om.fp16_inputs,
                                      om.output_order())
        meta["om_inputs"] = [[n, d, list(s)] for n, d, s in inputs]
        meta["om_outputs"] = [[n, d, list(s)] for n, d, s in outputs]
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


def om_io_specs(model, input_shapes: Mapping[str, Sequence[int]], fp16_inputs: Sequence[str],
                output_names: Sequence[str]) -> Tuple[List[IoSpec], List[IoSpec]]:
    """The om's inputs and outputs as a conversion fixes them, running no input value: inputs
    at their converted shapes (float16 where ``--input_fp16_nodes`` names them), outputs (in
    ``output_names`` order) as ``_converted`` infers them, -1 for a dim left unknown and
    ``(-2,)`` (ACL's unknown rank) where no rank is known."""
    import onnx
    from onnx import helper

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    graph = probe.graph
    declared = {o.name: _dims(o) for o in graph.output}
    for value in graph.input:
        if value.name in input_shapes:
            dims = value.type.tensor_type.shape.dim
            del dims[:]
            for d in input_shapes[value.name]:
                dims.add().dim_value = int(d)
    for value in graph.output:  # inferred at the converted shapes, not the exported ones
        value.type.tensor_type.ClearField("shape")
    del graph.value_info[:]
    inferred = _converted(probe)
    known = {v.name: v for v in list(inferred.value_info) + list(inferred.output)
             + list(inferred.input)}
    for t in inferred.initializer:  # an output folded to a constant
        if t.name in output_names:
            known[t.name] = helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))

    def dtype(value) -> str:
        elem = value.type.tensor_type.elem_type
        return str(helper.tensor_dtype_to_np_dtype(elem)) if elem else "float32"

    inputs = [(v.name, "float16" if v.name in fp16_inputs else dtype(v),
               tuple(int(d) for d in input_shapes[v.name]))
              for v in graph.input if v.name in input_shapes]
    outputs = []
    for name in output_names:
        value = known.get(name)
        dims = _dims(value) if value is not None else None
        if dims is None:
            dims = declared.get(name)
        outputs.append((name, dtype(value) if value is not None else "float32",
                        dims if dims is not None else (-2,)))
    return inputs, outputs


def _converted(model, depth: int = 0):
    """``model``'s graph with its shapes inferred as a conversion without inputs has them:
    static tensors folded and static If conditions decided (``graph.inline``) in turns, then
    each If left (its condition an input's value) given its branches' shapes merged per dim,
    as GE merges them (a dim the branches disagree on, or one unknown, is -1)."""
    from onnx import shape_inference

    from ..graph.inline import inline_ifs
    from .fake_om_folding import fold_static

    for _ in range(8):
        fold_static(model)
        if not inline_ifs(model, None):
            break
    graph = model.graph
    if depth < 4:
        for node in (n for n in graph.node if n.op_type == "If"):
            merged = [_branch_shapes(model, a.g, depth) for a in node.attribute
                      if a.name in ("then_branch", "else_branch")]
            for k, out in enumerate(node.output):
                dims = [m[k] if m and k < len(m) else None for m in merged]
                if out and dims and all(d is not None and len(d) == len(dims[0]) for d in dims):
                    graph.value_info.append(_value(out, dims[0][1], [
                        d if all(o[2][j] == d for o in dims) else -1
                        for j, d in enumerate(dims[0][2])]))
    try:
        return shape_inference.infer_shapes(model, strict_mode=False, data_prop=True).graph
    except Exception:  # noqa: BLE001 -- onnx raises several types; the declared dims stay
        return graph


def _branch_shapes(model, branch, depth):
    """``[(name, elem type, dims)]`` of a branch's outputs, inferred as its own model whose
    inputs are the outer tensors it reads; None for an output of unknown rank."""
    import onnx

    from ..graph.onnx_graph import tensor_info

    outer = tensor_info(model)
    inits = {t.name: t for t in model.graph.initializer}
    made = {o for n in branch.node for o in n.output} | {t.name for t in branch.initializer}
    read = [i for n in branch.node for i in n.input if i and i not in made]
    read += [o.name for o in branch.output if o.name not in made]
    sub = onnx.ModelProto()
    sub.CopyFrom(model)
    del sub.graph.node[:], sub.graph.input[:], sub.graph.output[:], sub.graph.value_info[:]
    del sub.graph.initializer[:]
    sub.graph.node.extend(branch.node)
    sub.graph.initializer.extend(branch.initializer)
    for name in dict.fromkeys(read):
        if name in inits:
            sub.graph.initializer.append(inits[name])
        elif outer.get(name, (0, None))[1] is not None and None not in outer[name][1]:
            sub.graph.input.append(_value(name, outer[name][0], list(outer[name][1])))
        else:
            return None  # reads a tensor of unknown shape: its outputs stay unknown
    sub.graph.output.extend(onnx.ValueInfoProto(name=o.name) for o in branch.output)
    known = {v.name: v for v in list(_converted(sub, depth + 1).output)}
    shapes = []
    for o in branch.output:
        dims = _dims(known[o.name]) if o.name in known else None
        elem = known[o.name].type.tensor_type.elem_type if o.name in known else 0
        shapes.append(None if dims is None else (o.name, elem, dims))
    return shapes


def _value(name, elem, dims):
    from onnx import helper
    return helper.make_tensor_value_info(name, elem, [d if d >= 0 else None for d in dims])


def _dims(value) -> Optional[Tuple[int, ...]]:
    """A value's dims, -1 for one not fixed; None when it has no shape (unknown rank)."""
    tensor = value.type.tensor_type
    if not tensor.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim)


def fp16_nodes_of_cmdline(cmdline: str) -> Tuple[str, ...]:
    """The node names of ``--input_fp16_nodes`` in an atc command line (``=`` or space form)."""
    words = cmdline.split()
    for k, word in enumerate(words):
        name, sep, value = word.partition("=")
        if name.lstrip("-") != "input_fp16_nodes" or not word.startswith("-"):
            continue
        if not sep:
            value = words[k + 1] if k + 1 < len(words) and not words[k + 1].startswith("-") else ""
        return tuple(n for n in value.strip("\"'").split(";") if n)
    return ()
