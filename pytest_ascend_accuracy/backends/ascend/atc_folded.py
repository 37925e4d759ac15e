"""The golden ops an ATC conversion folded away, for a run's ``meta["folded_ops"]``: the
comparison counts them "folded at conversion" (``compare.matching``), as the emulator's run has
them counted, not "unmatched golden op", and an ``ignore``/``per_op`` entry naming one is
refused with that reason.

Only what the conversion shows, never a guess: an op listed here that ran on the device and
went unmatched would be hidden as folded. ATC folds a node whose inputs are all constant
where it can compute it on the host (GE's constant folding: with a host CPU kernel for the op,
``--oo_constant_folding`` not off), so ``graph.folded_nodes`` (every static node, the rule the
emulator folds by) is no list of what ATC folded. What is sure:

- the om json's ``Const`` ops that name, as their output's origin, a framework op no running
  op names (``dump.om_folded.const_origins``: real ATC 6.0 tdnn ``Cast_311``);
- the model's ONNX ``Constant`` nodes (not a graph output): ATC's ONNX parser makes each a
  constant op (``Ascend/parser`` ``parser/onnx/onnx_constant_parser.cc``), in the model a
  ``Const`` of GE's local op store (``DNN_VM_GE_LOCAL_OP_STORE`` in the real files' ``Const``
  attrs) that gets no task (the real tdnn file's ``task_index_op_name`` names none
  of its 47 ``Const``s): it never runs or dumps. One a fused op lists among its
  original names (tdnn ``Constant_361`` in ``BatchNormalization_365_BNInferenceD``) is counted
  inside that op first (``matching`` counts as folded only ops it did not match).

A folded op whose value only another folded op read (a ``Constant`` -> ``Cast`` -> ``Cast``
chain's first ``Cast``) is in no ``Const``: it stays "unmatched".
"""
from __future__ import annotations

import os
from typing import List


def atc_folded_ops(om_json, model) -> List[str]:
    """The golden ops the conversion whose om json is ``om_json`` (a path) folded, of the ONNX
    model ``model`` (a path) the golden is run from (see the module docstring)."""
    from ...dump.om_folded import const_origins
    from ...dump.om_json import read_om_json
    from ...errors import DumpFormatError

    try:
        shown = const_origins(read_om_json(om_json))
    except DumpFormatError:  # (load_dump read it: reading it again fails alike, named there)
        shown = ()
    return list(dict.fromkeys((*shown, *constant_nodes(model))))


def constant_nodes(model) -> List[str]:
    """The ``Constant`` nodes of ``model``'s main graph that are no graph output, named as the
    golden names them (``graph.names.normalize_node_names``, which ``prepare_model`` applies);
    none where the model cannot be read."""
    from ...errors import AscendAccuracyError
    from ...graph.names import normalize_node_names
    from ...graph.onnx_graph import load_model

    try:
        proto = load_model(os.fspath(model), weights=False)
    except (AscendAccuracyError, OSError, ValueError):
        return []
    normalize_node_names(proto.graph)
    outputs = {o.name for o in proto.graph.output}
    return [n.name for n in proto.graph.node
            if n.op_type == "Constant" and n.domain in ("", "ai.onnx")
            and not any(o in outputs for o in n.output)]
