"""Running an .om through pyACL (``import acl``), with per-run dump configuration.

The sequence is the one the pyACL documentation gives for dumping different models in one
process (``acl.mdl.init_dump`` / ``acl.mdl.finalize_dump`` pages, "execute two models with
different dump configurations")::

    acl.init -> acl.rt.set_device -> acl.rt.create_context            (open, once per session)
      acl.mdl.init_dump -> acl.mdl.set_dump(acl.json) -> load -> execute
      -> acl.rt.synchronize_device -> acl.mdl.finalize_dump -> unload  (each dumping run)
    acl.rt.destroy_context -> acl.rt.reset_device -> acl.finalize      (close)

``finalize_dump`` comes before ``unload`` (documented order), and the device is synchronised
after ``execute`` so every task of the run, the dump tasks included, has finished before the
dump is finalised and its files are read. Output shapes come from ``get_cur_output_dims`` (the
dims of the last execution; ``get_output_dims`` gives the static ones).

pyACL functions used (documented pyACL API): ``acl.init``, ``acl.finalize``, ``acl.get_soc_name``,
``acl.rt.{get_device_count,set_device,reset_device,create_context,destroy_context,set_context,
synchronize_device,malloc,free,malloc_host,free_host,memcpy}``, ``acl.util.{bytes_to_ptr|
numpy_to_ptr,ptr_to_bytes}``, ``acl.{create_data_buffer,destroy_data_buffer}``, ``acl.mdl.{
init_dump,set_dump,finalize_dump,load_from_file,unload,create_desc,get_desc,destroy_desc,
get_num_inputs,get_num_outputs,get_input_name_by_index,get_input_size_by_index,
get_output_size_by_index,get_cur_output_dims,get_output_data_type,create_dataset,
add_dataset_buffer,destroy_dataset,execute}``. Functions returning ``(value, ret)`` are
unpacked; a non-zero ``ret`` becomes a BackendError that names the call, the code and the device,
followed by what the runtime said about it: ``acl.get_recent_err_msg()`` ("obtains and clears the
error messages returned by other failed pyACL API calls in the calling thread", newest first;
None on failure), asked right after the failing call, as the pyACL documentation advises.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import List, Mapping, Optional, Sequence

import numpy as np

from ...errors import BackendError
from .input_checks import check_input

ACL_SUCCESS = 0
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
#: aclDataType -> numpy dtype (acl_base.h numbering).
ACL_DTYPES = {0: np.float32, 1: np.float16, 2: np.int8, 3: np.int32, 4: np.uint8, 6: np.int16,
              7: np.uint16, 8: np.uint32, 9: np.int64, 10: np.uint64, 11: np.float64, 12: np.bool_}


class AclDriver:
    """pyACL runtime for one device. ``open`` once, ``run`` many times, ``close`` once."""

    name = "acl"

    def __init__(self, device_id: int = 0):
        self.device_id = int(device_id)
        self._acl = None
        self._context = None
        self._finalize = False  # True when this driver's acl.init() initialised ACL

    # -- session ----------------------------------------------------------------------------------
    def open(self) -> None:
        if self._acl is not None:
            return
        acl = importlib.import_module("acl")
        ret = acl.init()
        if ret not in (ACL_SUCCESS, ACL_ERROR_REPEAT_INITIALIZE):
            raise BackendError(f"acl.init() failed with ACL error {ret}: the CANN runtime could not "
                               f"be initialised (is the driver installed and set_env.sh sourced?)"
                               + runtime_says(acl))
        owns_acl = ret == ACL_SUCCESS  # else someone else in this process initialised ACL
        try:
            count, ret = acl.rt.get_device_count()
            said = runtime_says(acl)  # drained: a tolerated init repeat's is not set_device's
            # a failed count is kept for set_device's error: it may be the same cause
            counted = (f"\n(acl.rt.get_device_count had failed too, ACL error {ret}{said})"
                       if ret != ACL_SUCCESS else "")
            if ret == ACL_SUCCESS and not 0 <= self.device_id < count:
                raise BackendError(f"Ascend device {self.device_id} does not exist: this machine has "
                                   f"{count} device(s)" + (f" (ids 0..{count - 1})" if count else ""))
            ret = acl.rt.set_device(self.device_id)
            if ret != ACL_SUCCESS:
                raise BackendError(f"could not open Ascend device {self.device_id}: "
                                   f"acl.rt.set_device returned ACL error {ret}" + runtime_says(acl)
                                   + counted)
            context, ret = acl.rt.create_context(self.device_id)
            if ret != ACL_SUCCESS:
                said = runtime_says(acl)  # before reset_device adds its own messages
                acl.rt.reset_device(self.device_id)
                raise BackendError(f"could not create a context on Ascend device {self.device_id}: "
                                   f"acl.rt.create_context returned ACL error {ret}" + said)
        except BaseException:
            if owns_acl:
                acl.finalize()
            raise
        self._acl, self._context, self._finalize = acl, context, owns_acl

    def close(self) -> None:
        acl, self._acl = self._acl, None
        if acl is None:
            return
        if self._context is not None:
            acl.rt.destroy_context(self._context)
            self._context = None
        acl.rt.reset_device(self.device_id)
        if self._finalize:
            acl.finalize()

    def soc_name(self) -> Optional[str]:
        self.open()
        name = self._acl.get_soc_name()
        return str(name) if name else None

    # -- one run -----------------------------------------------------------------------------------
    def run(self, om_path: Path, inputs: Mapping[str, np.ndarray], *,
            acl_json: Optional[Path] = None, input_names: Sequence[str] = ()) -> List[np.ndarray]:
        """Load ``om_path``, execute once on ``inputs`` (by name), return the outputs in order.
        With ``acl_json`` the model is loaded under that dump configuration."""
        self.open()
        acl = self._acl
        runtime_says(acl)  # what calls before this run left unread (unload's, a tolerated
        # init repeat's) is not this run's: asked and dropped, so an error here says only its own
        self._check(acl.rt.set_context(self._context), "acl.rt.set_context")
        dump = _DumpSession(acl) if acl_json is not None else None
        try:
            if dump is not None:
                self._check(acl.mdl.init_dump(), "acl.mdl.init_dump")
                dump.open = True
                self._check(acl.mdl.set_dump(str(acl_json)), f"acl.mdl.set_dump({acl_json})")
            model_id = self._value(acl.mdl.load_from_file(str(om_path)), f"acl.mdl.load_from_file({om_path})")
            try:
                outputs = self._execute(model_id, inputs, input_names)
            except BaseException:
                if dump is not None:
                    dump.finalize()
                acl.mdl.unload(model_id)
                raise
            finalized = dump.finalize() if dump is not None else ACL_SUCCESS  # before unload
            said = runtime_says(acl) if finalized != ACL_SUCCESS else ""  # before unload's
            acl.mdl.unload(model_id)
            if finalized != ACL_SUCCESS:
                raise BackendError(f"acl.mdl.finalize_dump failed with ACL error {finalized} on "
                                   f"Ascend device {self.device_id}" + said)
            return outputs
        finally:
            if dump is not None:
                dump.finalize()

    def _execute(self, model_id, inputs, input_names) -> List[np.ndarray]:
        acl = self._acl
        desc = acl.mdl.create_desc()
        resources: List = []  # (kind, handle) released in reverse order
        out_ds, by_runtime = None, []  # outputs whose memory the runtime allocates (size 0)
        try:
            self._check(acl.mdl.get_desc(desc, model_id), "acl.mdl.get_desc")
            in_ds = acl.mdl.create_dataset()
            resources.append(("dataset", in_ds))
            for i in range(acl.mdl.get_num_inputs(desc)):
                name = acl.mdl.get_input_name_by_index(desc, i)
                if name not in inputs and i < len(input_names) and input_names[i] in inputs:
                    name = input_names[i]
                if name not in inputs:
                    raise BackendError(f"the model expects input {name!r} (index {i}); given: "
                                       f"{', '.join(inputs) or 'none'}")
                size = acl.mdl.get_input_size_by_index(desc, i)
                array = check_input(name, inputs[name], self._input_dtype(desc, i), size,
                                    self._input_dims(desc, i))
                dev = self._device_buffer(size, resources)
                data = array.tobytes()
                self._check(acl.rt.memcpy(dev, size, self._host_ptr(data, array), size,
                                          ACL_MEMCPY_HOST_TO_DEVICE), "acl.rt.memcpy(host->device)")
                self._add(in_ds, dev, size, resources)
            out_ds = acl.mdl.create_dataset()
            resources.append(("dataset", out_ds))
            sizes = []
            for i in range(acl.mdl.get_num_outputs(desc)):
                size = acl.mdl.get_output_size_by_index(desc, i)
                # size 0: dims the om leaves unknown; a buffer of data 0 and size 0 has the
                # runtime allocate it at execution (aclmdlGetOutputSizeByIndex, method 1)
                sizes.append((self._device_buffer(size, resources) if size else 0, size, None))
                by_runtime += [] if size else [i]
                self._add(out_ds, sizes[-1][0], size, resources)
            self._check(acl.mdl.execute(model_id, in_ds, out_ds), "acl.mdl.execute")
            self._check(acl.rt.synchronize_device(), "acl.rt.synchronize_device")
            sizes = [self._allocated(out_ds, i) if i in by_runtime else item
                     for i, item in enumerate(sizes)]
            return [self._read_output(desc, i, *item) for i, item in enumerate(sizes)]
        finally:
            for i in by_runtime:  # the caller's to free, the run failed or not (H116)
                dev = acl.get_data_buffer_addr(acl.mdl.get_dataset_buffer(out_ds, i))
                if dev:
                    acl.rt.free(dev)
            for kind, handle in reversed(resources):
                if kind == "dataset":
                    acl.mdl.destroy_dataset(handle)
                elif kind == "buffer":
                    acl.destroy_data_buffer(handle)
                elif kind == "device":
                    acl.rt.free(handle)
            acl.mdl.destroy_desc(desc)

    def _allocated(self, out_ds, index):
        """(device pointer, size, dims) of output ``index``'s buffer that the runtime allocated
        at execution (the memory is the caller's to free, ``aclrtFree``, as the page says: the
        ``finally`` of ``_execute``); its dims from the dataset's tensor description, which
        describes a dynamic output after execution (aclmdlGetDatasetTensorDesc), where
        aclmdlGetCurOutputDims gives the om's dims, -1 where unknown (H116)."""
        acl = self._acl
        buf = acl.mdl.get_dataset_buffer(out_ds, index)
        dev, size = acl.get_data_buffer_addr(buf), acl.get_data_buffer_size_v2(buf)
        if not dev:
            raise BackendError(f"output {index}: the om leaves its size unknown (0) and the "
                               f"runtime allocated no buffer for it at execution")
        dims = None
        tensor = acl.mdl.get_dataset_tensor_desc(out_ds, index)
        if tensor:
            dims = [int(acl.get_tensor_desc_dim_v2(tensor, k)[0])
                    for k in range(acl.get_tensor_desc_num_dims(tensor))]
        return dev, size, dims

    def _read_output(self, desc, index, dev, size, ran_dims=None) -> np.ndarray:
        acl = self._acl
        host = self._value(acl.rt.malloc_host(size), "acl.rt.malloc_host")
        try:
            self._check(acl.rt.memcpy(host, size, dev, size, ACL_MEMCPY_DEVICE_TO_HOST),
                        "acl.rt.memcpy(device->host)")
            raw = acl.util.ptr_to_bytes(host, size)
        finally:
            acl.rt.free_host(host)
        if ran_dims is None:
            dims = self._value(acl.mdl.get_cur_output_dims(desc, index),
                               "acl.mdl.get_cur_output_dims")["dims"]
        else:
            dims = ran_dims
        code = acl.mdl.get_output_data_type(desc, index)
        if code not in ACL_DTYPES:
            raise BackendError(f"output {index} has ACL data type {code}, which this runtime cannot read")
        dtype = np.dtype(ACL_DTYPES[code])
        shape = tuple(int(d) for d in dims)
        count = int(np.prod(shape)) if shape else 1
        if any(d < 0 for d in shape) or count * dtype.itemsize > size:
            raise BackendError(f"output {index}: its dims {list(shape)} do not describe the "
                               f"{size} bytes the runtime returned")
        return np.frombuffer(raw, dtype=dtype, count=count).reshape(shape).copy()

    # -- helpers -----------------------------------------------------------------------------------
    def _input_dtype(self, desc, index):
        """The om input's numpy dtype (``acl.mdl.get_input_data_type``), None if unknown."""
        code = self._acl.mdl.get_input_data_type(desc, index)
        return np.dtype(ACL_DTYPES[code]) if code in ACL_DTYPES else None

    def _input_dims(self, desc, index):
        """The om input's dims (``acl.mdl.get_input_dims``), None where it reports none."""
        dims, ret = self._acl.mdl.get_input_dims(desc, index)
        return [int(d) for d in dims["dims"]] if ret == ACL_SUCCESS and dims else None

    def _device_buffer(self, size, resources):
        dev = self._value(self._acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST), "acl.rt.malloc")
        resources.append(("device", dev))
        return dev

    def _add(self, dataset, dev, size, resources):
        buf = self._acl.create_data_buffer(dev, size)
        resources.append(("buffer", buf))
        _, ret = self._acl.mdl.add_dataset_buffer(dataset, buf)
        self._check(ret, "acl.mdl.add_dataset_buffer")

    def _host_ptr(self, data: bytes, array: np.ndarray):
        util = self._acl.util
        if hasattr(util, "bytes_to_ptr"):  # pyACL >= 6: numpy_to_ptr is deprecated
            return util.bytes_to_ptr(data)
        return util.numpy_to_ptr(array)

    def _value(self, pair, what):
        value, ret = pair
        self._check(ret, what)
        return value

    def _check(self, ret, what) -> None:
        if ret != ACL_SUCCESS:
            raise BackendError(f"{what} failed with ACL error {ret} on Ascend device "
                               f"{self.device_id}" + runtime_says(self._acl))


def runtime_says(acl) -> str:
    """What pyACL said about the call that just failed, as lines to append to an error message
    (empty when it says nothing, or its pyACL has no ``get_recent_err_msg``)."""
    ask = getattr(acl, "get_recent_err_msg", None)
    if ask is None:
        return ""
    try:
        said = ask()
    except Exception:  # noqa: BLE001 -- the error being reported matters more than this one
        return ""
    lines = [line.rstrip() for line in str(said or "").strip().splitlines() if line.strip()]
    if not lines:
        return ""
    return ("\nthe runtime says (acl.get_recent_err_msg()):\n"
            + "\n".join("  " + line for line in lines))


class _DumpSession:
    """``init_dump`` .. ``finalize_dump`` of one run; ``finalize`` runs at most once."""

    def __init__(self, acl):
        self.acl = acl
        self.open = False

    def finalize(self) -> int:
        if not self.open:
            return ACL_SUCCESS
        self.open = False
        return self.acl.mdl.finalize_dump()
