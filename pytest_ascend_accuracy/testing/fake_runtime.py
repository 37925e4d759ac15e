"""A FAKE Ascend runtime for tests: ``acl`` (pyACL) and ``ais_bench`` modules for ``sys.modules``.

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
_NP_TO_ACL = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.int8): 2,
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


def make_acl_module(state: FakeNpu) -> types.ModuleType:
    """A FAKE ``acl`` module with the pyACL functions the Ascend backend uses."""
    from ..backends.ascend.acl_json import read_acl_json

    acl = types.ModuleType("acl", "FAKE pyACL for pytest-ascend-accuracy tests (not CANN's acl)")
    acl.__fake__ = True

    def log(name):
        state.calls.append(name)

    def init(config_path=None):
        log("init")
        if state.acl_initialised:
            return ACL_ERROR_REPEAT_INITIALIZE
        if config_path:
            state.init_dump_config = read_acl_json(config_path)
        state.acl_initialised = True
        return ACL_SUCCESS

    def finalize():
        log("finalize")
        state.acl_initialised = False
        return ACL_SUCCESS

    def get_soc_name():
        return state.soc_name

    # rt
    def get_device_count():
        return state.device_count, ACL_SUCCESS

    def set_device(device_id):
        log(f"rt.set_device({device_id})")
        if not state.acl_initialised:
            return ACL_ERROR_UNINITIALIZE
        if not 0 <= device_id < state.device_count:
            return ACL_ERROR_INVALID_DEVICE
        state.open_devices.add(device_id)
        state.current_device = device_id
        return ACL_SUCCESS

    def reset_device(device_id):
        log(f"rt.reset_device({device_id})")
        state.open_devices.discard(device_id)
        return ACL_SUCCESS

    def create_context(device_id):
        log(f"rt.create_context({device_id})")
        return state.handle(("context", device_id)), ACL_SUCCESS

    def destroy_context(ctx):
        log("rt.destroy_context")
        return ACL_SUCCESS if state.handles.pop(ctx, None) else ACL_ERROR_INVALID_PARAM

    def set_context(ctx):
        value = state.handles.get(ctx)
        if not value:
            return ACL_ERROR_INVALID_PARAM
        state.current_device = value[1]
        return ACL_SUCCESS

    def malloc(size, policy=0):
        return state.malloc(size), ACL_SUCCESS

    def memcpy(dst, dst_max, src, count, kind):
        if count > dst_max:
            return ACL_ERROR_INVALID_PARAM
        ctypes.memmove(dst, src, count)
        return ACL_SUCCESS

    acl.init, acl.finalize, acl.get_soc_name = init, finalize, get_soc_name
    acl.rt = types.SimpleNamespace(
        get_device_count=get_device_count, set_device=set_device, reset_device=reset_device,
        create_context=create_context, destroy_context=destroy_context, set_context=set_context,
        malloc=malloc, free=state.free, malloc_host=malloc, free_host=state.free, memcpy=memcpy)
    acl.util = types.SimpleNamespace(
        bytes_to_ptr=lambda data: ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value,
        numpy_to_ptr=lambda arr: arr.ctypes.data,
        ptr_to_bytes=lambda ptr, size: ctypes.string_at(ptr, size))
    acl.create_data_buffer = lambda ptr, size: state.handle(("buffer", ptr, size))
    acl.destroy_data_buffer = lambda h: ACL_SUCCESS if state.handles.pop(h, None) else ACL_ERROR_INVALID_PARAM
    acl.get_data_buffer_addr = lambda h: state.handles[h][1]
    acl.get_data_buffer_size_v2 = lambda h: state.handles[h][2]
    acl.mdl = _make_mdl(state, read_acl_json)
    return acl


def _make_mdl(state: FakeNpu, read_acl_json) -> types.SimpleNamespace:
    def init_dump():
        state.calls.append("mdl.init_dump")
        if not state.acl_initialised:
            return ACL_ERROR_UNINITIALIZE
        if state.init_dump_config is not None:  # documented: fails when acl.init got a dump config
            return ACL_ERROR_INVALID_PARAM
        state.dump_active, state.dump_config = True, None
        return ACL_SUCCESS

    def set_dump(path):
        state.calls.append("mdl.set_dump")
        if not state.dump_active:
            return ACL_ERROR_INVALID_PARAM
        try:
            config = read_acl_json(path)
        except Exception as exc:
            state.last_error = str(exc)
            return ACL_ERROR_INVALID_PARAM
        if not Path(config["dump"]["dump_path"]).is_dir():
            state.last_error = f"dump_path {config['dump']['dump_path']} does not exist"
            return ACL_ERROR_INVALID_PARAM
        state.dump_config = config
        return ACL_SUCCESS

    def finalize_dump():
        state.calls.append("mdl.finalize_dump")
        state.dump_active, state.dump_config = False, None
        return ACL_SUCCESS

    def load_from_file(path):
        state.calls.append("mdl.load_from_file")
        if state.current_device not in state.open_devices:
            return 0, ACL_ERROR_INVALID_DEVICE
        config = state.dump_config if state.dump_active else state.init_dump_config
        try:
            return state.load(path, state.current_device, config), ACL_SUCCESS
        except (ValueError, OSError) as exc:
            state.last_error = str(exc)
            return 0, ACL_ERROR_INVALID_MODEL

    def unload(model_id):
        state.calls.append("mdl.unload")
        return ACL_SUCCESS if state.models.pop(model_id, None) else ACL_ERROR_INVALID_PARAM

    def desc_model(desc):
        return state.models[state.handles[desc][1]]

    def get_desc(desc, model_id):
        if model_id not in state.models:
            return ACL_ERROR_INVALID_PARAM
        state.handles[desc] = ("desc", model_id)
        return ACL_SUCCESS

    def dims(spec):
        return {"name": spec[0], "dimCount": len(spec[1]), "dims": list(spec[1])}, ACL_SUCCESS

    def nbytes(spec):
        return int(np.prod(spec[1], dtype=np.int64)) * spec[2].itemsize

    def add_dataset_buffer(ds, buf):
        state.handles[ds].append(buf)
        return ds, ACL_SUCCESS

    def execute(model_id, in_ds, out_ds):
        state.calls.append("mdl.execute")
        model = state.models.get(model_id)
        if model is None:
            return ACL_ERROR_INVALID_PARAM
        feeds = {}
        for (name, shape, dtype), buf in zip(model.input_specs, state.handles[in_ds]):
            _, ptr, size = state.handles[buf]
            feeds[name] = np.frombuffer(ctypes.string_at(ptr, size), dtype=dtype).reshape(shape)
        try:
            outputs = state.execute(model_id, feeds)
        except (ValueError, KeyError) as exc:
            state.last_error = str(exc)
            return ACL_ERROR_INVALID_PARAM
        for array, buf in zip(outputs, state.handles[out_ds]):
            _, ptr, size = state.handles[buf]
            data = np.ascontiguousarray(array).tobytes()
            if len(data) > size:
                return ACL_ERROR_INVALID_PARAM
            ctypes.memmove(ptr, data, len(data))
        return ACL_SUCCESS

    return types.SimpleNamespace(
        init_dump=init_dump, set_dump=set_dump, finalize_dump=finalize_dump,
        load_from_file=load_from_file, unload=unload,
        create_desc=lambda: state.handle(("desc", None)), get_desc=get_desc,
        destroy_desc=lambda d: ACL_SUCCESS if state.handles.pop(d, None) else ACL_ERROR_INVALID_PARAM,
        get_num_inputs=lambda d: len(desc_model(d).input_specs),
        get_num_outputs=lambda d: len(desc_model(d).output_specs),
        get_input_name_by_index=lambda d, i: desc_model(d).input_specs[i][0],
        get_output_name_by_index=lambda d, i: desc_model(d).output_specs[i][0],
        get_input_size_by_index=lambda d, i: nbytes(desc_model(d).input_specs[i]),
        get_output_size_by_index=lambda d, i: nbytes(desc_model(d).output_specs[i]),
        get_input_dims=lambda d, i: dims(desc_model(d).input_specs[i]),
        get_output_dims=lambda d, i: dims(desc_model(d).output_specs[i]),
        get_input_data_type=lambda d, i: _NP_TO_ACL[desc_model(d).input_specs[i][2]],
        get_output_data_type=lambda d, i: _NP_TO_ACL[desc_model(d).output_specs[i][2]],
        create_dataset=lambda: state.handle([]), add_dataset_buffer=add_dataset_buffer,
        destroy_dataset=lambda ds: ACL_SUCCESS if state.handles.pop(ds, None) is not None else ACL_ERROR_INVALID_PARAM,
        get_dataset_num_buffers=lambda ds: len(state.handles[ds]),
        get_dataset_buffer=lambda ds, i: state.handles[ds][i],
        execute=execute)


def make_ais_bench_modules(state: FakeNpu):
    """FAKE ``ais_bench``, ``ais_bench.infer`` and ``ais_bench.infer.interface`` modules."""
    from ..backends.ascend.acl_json import read_acl_json

    class InferSession:
        """FAKE ais_bench InferSession (aclruntime semantics: acl.json read once per process)."""

        def __init__(self, device_id, model_path, acl_json_path=None, debug=False, loop=1):
            state.calls.append(f"InferSession({device_id})")
            if not 0 <= device_id < state.device_count:
                raise RuntimeError(f"[ERROR] fake aclruntime: aclrtSetDevice({device_id}) failed, "
                                   f"ret={ACL_ERROR_INVALID_DEVICE}")
            if not state.aclruntime_initialised:
                state.aclruntime_initialised = True
                state.aclruntime_config = read_acl_json(acl_json_path) if acl_json_path else None
            state.open_devices.add(device_id)
            try:
                self.model_id = state.load(model_path, device_id, state.aclruntime_config)
            except (ValueError, OSError) as exc:
                raise RuntimeError(f"[ERROR] fake aclruntime: load model {model_path} failed: {exc}") from exc
            self.device_id = device_id
            self._freed = False

        def get_inputs(self):
            return [types.SimpleNamespace(name=n, shape=list(s), datatype=str(d), size=int(np.prod(s)) * d.itemsize)
                    for n, s, d in state.models[self.model_id].input_specs]

        def get_outputs(self):
            return [types.SimpleNamespace(name=n, shape=list(s), datatype=str(d), size=int(np.prod(s)) * d.itemsize)
                    for n, s, d in state.models[self.model_id].output_specs]

        def infer(self, feeds, mode="static", custom_sizes=100000):
            specs = state.models[self.model_id].input_specs
            if len(feeds) != len(specs):
                raise RuntimeError(f"fake aclruntime: {len(feeds)} inputs given, model has {len(specs)}")
            try:
                return state.execute(self.model_id, {s[0]: np.asarray(f) for s, f in zip(specs, feeds)})
            except ValueError as exc:
                raise RuntimeError(f"fake aclruntime: {exc}") from exc

        def free_resource(self):
            if not self._freed:
                state.models.pop(self.model_id, None)
                self._freed = True

        def finalize(self):
            self.free_resource()

    pkg = types.ModuleType("ais_bench", "FAKE ais_bench for pytest-ascend-accuracy tests")
    infer = types.ModuleType("ais_bench.infer", "FAKE ais_bench.infer")
    interface = types.ModuleType("ais_bench.infer.interface", "FAKE ais_bench.infer.interface")
    interface.InferSession = InferSession
    pkg.infer, infer.interface = infer, interface
    pkg.__path__, infer.__path__ = [], []  # packages, so submodule imports resolve via sys.modules
    for mod in (pkg, infer, interface):
        mod.__fake__ = True
    return pkg, infer, interface


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
