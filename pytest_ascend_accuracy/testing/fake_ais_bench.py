"""FAKE ``ais_bench`` / ``ais_bench.infer`` / ``ais_bench.infer.interface`` modules for tests,
backed by the shared ``fake_npu.FakeNpu`` state. Not the real ais_bench; marked ``__fake__``.

``InferSession(device_id, model_path, acl_json_path=None, debug=False, loop=1)`` with
``get_inputs``, ``get_outputs``, ``infer(feeds, mode="static")``, ``free_resource`` and
``finalize``, as documented. Like aclruntime, only the first session of the process reads its
acl.json (aclruntime passes it to ``aclInit`` once); later sessions' acl.json are ignored.
``infer`` returns after the device is synchronised (aclruntime synchronises its stream), so the
dump files of that run are on disk when it returns.
"""
from __future__ import annotations

import types

import numpy as np

from .fake_npu import ACL_ERROR_INVALID_DEVICE, FakeNpu, FakeRunFailure


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

        def get_inputs(self):
            return [_desc(*spec) for spec in state.models[self.model_id].input_specs]

        def get_outputs(self):
            return [_desc(*spec) for spec in state.models[self.model_id].output_specs]

        def infer(self, feeds, mode="static", custom_sizes=100000):
            specs = state.models[self.model_id].input_specs
            if len(feeds) != len(specs):
                raise RuntimeError(f"fake aclruntime: {len(feeds)} inputs given, model has {len(specs)}")
            try:
                outputs = state.execute(self.model_id, {s[0]: np.asarray(f) for s, f in zip(specs, feeds)})
            except (ValueError, FakeRunFailure) as exc:
                raise RuntimeError(f"fake aclruntime: {exc}") from exc
            state.current_device = self.device_id
            state.synchronize()
            return outputs

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
    size = 0 if any(d < 0 for d in shape) else int(np.prod(shape)) * dtype.itemsize
    return types.SimpleNamespace(name=name, shape=list(shape), datatype=str(dtype), size=size)
