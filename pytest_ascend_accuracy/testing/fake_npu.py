"""The FAKE NPU's state, shared by the fake ``acl`` (``fake_acl``) and ``ais_bench``
(``fake_ais_bench``) modules. ``fake_runtime.install`` puts those modules in ``sys.modules``.
This is the lowest fake runtime module: it imports neither of them (no import circle).

A loaded FAKE .om (written by the fake ATC, ``fake_om``) "runs" on the CPU with onnxruntime in
float32; dumps are written in the real Ascend binary format and directory layout
(``dump.layout.AscendDumpWriter``, ``run_dir``) under the acl.json ``dump_path``, honouring
``dump_list`` model names, ``layer`` and ``dump_mode``. Nothing here touches an NPU.

Timing kept honest, the way the documented pyACL sequence requires it:

* dump data of an execution is *in flight* until the device is synchronised
  (``synchronize_stream`` / ``synchronize_device``); only then do the files appear;
* ``execute_async`` tasks run when their stream is synchronised (outputs are not there before);
* the documented order is ``execute -> finalize_dump -> unload`` (pyACL ``acl.mdl.finalize_dump``
  page). A ``finalize_dump`` or ``unload`` that finds dump data still in flight drops it, and an
  ``unload`` of a model loaded under ``set_dump`` before ``finalize_dump`` is recorded: both go to
  ``protocol_errors``, which tests assert empty.

Dump leaves: ``{dump_path}/{YYYYMMDDHHMMSS}/{device}/{model_name}/{model_id}/{step}``; model ids
count loads from 1 per process, steps count executions of one loaded model from 0. Float tensors
are stored as float16 under fp16 precision modes (``fake_om``) and 4-D float activations in the
NC1HWC0 device layout when ``device_formats`` is on.

Devices: ``device_count`` is the machine's; ``ASCEND_RT_VISIBLE_DEVICES`` narrows what the
process sees as the CANN page says (envref_07_0028, canncommercial 900 maintenref/envvar): the
listed ids are devices' logical ids, the process sees ``len(list)`` devices indexed ``0..n-1``
(``get_device_count`` says n, ``set_device(i)`` opens the i-th listed), and reading stops at the
first character that is neither a digit nor a comma ("1, 2,3" -> 1) and at the first invalid id
("1,3,8" with no device 8 -> 1,3). The page supports ascending lists only; a descending one is
kept in its order (CANN 6.3 ptmigr_0133: "3,2,1" -> index 0 is device 3). Assumed, no page says:
an empty value is as if unset, and a repeated id stops the reading like an invalid one.
"""
from __future__ import annotations

import ctypes
import os
import platform
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

ACL_SUCCESS = 0
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_UNINITIALIZE = 100001
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_INVALID_DEVICE = 107001
ACL_ERROR_INVALID_MODEL = 500002
#: aclError 500002 is ACL_ERROR_GE_FAILURE: what a failed aclmdlExecute returns (the fake's
#: onnxruntime failing to run the model is reported so, ``FakeRunFailure``)
ACL_ERROR_GE_FAILURE = 500002
ACL_HOST = 1  # aclrtRunMode: ACL_DEVICE = 0, ACL_HOST = 1
VISIBLE_ENV = "ASCEND_RT_VISIBLE_DEVICES"
NP_TO_ACL = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.int8): 2,
             np.dtype(np.int32): 3, np.dtype(np.uint8): 4, np.dtype(np.int16): 6,
             np.dtype(np.uint16): 7, np.dtype(np.uint32): 8, np.dtype(np.int64): 9,
             np.dtype(np.uint64): 10, np.dtype(np.float64): 11, np.dtype(np.bool_): 12}

Spec = Tuple[str, Tuple[int, ...], np.dtype]  # dims -1 (-2: rank) where the om leaves them unknown


def om_size(shape, dtype) -> int:
    """A tensor's byte size as the om gives it (aclmdlGet{Input,Output}SizeByIndex, ais_bench's
    descriptors): 0 where the conversion left a dim unknown (-1)."""
    if any(d < 0 for d in shape):
        return 0
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize


