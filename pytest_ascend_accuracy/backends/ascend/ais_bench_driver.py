"""Running an .om through ais_bench's Python interface (``ais_bench.infer.interface``).

``InferSession(device_id, model_path, acl_json_path=None, debug=False, loop=1)`` loads the model,
``infer(feeds, mode="static")`` runs it and returns numpy arrays, ``free_resource()`` releases it
(documented ais_bench API). One session is created per run, with that run's acl.json.

An om output whose size the om leaves unknown (aclmdlGetOutputSizeByIndex 0: NonZero, an If
whose branches differ in shape; or dims with -1) cannot be run here: aclruntime allocates every
output buffer before the run from that size (``CreateOutMemoryData``), so static mode fails
("out i:N size is zero"; with a size but -1 dims it returns the whole buffer with dims
4294967295), and dymshape needs each output's byte size (``custom_sizes``) up front, which this
plugin cannot know. ``check_output_sizes`` refuses such an om before the run, pointing to pyACL,
whose driver has the runtime allocate those outputs at execution.

Known limit, from aclruntime's source (``DeviceManager::InitDevices``): the acl.json path is handed
to ``aclInit`` when aclruntime initialises ACL, which it does once, for the first session of the
process. A later session's acl.json is therefore not read and, for a different model or dump
path, no dump appears. The runtime detects that (no dump leaf after the run) and says so; the
pyACL driver (``AclDriver``) configures dumps per run and has no such limit, which is why
``runtime="auto"`` prefers it.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import List, Mapping, Optional, Sequence

import numpy as np

from ...errors import BackendError
from .input_checks import ais_bench_dtype, check_input

#: how advice names the pyACL runtime, the one way past this driver's limits
ACL_RUNTIME_ADVICE = ("the pyACL runtime (AscendBackend(runtime='acl') or "
                      "ASCEND_ACCURACY_RUNTIME=acl)")
#: appended to "no dump written" errors raised for this driver.
DUMP_LIMIT_HINT = ("With the ais_bench runtime, aclruntime reads acl.json only when it initialises "
                   "ACL (the first InferSession of the process), so later models are not dumped; "
                   f"use {ACL_RUNTIME_ADVICE} to dump several models in one session.")


class AisBenchDriver:
    """ais_bench runtime for one device."""

    name = "ais_bench"

    def __init__(self, device_id: int = 0):
        self.device_id = int(device_id)
        self._interface = None
        self._last_session = None

    def open(self) -> None:
        if self._interface is None:
            self._interface = importlib.import_module("ais_bench.infer.interface")

    def close(self) -> None:
        session, self._last_session = self._last_session, None
        if session is not None and hasattr(session, "finalize"):
            session.finalize()
        self._interface = None

    def soc_name(self) -> Optional[str]:
        """ais_bench has no soc query; pyACL's is used when importable."""
        try:
            acl = importlib.import_module("acl")
        except ImportError:
            return None
        name = acl.get_soc_name()
        return str(name) if name else None

    def run(self, om_path: Path, inputs: Mapping[str, np.ndarray], *,
            acl_json: Optional[Path] = None, input_names: Sequence[str] = ()) -> List[np.ndarray]:
        self.open()
        try:
            session = self._interface.InferSession(
                self.device_id, str(om_path), acl_json_path=str(acl_json) if acl_json else None)
        except Exception as exc:  # aclruntime raises RuntimeError (and pybind11 errors) on failure
            raise BackendError(f"ais_bench could not load {om_path} on Ascend device {self.device_id}: "
                               f"{exc}") from exc
        try:
            check_output_sizes(om_path, session.get_outputs())
            descs = list(session.get_inputs())
            feeds = []
            for i, desc in enumerate(descs):
                name = desc.name
                key = name if name in inputs else (input_names[i] if i < len(input_names) else name)
                if key not in inputs:
                    raise BackendError(f"the model expects input {name!r} (index {i}); given: "
                                       f"{', '.join(inputs) or 'none'}")
                # the dtype only: aclruntime checks sizes itself (its desc's size is not
                # documented as the byte count this driver would compare)
                feeds.append(check_input(name, inputs[key], ais_bench_dtype(desc), None,
                                         getattr(desc, "shape", None)))
            try:
                outputs = session.infer(feeds, mode="static")
            except Exception as exc:
                raise BackendError(f"ais_bench inference of {om_path} failed on Ascend device "
                                   f"{self.device_id}: {exc}") from exc
            return [np.asarray(o) for o in outputs]
        finally:
            if hasattr(session, "free_resource"):
                session.free_resource()
            self._last_session = session


def check_output_sizes(om_path: Path, descs) -> None:
    """BackendError naming the outputs of ``descs`` (``session.get_outputs()``) whose byte size
    the om leaves unknown (size 0, or a dim below 0), and the runtime that runs them."""
    unknown = []
    for i, desc in enumerate(descs):
        dims = [int(d) for d in (getattr(desc, "shape", None) or ())]
        size = int(getattr(desc, "size", 0) or 0)
        if size == 0 or any(d < 0 for d in dims):
            unknown.append(f"{getattr(desc, 'name', None) or f'output {i}'!r} (dims {dims}, "
                           f"size {size})")
    if not unknown:
        return
    raise BackendError(
        f"the ais_bench runtime cannot run {om_path}: the om leaves the size of output(s) "
        f"{', '.join(unknown)} unknown until the run (e.g. NonZero, or an If whose branches "
        f"differ in shape), and aclruntime allocates every output buffer before the run: "
        f"static mode refuses a size of 0 and returns unknown dims as 4294967295, dymshape "
        f"needs byte sizes this plugin cannot know. Use {ACL_RUNTIME_ADVICE}: it has the "
        f"runtime allocate such outputs at execution.{_acl_import_note()}")


def _acl_import_note() -> str:
    """Where pyACL does not import here, why (the advice needs it)."""
    try:
        importlib.import_module("acl")
    except Exception as exc:  # ImportError, or OSError from a missing libascendcl.so
        return (f" pyACL does not import in this process ({type(exc).__name__}: {exc}): it "
                f"ships with the CANN toolkit/nnrt; `source set_env.sh` first.")
    return ""
