"""The reference side of a dataset check: ONNX Runtime fp32 on the original model, cached.

Reference outputs are content-keyed on the model (its bytes, onnxruntime's version) and on each
sample (names, dtypes, shapes and bytes of its inputs), like golden dumps, so a rerun only runs
the device side. A cache entry per sample would cost more than running a small model (a lock,
a manifest, an fsync each), so new outputs are written in shards of up to ``SHARD`` samples:
each shard is one ordinary entry of the shared ``Cache`` (locked, built in a temporary
directory, renamed into place, manifest-checked) under a namespace of its own per model, and
holds ``out<i>.npy`` (output ``i`` of every sample, concatenated) and ``keys.json`` (sample
key -> output names, shapes and offsets). Opening the store reads the shards' key lists only;
a shard is checked against its manifest and its arrays read when one of its samples is asked
for, one shard at a time, so memory stays bounded whatever the number of samples (the index
of sample keys, about 100 bytes a sample, is the one thing that grows). A damaged shard is
dropped and its samples run again.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple

import numpy as np

from ..core.cache import Cache, make_key
from ..errors import BackendError
from ..graph.external import EXTERNAL_FOLDER_KEY, load_model_refs
from ..graph.content_digests import inputs_digest, model_digest
from ..graph.onnx_graph import check_inputs, graph_inputs, model_label, ort_session, ort_version

#: bump when what a shard holds changes
REFERENCE_FORMAT = 1
#: new samples written per shard
SHARD = 256
KEYS_FILE = "keys.json"


#: ONNX TensorProto element types of integers (UINT8..INT64, UINT32, UINT64), and of those the
#: ones indices come in (ArgMax, TopK, NonZero and Gather's indices are INT64; INT32 is also an
#: integer-only classifier's scores, MatMulInteger's and ConvInteger's accumulators)
_INTEGER_TYPES = frozenset((2, 3, 4, 5, 6, 7, 12, 13))
_INDEX_TYPES = frozenset((7, 13))
#: ops whose output (by index) holds class indices, and ops that pass values on unchanged
_INDEX_OPS = {"ArgMax": 0, "ArgMin": 0, "TopK": 1}
_PASS_ON_OPS = frozenset(("Cast", "Identity", "Reshape", "Squeeze", "Unsqueeze", "Flatten"))


def _index_producer(producer, name: str):
    """``(node, output index)`` of the ArgMax/ArgMin/TopK that makes ``name``, through casts and
    reshapes only; None where another op makes it."""
    seen = set()
    while name in producer and name not in seen:
        seen.add(name)
        node, k = producer[name]
        if node.op_type in _INDEX_OPS:
            return node, k
        if node.op_type not in _PASS_ON_OPS or not node.input:
            return None
        name = node.input[0]
    return None


def _producers(graph) -> dict:
    return {out: (node, k) for node in graph.node for k, out in enumerate(node.output)}


def class_id_outputs(graph) -> frozenset:
    """The graph's outputs that hold class ids, not scores: those of INT64/UINT64, and those of
    another integer type (UINT8..INT32: a QuantizeLinear at the end of a classifier gives uint8
    scores, MatMulInteger int32 ones) fed by ArgMax/ArgMin/TopK's indices through casts and
    reshapes only."""
    producer = _producers(graph)

    def from_index_op(name: str) -> bool:
        found = _index_producer(producer, name)
        return found is not None and found[1] == _INDEX_OPS[found[0].op_type]

    kinds = {o.name: o.type.tensor_type.elem_type for o in graph.output}
    return frozenset(name for name, kind in kinds.items()
                     if kind in _INDEX_TYPES
                     or (kind in _INTEGER_TYPES and from_index_op(name)))


def class_id_classes(proto, outputs) -> Dict[str, int]:
    """How many classes each of ``outputs`` (class ids) picks from, where the graph says it:
    the static size of the axis its ArgMax/ArgMin/TopK reduces (reached through casts and
    reshapes), from ONNX shape inference (``graph.onnx_graph.tensor_info``); an output whose
    size is open is left out (its labels are then unbounded above). A label outside them can
    never be right on either side."""
    if not outputs:
        return {}
    from ..graph.onnx_graph import tensor_info

    info, producer = tensor_info(proto), _producers(proto.graph)
    found = {}
    for name in outputs:
        made = _index_producer(producer, name)
        if made is None:
            continue
        node = made[0]
        axis = next((a.i for a in node.attribute if a.name == "axis"),
                    -1 if node.op_type == "TopK" else 0)
        shape = (info.get(node.input[0]) or (0, None))[1] or ()
        if -len(shape) <= axis < len(shape) and shape[axis]:
            found[name] = int(shape[axis])
    return found


def as_float32(outputs: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Outputs as float32 whatever dtype they came in (fp16 from a device, int64 ids...)."""
    return {name: np.asarray(value).astype(np.float32, copy=False)
            for name, value in outputs.items()}


