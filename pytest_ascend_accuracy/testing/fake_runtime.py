"""A FAKE Ascend runtime for tests: shared NPU state behind the fake ``acl`` (``fake_acl``) and
``ais_bench`` (``fake_ais_bench``) modules, and ``install`` to put them in ``sys.modules``.

``install(monkeypatch, flavor="acl")`` puts fake modules in ``sys.modules`` that "run" a FAKE
.om (written by the fake ATC, ``fake_om``) on the CPU with onnxruntime in float32 and write
dumps in the real Ascend binary format and directory layout (``dump.layout.AscendDumpWriter``,
``run_dir``) under the acl.json ``dump_path``, honouring ``dump_list`` model names, ``layer``
and ``dump_mode``. Nothing here touches an NPU; every module and object is marked as a fake.

Semantics copied from the documentation, so the real backend's handling of them is exercised:

* pyACL: ``acl.init`` once; ``acl.mdl.init_dump`` / ``set_dump`` / ``finalize_dump`` configure
  dumps for models loaded *after* ``set_dump`` (later loads of other models are not affected by
  an earlier config once finalised); ``set_device`` of a missing device fails with an ACL code.
* ais_bench (aclruntime): the acl.json of the **first** ``InferSession`` of the process is the
  only one read (aclruntime hands it to ``aclInit`` once); later sessions' acl.json are ignored.
* dump leaves: ``{dump_path}/{YYYYMMDDHHMMSS}/{device}/{model_name}/{model_id}/{step}``; model ids
  count loads from 1 per process, steps count executions of one loaded model from 0.
* storage: float tensors stored as float16 under fp16 precision modes (see ``fake_om``) and 4-D
  float activations in NC1HWC0 device layout when ``device_formats`` is on.
"""
from __future__ import annotations

import ctypes
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

ACL_SUCCESS = 0
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_UNINITIALIZE = 100001
ACL_ERROR_INVALID_DEVICE = 107001
ACL_ERROR_INVALID_MODEL = 500002
NP_TO_ACL = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.int8): 2,
             np.dtype(np.int32): 3, np.dtype(np.uint8): 4, np.dtype(np.int16): 6,
             np.dtype(np.uint16): 7, np.dtype(np.uint32): 8, np.dtype(np.int64): 9,
             np.dtype(np.uint64): 10, np.dtype(np.float64): 11, np.dtype(np.bool_): 12}


@dataclass
class LoadedModel:
    """A fake .om loaded on the fake device, with the dump configuration it was loaded under."""

    model_id: int
    device_id: int
    fake: object  # fake_om.FakeOm
    dump_config: Optional[dict]
    input_specs: List[Tuple[str, Tuple[int, ...], np.dtype]]
    output_specs: List[Tuple[str, Tuple[int, ...], np.dtype]]
    session: object
    steps: int = 0


