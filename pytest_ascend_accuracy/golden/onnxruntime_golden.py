"""Golden dumps: the model run by onnxruntime in float32, every node's inputs and outputs saved
(each tensor written once).

The model is prepared first (``graph.prepare.prepare_model``: node names normalised, input shapes
applied, taken ``If`` branches inlined), and onnxruntime runs it in segments
(``graph.stream``: every node output fetched, never all at once) with graph optimisations OFF so
that every node survives under its own name. Each node's outputs and inputs are written as
they come, in node order, in the ONNX
golden naming of msit (``{name}.{j}.{ts}.npy``, ``input_{name}.{i}.{ts}.npy``, docs/formats.md §7),
each as the ``.npy`` record such a file would hold, appended to one pack file that the
directory's index describes (``PACK_FILE``; ``store_golden`` writes real files from it);
an input that is another node's output is not written again but recorded in ``input_refs.csv``
(``dump.npy_dir``), so each activation is stored once and the loaded DumpSet is unchanged; a graph
input or initializer is written as its first reader's input file, and later readers refer to it;
a tensor is dropped from memory after its last consumer is written, so there is never more
than the one copy onnxruntime returned. A tensor keeps its slot's index: an omitted optional
input or output (empty name) leaves its number unused (LSTM's ``Y_h`` is output 1), as ATC's
dumps, msit and the emulator number them. A bfloat16
or float8 tensor (which ``graph.stream`` fetches through an exact Cast to float32) is written as
its float32 values: a ``.npy`` file has no such dtype (``dump.dtypes.npy_values``).

The dump lives in the cache under ``golden/<key>``, key = model bytes hash + input bytes hash
+ onnxruntime version + input_shape, and is built once per key (process-safe, see cache.py).
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Union

import numpy as np

from ..core.cache import Cache, Vouched, make_key, new_hasher
from ..dump.model import DumpSet
from ..dump.npy_index import ENTRY_NPY_DIR, INDEX_NAME
from ..dump.dtypes import UnsupportedDtype
from ..errors import BackendError, DumpFormatError
from ..graph.external import initializer_array
from ..graph.content_digests import inputs_digest, model_digest
from ..graph.inputs_mapping import require_inputs_mapping
from ..graph.onnx_graph import model_label, ort_version, parse_input_shape
from ..graph.prepare import prepare_model
from ..graph.value_kinds import refusal_text

#: bump when the layout or content of golden entries changes (2: injective op-name stems,
#: dump/golden_names.py; entries of format 1 lost ops named input_<op> or with a newline;
#: 3: an input that is another node's output is an input_refs.csv row, not a second file;
#: 4: INDEX_FILE, read instead of listing the directory and parsing every header;
#: 5: every tensor in one PACK_FILE, found through INDEX_FILE; 6: ops in an order that runs
#: for a model listed out of order, graph.prepare.sort_nodes, and unnamed nodes named as ATC
#: names them, graph.names; 7: an If decided by the input values keeps its name and outputs
#: over its inlined branch, graph.inline; 8: so does every If a conversion runs as an operator,
#: one whose condition reads the shape of an If kept for its inputs included)
GOLDEN_FORMAT = 8
DUMP_DIR = ENTRY_NPY_DIR  # (``dump.load_dump`` reads an entry as it)
#: the one file of ``DUMP_DIR`` that holds every tensor's ``.npy`` record (``NpyDumpWriter(pack=)``):
#: a golden of 600 tensors is one file created, not 600 (each costs ~0.3 ms on ext4)
PACK_FILE = "tensors.pack"
INFO_FILE = "golden.json"
#: ``dump.npy_index`` of ``DUMP_DIR``: covered by the entry's manifest like every file
INDEX_FILE = INDEX_NAME


def golden_key(model, inputs: Mapping[str, np.ndarray], input_shape=None, *,
               digest: Optional[str] = None) -> str:
    """The cache key of ``model``'s golden on ``inputs`` (``digest``: their ``inputs_digest``,
    when the caller has it: hashing a 736x736 image takes ~16 ms)."""
    shapes = parse_input_shape(input_shape)
    return make_key(kind="golden", format=GOLDEN_FORMAT, model=model_digest(model),
                    inputs=digest or inputs_digest(inputs), onnxruntime=ort_version(),
                    input_shape={k: list(v) for k, v in (shapes or {}).items()})


def golden_dump(model, inputs: Mapping[str, np.ndarray], *, cache: Cache, input_shape=None,
                wait: Union[bool, float] = True) -> Optional[DumpSet]:
    """The golden DumpSet of ``model`` on ``inputs`` (built once, then read from the cache).
    ``wait=False``: None while another process is building it (instead of waiting); a
    number: None if it still is after that many seconds.
    Its ``meta["golden_source"]`` names the model and inputs (``stored_record``): a stored
    golden written from it records them. Its ops carry the model's own names (``conv 1``, not
    the ``conv_1`` of its file names: ``graph.op_catalogue.with_real_names``), as the plugin's
    golden and the CLI print them."""
    from ..graph.batch_axis import batched_outputs
    from ..graph.op_catalogue import model_ops, with_real_names
    from .stored_record import SOURCE_META, identity_of

    require_inputs_mapping(model, inputs, f"inputs of {model_label(model)!r}")
    arrays = {k: np.asarray(v) for k, v in inputs.items()}
    digest = inputs_digest(arrays)  # once: the key and the identity a stored golden records
    key = golden_key(model, arrays, input_shape, digest=digest)
    vouched = Vouched()

    def build(tmp: Path) -> Vouched:
        run_golden(model, arrays, tmp, input_shape=input_shape, vouched=vouched)
        return vouched

    entry = cache.get_or_build("golden", key, build, wait=wait)
    if entry is None:
        return None
    dump = with_real_names(read_entry_dump(entry), model_ops(model))
    try:
        info = json.loads((entry / INFO_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        info = {}
    dump.model_name = dump.model_name or info.get("model_name")
    dump.meta.update({"backend": "golden", "onnxruntime": info.get("onnxruntime"),
                      "graph": info.get("graph", {}), "not_dumped": info.get("not_dumped", []),
                      "output_nodes": info.get("output_nodes", []),
                      "output_tensors": info.get("output_tensors", {}),
                      # outputs whose axis 0 is the batch axis: judged per sample
                      "batch_axis": batched_outputs(model, arrays),
                      "cache_entry": str(entry),
                      SOURCE_META: identity_of(model, arrays, input_shape, sha256=False,
                                               digest=digest).as_meta()})
    return dump


def read_entry_dump(entry: Path) -> DumpSet:
    """The DumpSet of a golden entry's ``npy`` directory, from its index: its tensors lie in
    one pack file, which only the index describes (without the index, a directory of ``.npy``
    files -- a build that could not index what it wrote -- is loaded as such)."""
    from ..dump.loader import load_dump
    from ..dump.npy_index import read_indexed_dir

    if (entry / INDEX_FILE).is_file():
        return read_indexed_dir(entry / DUMP_DIR, entry / INDEX_FILE)
    if (entry / DUMP_DIR / PACK_FILE).exists():
        from ..errors import DumpFormatError

        raise DumpFormatError(entry / INDEX_FILE, "missing: the golden's tensors lie in "
                                                  f"{DUMP_DIR}/{PACK_FILE}, which only this index describes")
    return load_dump(entry / DUMP_DIR)


def run_golden(model, inputs: Mapping[str, np.ndarray], directory: Path, *, input_shape=None,
               vouched: Optional[Vouched] = None) -> Dict[str, object]:
    """Run the golden model and write ``directory/npy``, its index and ``directory/golden.json``
    into ``directory``, private to this call (a cache build's temp dir: files are written in place).
    ``vouched`` receives the digests of the ``.npy`` files, hashed as they were written."""
    from ..dump.npy_writer import NpyDumpWriter
    from ..graph.onnx_graph import ort_threads_beside_writer
    from ..graph.stream import SegmentedModel

    prepared = prepare_model(model, input_shape=input_shape, inputs=inputs, weights_by_reference=True)
    proto = prepared.model
    refused = refusal_text(model_label(model), proto, kinds=("string",))  # no .npy of them
    if refused:  # (sequences are skipped, "not_dumped": the emulator refuses those models)
        raise BackendError(refused)
    graph = proto.graph
    names = [o for n in graph.node for o in n.output if o]
    model_outputs = {o.name for o in graph.output}
    # nodes producing the model's own outputs: the CSV's IsOutputNode column
    output_nodes = [n.name for n in graph.node if model_outputs & set(n.output)]
    inits = {t.name: t for t in graph.initializer}
    last_use = _last_use(graph)
    not_dumped: List[str] = []
    base_ts = int(time.time() * 1e6)
    out_dir = Path(directory) / DUMP_DIR

    def failed(exc: Exception) -> BackendError:
        from ..graph.integer_ranges import seeded_input_hint
        from ..graph.onnx_graph import load_model
        from ..graph.shared_dims import failure_context
        from ..graph.whole_run import runs_whole, segmented_failure_note

        shapes = {n: np.shape(a) for n, a in inputs.items()}
        path = str(model) if isinstance(model, (str, Path)) else None
        try:  # an index out of its table's range: the input that holds it, and what to give;
            # a seeded input the model compares with a constant: what it drew, and how to give it
            hint = seeded_input_hint(proto, str(exc), inputs, model_path=path,
                                     source=load_model(model, weights=False))
        except Exception:  # (the refusal is the error to show)
            hint = ""
        whole = "" if hint else segmented_failure_note(  # (a hint blames the inputs)
            runs_whole(proto, inputs, prepared.folder))
        return BackendError(f"onnxruntime could not run the golden model {model_label(model)!r}"
                            f"{failure_context(model, shapes)}: {exc}{hint}{whole}")

    try:
        run = SegmentedModel(proto, names, keep_sessions=False,  # runs once
                             folder=prepared.folder,
                             threads=ort_threads_beside_writer()).run(dict(inputs))
    except Exception as exc:
        raise failed(exc) from exc
    values = run.values
    written: Dict[str, Path] = {}  # tensor name -> the output file that holds it
    hasher = (lambda: new_hasher(vouched.hash)) if vouched is not None else None
    try:
        with NpyDumpWriter(out_dir, private=True, hasher=hasher, pack=PACK_FILE) as writer:
            for index, node in enumerate(graph.node):
                try:
                    run.ensure(o for o in node.output if o)
                except Exception as exc:
                    raise failed(exc) from exc
                # one entry per slot, None where there is no tensor (an omitted optional input
                # or output, ""): each tensor keeps its slot's index, as ATC's dumps and msit
                # number them (LSTM's Y_h is output 1 whether Y is there or not)
                outs: List[object] = []
                out_names = []
                for name in node.output:
                    value = values.get(name) if name else None
                    if name and not isinstance(value, np.ndarray):  # sequences/optionals
                        not_dumped.append(f"{node.name}:{name}")
                        value = None
                    outs.append(value)
                    if value is not None:
                        out_names.append(name)
                ins: List[object] = []
                stored_ins: List[str] = []  # names of the inputs written here, in order
                for name in node.input:
                    v = None
                    # another node's output, or a weight or graph input an earlier node read:
                    # referenced, not written again
                    if not name:
                        pass
                    elif name in written:
                        v = written[name]
                    elif name in values:
                        v = values[name] if isinstance(values[name], np.ndarray) else None
                    elif name in inputs:
                        v = np.asarray(inputs[name])
                    elif name in inits:
                        v = initializer_array(inits[name], prepared.folder)
                    ins.append(v)
                    if v is not None and not isinstance(v, Path):
                        stored_ins.append(name)
                try:
                    paths = writer.write_op(node.name, ins, outs, timestamp_us=base_ts + index)
                except (DumpFormatError, UnsupportedDtype) as exc:  # a value no .npy holds:
                    # named by its node, not by the cache's temporary file it was going to
                    raise BackendError(f"golden of {model_label(model)!r}: node {node.name!r} "
                                       f"({node.op_type}): "
                                       f"{getattr(exc, 'problem', exc)}") from None
                # outputs come first in the written paths, then the inputs written (not referred)
                written.update(zip(out_names, paths))
                for name, path in zip(stored_ins, paths[len(out_names):]):
                    written.setdefault(name, path)
                del ins, outs
                for name in list(node.input) + list(node.output):
                    if name in values and last_use.get(name, -1) <= index:
                        del values[name]
    finally:  # the tensors are written (or abandoned): their arena memory goes back
        values.clear()
        run.close()
    index = writer.index()
    if index is not None:
        from ..dump.npy_index import write_index

        write_index(Path(directory) / INDEX_FILE, index)
    if vouched is not None:
        vouched.files.update({f"{DUMP_DIR}/{name}": d for name, d in writer.digests.items()})
    info = {
        "model_name": model_label(model),
        "onnxruntime": ort_version(),
        "graph": prepared.report.as_dict(),
        "not_dumped": not_dumped,
        "nodes": len(graph.node),
        "output_nodes": output_nodes,
        # the model's output names by their node and index: a keras2onnx Dense's output
        # ``dense_6`` is made by ``Add1`` (its MatMul is the node named ``dense_6``, audit 34)
        "output_tensors": {o: [n.name, k] for n in graph.node for k, o in enumerate(n.output)
                           if o in model_outputs},
        # ops no conversion runs (ATC folds a Constant into its readers' weights): what
        # ``compare`` counts folded without an om json (audit 33: "878 unmatched")
        "constant_nodes": [n.name for n in graph.node if n.op_type == "Constant"],
    }
    (Path(directory) / INFO_FILE).write_text(json.dumps(info, indent=1), encoding="utf-8")
    return info


def _last_use(graph) -> Dict[str, int]:
    """Index of the last node that reads (or writes) each tensor."""
    last: Dict[str, int] = {}
    for index, node in enumerate(graph.node):
        for name in list(node.input) + list(node.output):
            if name:
                last[name] = index
    return last