class ReferenceModel:
    """``outputs(inputs, where)`` of the original model under onnxruntime fp32 (cached)."""

    def __init__(self, model, *, cache: Optional[Cache] = None):
        import onnx

        # a model with external data: its weights stay in their files and onnxruntime reads
        # them (a > 2 GB model cannot be serialized whole; nothing copies the weights)
        proto, folder = load_model_refs(model)
        self.label = model_label(model)
        self._spec = onnx.ModelProto()  # the inputs only: what check_inputs reads per sample
        self._spec.graph.input.extend(graph_inputs(proto))
        self.output_names = [o.name for o in proto.graph.output]
        #: outputs that hold class ids (``class_id_outputs``): the scorers read their values as
        #: the classes themselves (outputs are all returned as float32)
        self.class_id_outputs = class_id_outputs(proto.graph)
        #: the classes each of them picks from, where the graph says (``class_id_classes``)
        self.class_id_classes = class_id_classes(proto, self.class_id_outputs)
        from .joined_outputs import joined_outputs

        #: outputs joining scores with other values, a detector's head (``joined_outputs``)
        self.joined_outputs = joined_outputs(proto.graph)
        from .batch_axis import declared_batch_axes

        #: per output, the axes it declares as the inputs' symbolic batch (its rank first)
        self.batch_axes = declared_batch_axes(proto)
        try:
            self._session = _session(proto.SerializeToString(), folder)
        except Exception as exc:
            raise BackendError(f"onnxruntime could not load the reference model {self.label!r}: "
                               f"{exc}") from exc
        self.hits = 0
        self.runs = 0
        self._checked = set()
        self._store = None
        if cache is not None:
            model_key = make_key(kind="dataset-reference", format=REFERENCE_FORMAT,
                                 model=model_digest(model), onnxruntime=ort_version())
            self._store = _ShardStore(cache, f"dataset-reference-{model_key[:32]}")

    def outputs(self, inputs: Mapping[str, np.ndarray],
                where: str = "sample") -> Dict[str, np.ndarray]:
        signature = tuple((k, np.asarray(v).dtype.str, np.shape(v)) for k, v in inputs.items())
        if signature in self._checked:  # same names, dtypes and shapes as an earlier sample
            feeds = {k: np.asarray(v) for k, v in inputs.items()}
        else:
            feeds = check_inputs(self._spec, inputs, where=where)
            self._checked.add(signature)
        key = inputs_digest(feeds) if self._store is not None else None
        if key is not None:
            cached = self._store.get(key)
            if cached is not None:
                self.hits += 1
                return cached
        try:
            values = self._session.run(self.output_names, feeds)
        except Exception as exc:
            raise BackendError(f"onnxruntime could not run the reference model {self.label!r} on "
                               f"{where}: {exc}") from exc
        self.runs += 1
        out = as_float32(dict(zip(self.output_names, values)))
        if key is not None:
            self._store.put(key, out)
        return out

    def close(self) -> None:
        """Write the pending shard (call once the dataset has been run)."""
        if self._store is not None:
            self._store.flush()


