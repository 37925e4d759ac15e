"""FAKE ``ais_bench`` / ``ais_bench.infer`` / ``ais_bench.infer.interface`` modules for tests,
backed by the shared ``fake_npu.FakeNpu`` state. Not the real ais_bench; marked ``__fake__``.

``InferSession(device_id, model_path, acl_json_path=None, debug=False, loop=1)`` with
``get_inputs``, ``get_outputs``, ``infer(feeds, mode="static", custom_sizes=100000)``,
``free_resource`` and ``finalize``, as documented. Like aclruntime, only the first session of the
process reads its acl.json (aclruntime passes it to ``aclInit`` once); later sessions' acl.json
are ignored. ``infer`` returns after the device is synchronised (aclruntime synchronises its
stream), so the dump files of that run are on disk when it returns.

``infer`` as ais_bench's ``interface.py`` and aclruntime's ``ModelInferenceProcessor.cpp`` do it
(ait mirror mjlovesz/sync-ait, ``ait/components/benchmark``):

* ``mode`` picks a prepare step from ``infer_mode_switch`` (static, dymbatch, dymhw, dymdims,
  dymshape); any other is "wrong infer_mode". The gear modes get interface.py's own checks;
  a model passing them is refused, the fake builds no gears. ``dymshape`` sets the input
  shapes and the output sizes: an int ``custom_sizes`` becomes one per output
  (``set_custom_outsize``, kept by the session, as aclruntime keeps ``customOutTensorSize_``);
* inputs are compared by byte count only (``CheckInVectorAndFillBaseTensor``: the desc's size,
  or in dymshape the size of the shape given) and read as the om's dtype and dims, as the device
  reads the bytes (a 0-d ``sr`` fed as ``[1]`` runs, as on the real one);
* each output's buffer is allocated before the run (``CreateOutMemoryData``) from its custom
  size where one is set, else its desc size: a size of 0 (dims the om leaves unknown:
  NonZero) fails with APP_ERR_INFER_OUTPUTSIZE_IS_ZERO, logged "out i:N size is zero"; an
  output larger than its buffer fails the execution (the fake names the size it needed). In
  static mode an output's dims are the om's (aclmdlGetCurOutputDims), each cast to uint32
  (``AddOutTensors``): -1 becomes 4294967295, which the fake refuses to make an array of.

Failures are RuntimeErrors worded as ``PyInferenceSession`` words them, ``GetError(ret)``:
``[code][text] `` (APP_ERR_ACL_FAILURE -1 "ACL: general failure"; 3011, which aclruntime's
message table lacks, "Undefined error code"), followed by the fake's copy of the log line.
"""
from __future__ import annotations

import types

import numpy as np

from .fake_npu import ACL_ERROR_INVALID_DEVICE, FakeNpu, FakeRunFailure, om_size

#: interface.py's ``infer_mode_switch`` keys, and its words for any other mode
INFER_MODES = ("static", "dymbatch", "dymhw", "dymdims", "dymshape")
WRONG_MODE = ('wrong infer_mode:{}, only support "static","dymbatch","dymhw", '
              '                "dymdims","dymshape"')
#: ``GetError(ret)`` of APP_ERR_ACL_FAILURE and APP_ERR_INFER_OUTPUTSIZE_IS_ZERO
ACL_FAILURE = "[-1][ACL: general failure] "
OUTPUTSIZE_IS_ZERO = "[3011][Undefined error code] "


