"""FAKE ``acl`` (pyACL) module for tests, backed by the shared ``fake_npu.FakeNpu`` state. Not
CANN's acl; marked ``__fake__``.

It offers the pyACL functions the Ascend backend's driver uses and those of Ascend's own Python
samples (``sampleResnetQuickStart``: ``acl.rt.get_run_mode``, ``create_stream``,
``acl.mdl.get_cur_output_dims``, ``acl.get_data_buffer_size``, ``acl.util.ptr_to_numpy`` ...),
so such a script runs against it unchanged. Documented behaviours it keeps: ``acl.init`` once
per process (a second call returns ACL_ERROR_REPEAT_INITIALIZE); ``acl.mdl.init_dump`` fails
when ``acl.init`` got a dump config and must come after ``acl.init``; ``set_dump`` applies to
models loaded after it, until ``finalize_dump``; ``rt.set_device`` of a missing device fails
with an ACL error code, and ``ASCEND_RT_VISIBLE_DEVICES`` narrows and renumbers the devices
``rt.get_device_count``/``rt.set_device`` see (``FakeNpu.visible_devices``);
``execute_async`` work is done when its stream is synchronised; dump files land when the
device is synchronised (see ``fake_npu``). Host and "device" memory are
both real host memory (ctypes buffers), so ``memcpy`` really copies.

An output whose dims the conversion left unknown (-1, ``fake_om``) is as the
aclmdlGetOutputSizeByIndex page has it: its size is 0; an output buffer created with data 0
and size 0 gets memory the runtime allocates at execution (the buffer's address and size then
say where), and a buffer too small for an output fails the execution, saying the size it
needs; ``get_cur_output_dims`` gives the dims of the last execution. When onnxruntime cannot
run the model, ``execute`` returns 500002 (ACL_ERROR_GE_FAILURE) and
``get_recent_err_msg`` says why, naming the fake.
"""
from __future__ import annotations

import ctypes
import types
from pathlib import Path

import numpy as np

from .fake_npu import (ACL_ERROR_GE_FAILURE, ACL_ERROR_INVALID_DEVICE, ACL_ERROR_INVALID_MODEL,
                       ACL_ERROR_INVALID_PARAM, ACL_ERROR_REPEAT_INITIALIZE, ACL_ERROR_UNINITIALIZE,
                       ACL_HOST, ACL_SUCCESS, NP_TO_ACL, FakeNpu, FakeRunFailure, om_size)


def make_acl_module(state: FakeNpu) -> types.ModuleType:
    """A FAKE ``acl`` module (``acl``, ``acl.rt``, ``acl.util``, ``acl.mdl``)."""
    from ..backends.ascend.acl_json import read_acl_json

    acl = types.ModuleType("acl", "FAKE pyACL for pytest-ascend-accuracy tests (not CANN's acl)")
    acl.__fake__ = True

    def init(config_path=None):
        state.calls.append("init")
        if state.acl_initialised:
            return ACL_ERROR_REPEAT_INITIALIZE
        if config_path:
            state.init_dump_config = read_acl_json(config_path)
        state.acl_initialised = True
        return ACL_SUCCESS

    def finalize():
        state.calls.append("finalize")
        state.acl_initialised = False
        return ACL_SUCCESS

    def buffer(h):
        value = state.handles.get(h)
        return value if isinstance(value, tuple) and value[0] == "buffer" else None

    def get_recent_err_msg():  # "obtains and clears" this thread's messages, newest on top
        said = "\n".join(reversed(state.unread_errors))
        state.unread_errors.clear()
        return said

    acl.init, acl.finalize = init, finalize
    acl.get_recent_err_msg = get_recent_err_msg
    acl.get_soc_name = lambda: state.soc_name
    acl.rt = _make_rt(state)
    acl.util = types.SimpleNamespace(
        bytes_to_ptr=lambda data: ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value,
        numpy_to_ptr=lambda arr: arr.ctypes.data,
        ptr_to_bytes=lambda ptr, size: ctypes.string_at(ptr, size),
        ptr_to_numpy=_ptr_to_numpy)
    acl.create_data_buffer = lambda ptr, size: state.handle(("buffer", ptr, size))
    acl.destroy_data_buffer = lambda h: state.release(h) if buffer(h) else ACL_ERROR_INVALID_PARAM
    acl.get_data_buffer_addr = lambda h: buffer(h)[1] if buffer(h) else 0
    acl.get_data_buffer_size = lambda h: buffer(h)[2] if buffer(h) else 0  # deprecated name
    acl.get_data_buffer_size_v2 = acl.get_data_buffer_size
    acl.mdl = _make_mdl(state, read_acl_json)

    def tensor_dims(h):
        value = state.handles.get(h)
        return value[1] if isinstance(value, tuple) and value[0] == "tensor_desc" else ()

    acl.get_tensor_desc_num_dims = lambda h: len(tensor_dims(h))
    acl.get_tensor_desc_dim_v2 = lambda h, k: (tensor_dims(h)[k], ACL_SUCCESS)
    acl.destroy_tensor_desc = lambda h: state.release(h)
    return acl