def _session(model_bytes: bytes, folder: Optional[str] = None):
    """onnxruntime fp32 with basic optimisations; its threads do not spin between runs, since
    the device side runs right after each reference run and needs the cores. ``folder``: where
    the model's external-data weights are read from."""
    return ort_session(model_bytes, optimize=True, spinning=False,
                       config={EXTERNAL_FOLDER_KEY: folder} if folder else None)


class _ShardStore:
    """Shards of reference outputs in one cache namespace (see the module docstring)."""

    def __init__(self, cache: Cache, namespace: str):
        self.cache = cache
        self.namespace = namespace
        #: sample key -> (shard entry, [output names, shapes, offsets into outN.npy])
        self._index: Dict[str, Tuple[Path, list]] = {}
        self._loaded: Tuple[Optional[Path], List[np.ndarray]] = (None, [])
        self._pending: Dict[str, Dict[str, np.ndarray]] = {}
        root = cache.root / namespace
        if root.is_dir():
            for entry in sorted(root.glob("*/*")):  # key lists only: shards are checked on use
                if entry.name.startswith("."):
                    continue
                try:
                    keys = json.loads((entry / KEYS_FILE).read_text(encoding="utf-8"))
                    for key, (names, shapes, offsets) in keys.items():
                        self._index[key] = (entry, [names, shapes, offsets])
                except (OSError, ValueError, TypeError, AttributeError):
                    continue  # unfinished or damaged: its samples run again

    def get(self, key: str) -> Optional[Dict[str, np.ndarray]]:
        if key in self._pending:
            return self._pending[key]
        found = self._index.get(key)
        if found is None:
            return None
        entry, (names, shapes, offsets) = found
        if self._loaded[0] != entry:
            try:
                if self.cache.lookup(self.namespace, entry.name) is None:  # manifest mismatch
                    raise ValueError(f"{entry}: damaged")
                self._loaded = (entry, [np.load(entry / f"out{i}.npy", allow_pickle=False)
                                        for i in range(len(names))])
            except (OSError, ValueError, EOFError):
                self._index = {k: v for k, v in self._index.items() if v[0] != entry}
                return None  # removed or damaged since: run the reference again
        flat = self._loaded[1]
        out = {}
        for i, name in enumerate(names):
            size = int(np.prod(shapes[i]))
            out[name] = flat[i][offsets[i]:offsets[i] + size].reshape(shapes[i])
        return out

    def put(self, key: str, outputs: Dict[str, np.ndarray]) -> None:
        self._pending[key] = outputs
        if len(self._pending) >= SHARD:
            self.flush()

    def flush(self) -> None:
        """Write the pending outputs as one shard: per output position, all samples' values
        concatenated in ``outN.npy``; ``keys.json`` has each sample's names, shapes, offsets."""
        if not self._pending:
            return
        pending, self._pending = self._pending, {}
        width = max(len(v) for v in pending.values())
        offsets = [0] * width
        keys = {}
        for key, outs in pending.items():
            shapes = [list(a.shape) for a in outs.values()]
            keys[key] = [list(outs), shapes, list(offsets[:len(outs)])]
            for i, a in enumerate(outs.values()):
                offsets[i] += int(a.size)
        shard_key = make_key(kind="dataset-reference-shard", samples=sorted(keys))

        def build(tmp: Path) -> None:
            for i in range(width):
                parts = [np.ravel(list(o.values())[i]) for o in pending.values() if len(o) > i]
                np.save(tmp / f"out{i}.npy", np.concatenate(parts).astype(np.float32, copy=False))
            (tmp / KEYS_FILE).write_text(json.dumps(keys, sort_keys=True), encoding="utf-8")

        entry = self.cache.get_or_build(self.namespace, shard_key, build)
        for k, v in keys.items():
            self._index[k] = (entry, v)