class FakeRunFailure(RuntimeError):
    """onnxruntime, standing in for the device, could not run a loaded fake om (what a real
    device would run or refuse is not known: the message says it is the fake)."""


@dataclass
class LoadedModel:
    """A fake .om loaded on the fake device, with the dump configuration it was loaded under."""

    model_id: int
    device_id: int
    fake: object  # fake_om.FakeOm
    dump_config: Optional[dict]
    input_specs: List[Spec]
    output_specs: List[Spec]
    session: object
    steps: int = 0
    under_set_dump: bool = False  # loaded between set_dump and finalize_dump
    in_flight: List[tuple] = field(default_factory=list)  # dump data not yet on disk
    #: the dims of each output at the last execution (aclmdlGetCurOutputDims)
    last_dims: List[Tuple[int, ...]] = field(default_factory=list)


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
    streams: Dict[int, List[Callable[[], None]]] = field(default_factory=dict)
    calls: List[str] = field(default_factory=list)
    dumps: List[Path] = field(default_factory=list)
    protocol_errors: List[str] = field(default_factory=list)
    last_error: str = ""
    #: errors acl.get_recent_err_msg has not returned yet (it returns and clears them, newest first)
    unread_errors: List[str] = field(default_factory=list)

    def visible_devices(self) -> List[int]:
        """The logical ids this process sees, index ``i`` first (see the module docstring)."""
        value = os.environ.get(VISIBLE_ENV, "")
        if not value:
            return list(range(self.device_count))
        ids: List[int] = []
        for part in re.match(r"[0-9,]*", value).group(0).split(","):
            if not part or int(part) >= self.device_count or int(part) in ids:
                break
            ids.append(int(part))
        return ids

    def record_error(self, message: str) -> None:
        """A failed call's reason: ``last_error`` (for tests), and what pyACL returns next."""
        self.last_error = message
        self.unread_errors.append(message)

    # -- models ------------------------------------------------------------------------------------
    def load(self, path: str, device_id: int, dump_config: Optional[dict]) -> int:
        from .fake_om import read_fake_om

        fake = read_fake_om(path)
        built_for = fake.meta.get("soc_version")
        if built_for and built_for != self.soc_name:  # an offline model is built for one chip
            raise ValueError(f"{path}: converted for {built_for} (--soc_version); this device "
                             f"is {self.soc_name}")
        built_env = fake.meta.get("host_env")  # --host_env_os/--host_env_cpu (fake_atc_checks)
        if built_env and built_env[1] != (platform.machine() or "x86_64"):
            raise ValueError(f"{path}: built for {built_env[0]} {built_env[1]} "
                             f"(--host_env_os/--host_env_cpu); this host is "
                             f"{platform.machine()}")
        if fake.meta.get("insert_op_conf"):
            raise ValueError(f"{path}: the fake runtime cannot apply AIPP (--insert_op_conf)")
        session, input_specs, output_specs = _prepare(fake)
        model_id = self.next_model_id
        self.next_model_id += 1
        self.models[model_id] = LoadedModel(model_id, device_id, fake, dump_config, input_specs,
                                            output_specs, session,
                                            under_set_dump=self.dump_active and dump_config is not None)
        return model_id

    def execute(self, model_id: int, feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
        """Run once; the outputs are returned now, the dump data stays in flight until the
        device is synchronised (``synchronize``)."""
        model = self.models[model_id]
        for name, shape, dtype in model.input_specs:
            arr = feeds[name]
            # a dim the om leaves unknown (-1; -2: the rank) takes any size (a dymshape run)
            known = shape == (-2,) or len(arr.shape) == len(shape) and all(
                d < 0 or d == a for d, a in zip(shape, arr.shape))
            if not known or arr.dtype != dtype:
                raise ValueError(f"input {name!r}: got {arr.dtype}{list(arr.shape)}, the om expects "
                                 f"{dtype}{list(shape)}")
        values = _run_all(model, feeds)
        model.last_dims = [tuple(np.shape(values[name])) for name, _, _ in model.output_specs]
        step = model.steps
        model.steps += 1
        config = self._dump_entry(model)
        if config is not None:
            model.in_flight.append((values, step) + config)
        return [np.asarray(values[name]) for name, _, _ in model.output_specs]

    def synchronize(self, stream: Optional[int] = None) -> None:
        """Run the queued tasks of ``stream`` (all streams when None), then land every dump in
        flight on the current device."""
        for key in ([stream] if stream is not None else list(self.streams)):
            tasks, self.streams[key] = self.streams.get(key, []), []
            for task in tasks:
                task()
        for model in self.models.values():
            if model.device_id == self.current_device:
                while model.in_flight:
                    self._write_dump(model, *model.in_flight.pop(0))

    def drop_in_flight(self, model: LoadedModel, when: str) -> None:
        if model.in_flight:
            self.protocol_errors.append(
                f"{when} while dump data of model {model.model_id} was still in flight: "
                f"{len(model.in_flight)} run(s) lost (synchronise the stream/device first)")
            model.in_flight.clear()

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

    def release(self, h: int) -> int:
        return ACL_SUCCESS if self.handles.pop(h, None) is not None else ACL_ERROR_INVALID_PARAM


# -- running the ONNX model --------------------------------------------------------------------
def _prepare(fake):
    """An onnxruntime session exposing every node output, and the om's input/output specs
    (``FakeOm.io_specs``: fixed at conversion, outputs in om order). Nothing is run: a real
    aclmdlLoadFromFile runs no model, and zeros made up to learn output shapes took branches
    (silero_vad's ``sr``) no caller feeds. ValueError naming the fake when onnxruntime refuses
    to build the session (load returns an ACL error for it)."""
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
    try:
        session = ort.InferenceSession(model.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 -- onnxruntime raises its own types
        raise ValueError(f"{fake.path}: the FAKE runtime (onnxruntime on the CPU, no NPU) "
                         f"cannot load the model: {_first_line(exc)}") from exc
    inputs, outputs = fake.io_specs()
    input_specs = [(n, tuple(d), np.dtype(t)) for n, t, d in inputs]
    output_specs = [(n, tuple(d), np.dtype(t)) for n, t, d in outputs]
    return session, input_specs, output_specs


def _run_all(model: LoadedModel, feeds: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Every tensor of one run. A float16 input the om has for a float32 one (through
    ``--input_fp16_nodes``) is cast as ATC's inserted Cast casts it; FakeRunFailure when
    onnxruntime cannot run the model on these inputs."""
    from onnx import numpy_helper

    session = model.session
    wanted = {i.name: _ORT_TYPES.get(i.type) for i in session.get_inputs()}
    feeds = {k: (v.astype(wanted[k]) if wanted.get(k) and v.dtype != wanted[k] else v)
             for k, v in feeds.items()}
    names = [o.name for o in session.get_outputs()]
    try:
        values = dict(zip(names, session.run(names, feeds)))
    except Exception as exc:  # noqa: BLE001 -- onnxruntime raises its own types
        raise FakeRunFailure(
            f"the FAKE NPU (onnxruntime on the CPU standing in for the device) could not run "
            f"model {model.fake.model_name!r} ({model.fake.path}): {_first_line(exc)}") from exc
    values.update(feeds)
    for init in model.fake.model.graph.initializer:
        values.setdefault(init.name, numpy_helper.to_array(init))
    return values


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def _stored(array: np.ndarray, dtype: str) -> np.ndarray:
    array = np.asarray(array)
    if array.dtype.kind == "f" and array.dtype != np.dtype(dtype):
        with np.errstate(over="ignore"):  # past float16's range: inf, as the device stores it
            return array.astype(dtype)
    return array


_ORT_TYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(double)": np.float64,
              "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(int8)": np.int8,
              "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_, "tensor(int16)": np.int16}