def _make_rt(state: FakeNpu) -> types.SimpleNamespace:
    def set_device(device_id):
        state.calls.append(f"rt.set_device({device_id})")
        if not state.acl_initialised:
            return ACL_ERROR_UNINITIALIZE
        if not 0 <= device_id < len(state.visible_devices()):  # ASCEND_RT_VISIBLE_DEVICES
            return ACL_ERROR_INVALID_DEVICE
        state.open_devices.add(device_id)
        state.current_device = device_id
        return ACL_SUCCESS

    def reset_device(device_id):
        state.calls.append(f"rt.reset_device({device_id})")
        state.open_devices.discard(device_id)
        return ACL_SUCCESS

    def create_context(device_id):
        state.calls.append(f"rt.create_context({device_id})")
        return state.handle(("context", device_id)), ACL_SUCCESS

    def destroy_context(ctx):
        state.calls.append("rt.destroy_context")
        return state.release(ctx)

    def set_context(ctx):
        value = state.handles.get(ctx)
        if not value or value[0] != "context":
            return ACL_ERROR_INVALID_PARAM
        state.current_device = value[1]
        return ACL_SUCCESS

    def create_stream():
        state.calls.append("rt.create_stream")
        stream = state.handle(("stream", state.current_device))
        state.streams[stream] = []
        return stream, ACL_SUCCESS

    def destroy_stream(stream):
        state.calls.append("rt.destroy_stream")
        state.streams.pop(stream, None)
        return state.release(stream)

    def synchronize_stream(stream):
        state.calls.append("rt.synchronize_stream")
        if stream not in state.streams:
            return ACL_ERROR_INVALID_PARAM
        state.synchronize(stream)
        return ACL_SUCCESS

    def synchronize_device():
        state.calls.append("rt.synchronize_device")
        state.synchronize()
        return ACL_SUCCESS

    def memcpy(dst, dst_max, src, count, kind):
        if count > dst_max:
            return ACL_ERROR_INVALID_PARAM
        ctypes.memmove(dst, src, count)
        return ACL_SUCCESS

    return types.SimpleNamespace(
        get_device_count=lambda: (len(state.visible_devices()), ACL_SUCCESS),
        get_run_mode=lambda: (ACL_HOST, ACL_SUCCESS),
        get_device=lambda: (state.current_device or 0, ACL_SUCCESS),
        set_device=set_device, reset_device=reset_device,
        create_context=create_context, destroy_context=destroy_context, set_context=set_context,
        create_stream=create_stream, destroy_stream=destroy_stream,
        synchronize_stream=synchronize_stream, synchronize_device=synchronize_device,
        malloc=lambda size, policy=0: (state.malloc(size), ACL_SUCCESS), free=state.free,
        malloc_host=lambda size: (state.malloc(size), ACL_SUCCESS), free_host=state.free,
        memcpy=memcpy)