def make_ais_bench_modules(state: FakeNpu):
    """FAKE ``ais_bench``, ``ais_bench.infer`` and ``ais_bench.infer.interface`` modules."""
    from ..backends.ascend.acl_json import read_acl_json

    class InferSession:
        """FAKE ais_bench InferSession (aclruntime semantics: acl.json read once per process)."""

        def __init__(self, device_id, model_path, acl_json_path=None, debug=False, loop=1):
            state.calls.append(f"InferSession({device_id})")
            if not 0 <= device_id < len(state.visible_devices()):  # ASCEND_RT_VISIBLE_DEVICES
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
            self._shapes = None  # the input shapes set by dymshape
            self._custom_sizes = []  # aclruntime's customOutTensorSize_

        def get_inputs(self):
            return [_desc(*spec) for spec in state.models[self.model_id].input_specs]

        def get_outputs(self):
            return [_desc(*spec) for spec in state.models[self.model_id].output_specs]

        def infer(self, feeds, mode="static", custom_sizes=100000, out_array=True):
            arrays, shapes = [], []
            for feed in feeds:  # interface.py: numpy arrays and numpy scalars
                if not isinstance(feed, (np.ndarray, np.generic)):
                    raise RuntimeError(f"type:{type(feed)} invalid")
                arrays.append(np.ascontiguousarray(feed) if isinstance(feed, np.generic)
                              or not feed.flags.c_contiguous else feed)
                shapes.append(list(feed.shape) if isinstance(feed, np.ndarray) else [feed.size])
            if mode not in INFER_MODES:
                raise RuntimeError(WRONG_MODE.format(mode))
            getattr(self, f"_{mode}_prepare")(shapes, custom_sizes)
            return self._run(arrays)

        # -- interface.py's prepare steps ----------------------------------------------------
        def _static_prepare(self, shapes, custom_sizes):
            self._shapes = None  # SetStaticBatch; the custom sizes stay (customOutTensorSize_)

        def _dymbatch_prepare(self, shapes, custom_sizes):
            descs = self._matched(shapes)
            for desc, shape in zip(descs, shapes):
                for want, dim in zip(desc.shape, shape):
                    if want < 0:
                        self._no_gears("dymbatch")
                    if want != dim:
                        raise RuntimeError("input datas and intensors dim not matched!")
            raise RuntimeError("not a dymbatch model!")

        def _dymhw_prepare(self, shapes, custom_sizes):
            for desc in self._matched(shapes):
                if desc.shape[2] < 0 and desc.shape[3] < 0:
                    self._no_gears("dymhw")
            raise RuntimeError("not a dymhw model!")

        def _dymdims_prepare(self, shapes, custom_sizes):
            self._matched(shapes)
            self._no_gears("dymdims")

        def _dymshape_prepare(self, shapes, custom_sizes):
            self._matched(shapes)
            self._shapes = [tuple(int(d) for d in s) for s in shapes]  # set_dynamic_shape
            if isinstance(custom_sizes, int):
                custom_sizes = [custom_sizes] * len(self.get_outputs())
            elif not isinstance(custom_sizes, list):
                raise RuntimeError(f"custom_sizes:{custom_sizes} type:{type(custom_sizes)} invalid")
            self._custom_sizes = [int(c) for c in custom_sizes]  # set_custom_outsize

        def _matched(self, shapes):
            descs = self.get_inputs()
            if len(shapes) != len(descs):
                raise RuntimeError("input datas and intensors nums not matched!")
            return descs

        def _no_gears(self, mode):
            raise RuntimeError(f"{ACL_FAILURE}(fake aclruntime: mode {mode!r} needs an om "
                               f"converted with gears, which the FAKE runtime does not model)")

        # -- aclruntime's Inference ----------------------------------------------------------
        def _run(self, arrays):
            model = state.models[self.model_id]
            specs = model.input_specs
            if len(arrays) != len(specs):  # SetInputsData
                raise RuntimeError(f"{ACL_FAILURE}(fake aclruntime: intensors in:{len(arrays)} "
                                   f"need:{len(specs)} not match)")
            feeds = {}
            for i, ((name, dims, dtype), array) in enumerate(zip(specs, arrays)):
                dims = self._shapes[i] if self._shapes else dims
                need = om_size(dims, dtype)
                if array.nbytes != need:  # CheckInVectorAndFillBaseTensor: bytes only
                    raise RuntimeError(f"{ACL_FAILURE}(fake aclruntime: Check i:{i} name:{name} "
                                       f"in size:{array.nbytes} needsize:{need} not match)")
                feeds[name] = np.frombuffer(array.tobytes(), dtype=dtype).reshape(dims)
            sizes = self._output_sizes(model)
            try:
                outputs = state.execute(self.model_id, feeds)
            except (ValueError, FakeRunFailure) as exc:
                raise RuntimeError(f"{ACL_FAILURE}(fake aclruntime: {exc})") from exc
            state.current_device = self.device_id
            state.synchronize()
            for i, (output, size) in enumerate(zip(outputs, sizes)):
                if np.asarray(output).nbytes > size:
                    raise RuntimeError(
                        f"{ACL_FAILURE}(fake aclruntime: acl execute failed: output i:{i} "
                        f"({model.output_specs[i][0]}) needs {np.asarray(output).nbytes} bytes, "
                        f"its buffer has {size}: give custom_sizes of at least that)")
                dims = model.output_specs[i][1]
                if self._shapes is None and any(d < 0 for d in dims):
                    u32 = [int(d) & 0xFFFFFFFF for d in dims]  # AddOutTensors' uint32 cast
                    raise RuntimeError(
                        f"fake aclruntime: static mode gives output i:{i} "
                        f"({model.output_specs[i][0]}) the om's dims {list(dims)} "
                        f"(aclmdlGetCurOutputDims) cast to uint32, {u32}, over its {size}-byte "
                        f"buffer: no array can be made of that (the real one hands numpy a "
                        f"tensor of those dims)")
            return outputs

        def _output_sizes(self, model):
            """CreateOutMemoryData: custom sizes first, then each desc's size; 0 refused."""
            sizes = []
            for i, (_, dims, dtype) in enumerate(model.output_specs):
                custom = self._custom_sizes
                size = custom[i] if i < len(custom) else om_size(dims, dtype)
                if size == 0:
                    raise RuntimeError(f"{OUTPUTSIZE_IS_ZERO}(fake aclruntime log: [ERROR] out "
                                       f"i:{i} size is zero)")
                sizes.append(size)
            return sizes

        def free_resource(self):
            if not self._freed:
                model = state.models.pop(self.model_id, None)
                if model is not None:
                    state.drop_in_flight(model, "InferSession.free_resource")
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


def _desc(name, shape, dtype):
    """An input/output description; size 0 where the om leaves a dim unknown (-1)."""
    size = om_size(shape, dtype)
    return types.SimpleNamespace(name=name, shape=list(shape), datatype=str(dtype), size=size,
                                 realsize=size)