@dataclass
class FakeNpu:
    """Process-wide state of the fake runtime (what the fake modules share)."""

    device_count: int = 1
    soc_name: str = "Ascend310P3"
    device_formats: bool = True
    acl_initialised: bool = False
    init_dump_config: Optional[dict] = None
    dump_active: bool = False
    dump_config: Optional[dict] = None
    aclruntime_config: Optional[dict] = None
    aclruntime_initialised: bool = False
    open_devices: set = field(default_factory=set)
    current_device: Optional[int] = None
    models: Dict[int, LoadedModel] = field(default_factory=dict)
    next_model_id: int = 1
    memory: Dict[int, object] = field(default_factory=dict)
    handles: Dict[int, object] = field(default_factory=dict)
    next_handle: int = 1
    calls: List[str] = field(default_factory=list)
    dumps: List[Path] = field(default_factory=list)
    last_error: str = ""

    # -- models ------------------------------------------------------------------------------------
    def load(self, path: str, device_id: int, dump_config: Optional[dict]) -> int:
        from .fake_om import read_fake_om

        fake = read_fake_om(path)
        if fake.meta.get("insert_op_conf"):
            raise ValueError(f"{path}: the fake runtime cannot apply AIPP (--insert_op_conf)")
        session, input_specs, output_specs = _prepare(fake)
        model_id = self.next_model_id
        self.next_model_id += 1
        self.models[model_id] = LoadedModel(model_id, device_id, fake, dump_config, input_specs,
                                            output_specs, session)
        return model_id

    def execute(self, model_id: int, feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
        model = self.models[model_id]
        for name, shape, dtype in model.input_specs:
            arr = feeds[name]
            if tuple(arr.shape) != shape or arr.dtype != dtype:
                raise ValueError(f"input {name!r}: got {arr.dtype}{list(arr.shape)}, the om expects "
                                 f"{dtype}{list(shape)}")
        values = _run_all(model, feeds)
        step = model.steps
        model.steps += 1
        config = self._dump_entry(model)
        if config is not None:
            self._write_dump(model, values, step, *config)
        return [np.asarray(values[name]) for name, _, _ in model.output_specs]

    def _dump_entry(self, model: LoadedModel):
        cfg = (model.dump_config or {}).get("dump")
        if not cfg:
            return None
        for entry in cfg.get("dump_list", []):
            if entry.get("model_name") == model.fake.model_name:
                return Path(cfg["dump_path"]), cfg.get("dump_mode", "output"), entry.get("layer")
        return None

    def _write_dump(self, model: LoadedModel, values, step, dump_path, dump_mode, layers) -> None:
        from ..dump.layout import AscendDumpWriter, run_dir

        leaf = run_dir(dump_path, device_id=model.device_id, model_name=model.fake.model_name,
                       model_id=model.model_id, step=step)
        with AscendDumpWriter(leaf) as writer:
            for op in model.fake.plan():
                if layers and op.name not in layers and not set(op.members) & set(layers):
                    continue
                dtype = model.fake.storage_dtype(op)
                ins = [_stored(values[n], dtype) for n in op.inputs] if dump_mode in ("input", "all") else []
                outs = [_stored(values[n], dtype) for n in op.outputs] if dump_mode in ("output", "all") else []
                writer.write_op(op.type, op.name, ins, outs,
                                output_origins=list(op.output_origins) if outs else None,
                                input_formats=[self._format(a) for a in ins] if ins else None,
                                output_formats=[self._format(a) for a in outs] if outs else None)
        self.dumps.append(leaf)

    def _format(self, array: np.ndarray) -> str:
        if self.device_formats and array.ndim == 4 and array.dtype.kind == "f":
            return "NC1HWC0"
        return "ND"

    # -- host/device memory (real host memory standing in for device memory) ----------------------
    def malloc(self, size: int) -> int:
        buf = ctypes.create_string_buffer(max(int(size), 1))
        ptr = ctypes.addressof(buf)
        self.memory[ptr] = buf
        return ptr

    def free(self, ptr: int) -> int:
        return ACL_SUCCESS if self.memory.pop(ptr, None) is not None else ACL_ERROR_INVALID_PARAM

    def handle(self, value) -> int:
        h = self.next_handle
        self.next_handle += 1
        self.handles[h] = value
        return h


# -- installing ------------------------------------------------------------------------------------
def install(monkeypatch=None, *, flavor: str = "acl", device_count: int = 1, soc_name: str = "Ascend310P3",
            device_formats: bool = True) -> FakeNpu:
    """Install the FAKE runtime modules into ``sys.modules`` and return their shared state.

    ``flavor``: ``"acl"`` (fake pyACL only; ``ais_bench`` made unimportable), ``"ais_bench"``
    (fake ais_bench only; ``acl`` made unimportable) or ``"both"``. With ``monkeypatch`` the
    change is undone after the test; without it call ``uninstall(state)``."""
    if flavor not in ("acl", "ais_bench", "both"):
        raise ValueError(f"flavor must be 'acl', 'ais_bench' or 'both', got {flavor!r}")
    state = FakeNpu(device_count=device_count, soc_name=soc_name, device_formats=device_formats)
    from .fake_acl import make_acl_module
    from .fake_ais_bench import make_ais_bench_modules

    modules: Dict[str, Optional[types.ModuleType]] = {
        "acl": None, "ais_bench": None, "ais_bench.infer": None, "ais_bench.infer.interface": None}
    if flavor in ("acl", "both"):
        modules["acl"] = make_acl_module(state)
    if flavor in ("ais_bench", "both"):
        pkg, infer, interface = make_ais_bench_modules(state)
        modules.update({"ais_bench": pkg, "ais_bench.infer": infer, "ais_bench.infer.interface": interface})
    state._saved = {name: sys.modules.get(name, _MISSING) for name in modules}  # type: ignore[attr-defined]
    for name, module in modules.items():
        if monkeypatch is not None:
            monkeypatch.setitem(sys.modules, name, module)
        else:
            sys.modules[name] = module
    return state


def uninstall(state: FakeNpu) -> None:
    """Undo ``install`` done without monkeypatch."""
    for name, previous in getattr(state, "_saved", {}).items():
        if previous is _MISSING:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous


_MISSING = object()


# -- running the ONNX model --------------------------------------------------------------------
def _prepare(fake):
    """An onnxruntime session exposing every node output, and the input/output specs."""
    import onnx
    import onnxruntime as ort

    model = onnx.ModelProto()
    model.CopyFrom(fake.model)
    existing = {o.name for o in model.graph.output}
    for node in model.graph.node:
        for out in node.output:
            if out and out not in existing:
                model.graph.output.append(onnx.ValueInfoProto(name=out))
                existing.add(out)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    shapes = fake.input_shapes
    input_specs = []
    for inp in session.get_inputs():
        if inp.name in shapes:
            input_specs.append((inp.name, tuple(shapes[inp.name]), np.dtype(_ORT_TYPES[inp.type])))
    zeros = {name: np.zeros(shape, dtype) for name, shape, dtype in input_specs}
    names = [o.name for o in fake.model.graph.output]
    first = dict(zip(names, session.run(names, zeros)))
    output_specs = [(n, tuple(first[n].shape), first[n].dtype) for n in names]
    return session, input_specs, output_specs


def _run_all(model: LoadedModel, feeds: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    from onnx import numpy_helper

    session = model.session
    names = [o.name for o in session.get_outputs()]
    values = dict(zip(names, session.run(names, feeds)))
    values.update(feeds)
    for init in model.fake.model.graph.initializer:
        values.setdefault(init.name, numpy_helper.to_array(init))
    return values


def _stored(array: np.ndarray, dtype: str) -> np.ndarray:
    array = np.asarray(array)
    if array.dtype.kind == "f" and array.dtype != np.dtype(dtype):
        return array.astype(dtype)
    return array


_ORT_TYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(double)": np.float64,
              "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(int8)": np.int8,
              "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_, "tensor(int16)": np.int16}