def _make_mdl(state: FakeNpu, read_acl_json) -> types.SimpleNamespace:
    ran_in: dict = {}  # output dataset -> the shapes its last execution wrote
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
            state.record_error(str(exc))
            return ACL_ERROR_INVALID_PARAM
        if not Path(config["dump"]["dump_path"]).is_dir():
            state.record_error(f"dump_path {config['dump']['dump_path']} does not exist")
            return ACL_ERROR_INVALID_PARAM
        state.dump_config = config
        return ACL_SUCCESS

    def finalize_dump():
        state.calls.append("mdl.finalize_dump")
        for model in state.models.values():
            if model.under_set_dump:
                state.drop_in_flight(model, "acl.mdl.finalize_dump")
                model.under_set_dump = False
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
            state.record_error(str(exc))
            return 0, ACL_ERROR_INVALID_MODEL

    def unload(model_id):
        state.calls.append("mdl.unload")
        model = state.models.pop(model_id, None)
        if model is None:
            return ACL_ERROR_INVALID_PARAM
        if model.under_set_dump:
            state.protocol_errors.append(
                f"acl.mdl.unload({model_id}) before acl.mdl.finalize_dump: the documented order is "
                "execute -> finalize_dump -> unload")
        state.drop_in_flight(model, f"acl.mdl.unload({model_id})")
        return ACL_SUCCESS

    def desc_model(desc):
        return state.models[state.handles[desc][1]]

    def get_desc(desc, model_id):
        if model_id not in state.models:
            return ACL_ERROR_INVALID_PARAM
        state.handles[desc] = ("desc", model_id)
        return ACL_SUCCESS

    def dims(spec, shape=None):
        shape = spec[1] if shape is None else shape
        return {"name": spec[0], "dimCount": len(shape), "dims": list(shape)}, ACL_SUCCESS

    def cur_dims(d, i):  # the run's dims for a static om; -1 left where the om has them
        model = desc_model(d)  # (aclmdlGetCurOutputDims: dynamic outputs' come from
        spec = model.output_specs[i]  # aclmdlGetDatasetTensorDesc after execution)
        ran = model.last_dims[i] if i < len(model.last_dims) else None
        return dims(spec, None if any(d < 0 for d in spec[1]) else ran)

    def dataset_tensor_desc(ds, i):  # what an output held after its execution
        shape = ran_in.get(ds, ())[i] if i < len(ran_in.get(ds, ())) else None
        return 0 if shape is None else state.handle(("tensor_desc", tuple(shape)))

    def index_by_name(specs, name):
        names = [s[0] for s in specs]
        return (names.index(name), ACL_SUCCESS) if name in names else (0, ACL_ERROR_INVALID_PARAM)

    def add_dataset_buffer(ds, buf):
        state.handles[ds].append(buf)
        return ds, ACL_SUCCESS

    def run(model_id, in_ds, out_ds):
        model = state.models.get(model_id)
        if model is None:
            return ACL_ERROR_INVALID_PARAM
        feeds = {}
        for (name, shape, dtype), buf in zip(model.input_specs, state.handles[in_ds]):
            _, ptr, size = state.handles[buf]
            feeds[name] = np.frombuffer(ctypes.string_at(ptr, size), dtype=dtype).reshape(shape)
        try:
            outputs = state.execute(model_id, feeds)
        except FakeRunFailure as exc:
            state.record_error(str(exc))
            return ACL_ERROR_GE_FAILURE
        except (ValueError, KeyError) as exc:
            state.record_error(str(exc))
            return ACL_ERROR_INVALID_PARAM
        ran_in[out_ds] = [tuple(np.shape(a)) for a in outputs]
        for index, (array, buf) in enumerate(zip(outputs, state.handles[out_ds])):
            _, ptr, size = state.handles[buf]
            data = np.ascontiguousarray(array).tobytes()
            if ptr == 0 and size == 0:  # the runtime allocates it (aclmdlGetOutputSizeByIndex)
                ptr = state.malloc(len(data))
                state.handles[buf] = ("buffer", ptr, len(data))
            elif len(data) > size:
                name, om_dims, _ = model.output_specs[index]
                unknown = (f" (the om leaves its dims {list(om_dims)} unknown, so "
                           f"acl.mdl.get_output_size_by_index gives 0: a buffer created with "
                           f"data 0 and size 0 is allocated by the runtime)"
                           if any(d < 0 for d in om_dims) else "")
                state.record_error(f"output {index} ({name!r}) needs {len(data)} bytes; its "
                                   f"buffer holds {size}{unknown}")
                return ACL_ERROR_INVALID_PARAM
            ctypes.memmove(ptr, data, len(data))
        return ACL_SUCCESS

    def execute(model_id, in_ds, out_ds):
        state.calls.append("mdl.execute")
        return run(model_id, in_ds, out_ds)

    def execute_async(model_id, in_ds, out_ds, stream):
        state.calls.append("mdl.execute_async")
        if stream not in state.streams or model_id not in state.models:
            return ACL_ERROR_INVALID_PARAM
        state.streams[stream].append(lambda: run(model_id, in_ds, out_ds))
        return ACL_SUCCESS

    return types.SimpleNamespace(
        init_dump=init_dump, set_dump=set_dump, finalize_dump=finalize_dump,
        load_from_file=load_from_file, unload=unload,
        create_desc=lambda: state.handle(("desc", None)), get_desc=get_desc,
        destroy_desc=state.release,
        get_num_inputs=lambda d: len(desc_model(d).input_specs),
        get_num_outputs=lambda d: len(desc_model(d).output_specs),
        get_input_name_by_index=lambda d, i: desc_model(d).input_specs[i][0],
        get_output_name_by_index=lambda d, i: desc_model(d).output_specs[i][0],
        get_input_index_by_name=lambda d, name: index_by_name(desc_model(d).input_specs, name),
        get_output_index_by_name=lambda d, name: index_by_name(desc_model(d).output_specs, name),
        get_input_size_by_index=lambda d, i: om_size(*desc_model(d).input_specs[i][1:3]),
        get_output_size_by_index=lambda d, i: om_size(*desc_model(d).output_specs[i][1:3]),
        get_input_dims=lambda d, i: dims(desc_model(d).input_specs[i]),
        get_output_dims=lambda d, i: dims(desc_model(d).output_specs[i]),
        get_cur_output_dims=cur_dims, get_dataset_tensor_desc=dataset_tensor_desc,
        get_input_data_type=lambda d, i: NP_TO_ACL[desc_model(d).input_specs[i][2]],
        get_output_data_type=lambda d, i: NP_TO_ACL[desc_model(d).output_specs[i][2]],
        create_dataset=lambda: state.handle([]), add_dataset_buffer=add_dataset_buffer,
        destroy_dataset=state.release,
        get_dataset_num_buffers=lambda ds: len(state.handles[ds]),
        get_dataset_buffer=lambda ds, i: state.handles[ds][i],
        execute=execute, execute_async=execute_async)


def _ptr_to_numpy(ptr, shape, npy_type):
    """``acl.util.ptr_to_numpy(ptr, shape, npy_type)``: a numpy view of ``ptr`` memory; the
    type is a numpy type number (NPY_FLOAT32 = 11 in Ascend's samples)."""
    dtype = _NUMPY_TYPES[int(npy_type)]
    count = int(np.prod(shape, dtype=np.int64))
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(ptr)
    return np.frombuffer(raw, dtype=dtype, count=count).reshape(tuple(shape))


_NUMPY_TYPES = {np.dtype(t).num: np.dtype(t) for t in (
    np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
    np.longlong, np.ulonglong, np.float16, np.float32, np.float64)}
