"""Naming the outputs of an .om run by the ONNX outputs they stand for.

ATC does not keep ONNX ``graph.output`` order: the om json's model attr
``attr_model_out_nodes_name`` lists om output ``i`` as ``node:index:name`` (read by
``dump.om_json.om_framework_outputs``), and in a real ATC 5.1 file om output 1 is the framework's
``output2`` (msit's ``msquickcmp/om/model.json``). So om output ``i`` is named:

1. ``name`` when it is an ONNX graph output;
2. else (older ATC writes ``node:index`` only) the ONNX graph output produced by output
   ``index`` of ONNX node ``node``;
3. else the attr's own text (an ``--out_nodes`` output that is no ONNX graph output).

Without the attr (an om json from a tool that does not write it), ONNX ``graph.output`` order is
the only information there is and is used. A count that disagrees with the outputs of the run is
a DumpFormatError naming the om json.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from ...errors import DumpFormatError


def om_output_names(om_json: Optional[Path], onnx_outputs: Sequence[str], count: int,
                    source_model: "str | os.PathLike[str] | None" = None) -> List[str]:
    """Names for the ``count`` outputs of one run (see the module docstring); ``source_model``
    (the ONNX file) is read only for entries written as ``node:index``."""
    entries = _model_outputs(om_json)
    if not entries:
        names = list(onnx_outputs)
        if len(names) != count:
            names = names[:count] + [f"output_{i}" for i in range(len(names), count)]
        return names
    if len(entries) != count:
        raise DumpFormatError(om_json, f"attr_model_out_nodes_name lists {len(entries)} output(s) but "
                                       f"the model produced {count}")
    known = set(onnx_outputs)
    producers: Optional[Dict[Tuple[str, int], str]] = None
    names = []
    for node, index, name in entries:
        if name not in known and producers is None:
            producers = onnx_output_producers(source_model) if source_model else {}
        names.append(name if name in known else producers.get((node, index), name))
    return names


def onnx_output_producers(model: "str | os.PathLike[str]") -> Dict[Tuple[str, int], str]:
    """(node name, output index) -> graph output name, for the ONNX graph outputs of ``model``."""
    import onnx

    proto = onnx.load(os.fspath(model), load_external_data=False)
    outputs = {o.name for o in proto.graph.output}
    return {(node.name, k): out for node in proto.graph.node for k, out in enumerate(node.output)
            if out in outputs}


def _model_outputs(om_json: Optional[Path]) -> List[Tuple[str, int, str]]:
    if om_json is None or not Path(om_json).is_file():
        return []
    from ...dump.om_json import om_framework_outputs, read_om_json

    return [(m.node, m.index, m.name) for m in om_framework_outputs(read_om_json(om_json))]
