"""The Ascend runtime session: one device opened once, models run with dumps, closed at the end.

``AscendRuntime(device_id, runtime=...)`` picks a driver:

* ``"acl"``: pyACL (``import acl``), ``acl_driver.AclDriver``;
* ``"ais_bench"``: ais_bench's Python interface, ``ais_bench_driver.AisBenchDriver``;
* ``"auto"`` (default, or ``$ASCEND_ACCURACY_RUNTIME``): pyACL when importable, else ais_bench.
  pyACL comes first because it can set a dump configuration per run (``acl.mdl.set_dump``),
  while aclruntime applies acl.json only once per process (see ``ais_bench_driver``); both ship
  with a CANN installation, so on a real machine this choice costs nothing.

``run`` with a ``dump_path`` writes ``acl.json`` there (msit's shape, ``acl_json``), runs the model
once, then finds the single dump leaf of this run (``dump_dirs``). ``ascend_runtime_available``
tells the plugin, without opening a device, whether this machine can run the Ascend backend.
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ...core.env_names import RUNTIME_ENV, check_runtime
from ...errors import BackendError, ConfigError, ConversionError
from .acl_json import write_acl_json
from .dump_dirs import DumpLeaf, check_empty_dump_path, find_run_dump

ACL_JSON = "acl.json"
_MODULES = {"acl": "acl", "ais_bench": "ais_bench.infer.interface"}


@dataclass(frozen=True)
class RunResult:
    """Outputs of one run (in model output order) and, when dumping, the dump leaf."""

    outputs: Tuple[np.ndarray, ...]
    dump: Optional[DumpLeaf] = None
    acl_json: Optional[Path] = None


def resolve_runtime(runtime: Optional[str] = None) -> str:
    return check_runtime(runtime or os.environ.get(RUNTIME_ENV) or "auto", from_env=not runtime)


def importable_runtime(runtime: Optional[str] = None) -> Tuple[Optional[str], List[str]]:
    """(driver name that imports, [why each candidate did not])."""
    choice = resolve_runtime(runtime)
    candidates = ["acl", "ais_bench"] if choice == "auto" else [choice]
    problems = []
    for name in candidates:
        try:
            importlib.import_module(_MODULES[name])
            return name, problems
        except Exception as exc:  # ImportError, or OSError from a missing libascendcl.so
            problems.append(f"{_MODULES[name]}: {type(exc).__name__}: {exc}")
    return None, problems


def ascend_runtime_available(*, runtime: Optional[str] = None, need_atc: bool = True) -> Tuple[bool, str]:
    """(True, description) when a runtime module imports (and ATC is found, with ``need_atc``);
    otherwise (False, the reasons). Opens no device."""
    try:
        name, problems = importable_runtime(runtime)
    except ConfigError as exc:
        return False, str(exc)
    reasons = []
    if name is None:
        reasons.append("no Ascend runtime can be imported (" + "; ".join(problems) + "); install the "
                       "CANN toolkit/nnrt and `source set_env.sh` (pyACL) or install ais_bench")
    atc_text = ""
    if need_atc:
        from .toolkit import find_atc

        try:
            atc_text = f", atc {find_atc()}"
        except ConversionError as exc:
            reasons.append(str(exc))
    if reasons:
        return False, "; ".join(reasons)
    return True, f"Ascend runtime {name}{atc_text}"


class AscendRuntime:
    """One device for a whole session. Use as a context manager or call ``close()``."""

    def __init__(self, device_id: int = 0, *, runtime: Optional[str] = None):
        if not isinstance(device_id, int) or isinstance(device_id, bool) or device_id < 0:
            raise ConfigError("device_id", f"an Ascend device id is an integer >= 0, got {device_id!r}")
        self.device_id = device_id
        self.runtime = resolve_runtime(runtime)
        self._driver = None

    @property
    def driver(self):
        if self._driver is None:
            name, problems = importable_runtime(self.runtime)
            if name is None:
                raise BackendError("cannot run on Ascend device "
                                   f"{self.device_id}: no Ascend runtime can be imported ("
                                   + "; ".join(problems) + ")")
            if name == "acl":
                from .acl_driver import AclDriver

                self._driver = AclDriver(self.device_id)
            else:
                from .ais_bench_driver import AisBenchDriver

                self._driver = AisBenchDriver(self.device_id)
        return self._driver

    def open(self) -> "AscendRuntime":
        self.driver.open()
        return self

    def close(self) -> None:
        if self._driver is not None:
            self._driver.close()

    def __enter__(self) -> "AscendRuntime":
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    def soc_version(self) -> Optional[str]:
        """The chip name as ACL reports it (``acl.get_soc_name()``), e.g. ``Ascend310P3``."""
        return self.driver.soc_name()

    def describe(self) -> str:
        return f"{self.driver.name} on device {self.device_id}"

    def run(self, om_path: "str | os.PathLike[str]", inputs: Mapping[str, np.ndarray], *,
            model_name: str, dump_path: "str | os.PathLike[str] | None" = None,
            dump_model_names: Sequence[str] = (), dump_mode: str = "all",
            input_names: Sequence[str] = ()) -> RunResult:
        """Run once. With ``dump_path`` (empty or new) the run is dumped there and its leaf found."""
        driver = self.driver
        acl_json = None
        if dump_path is not None:
            dump_path = Path(dump_path)
            check_empty_dump_path(dump_path)
            names = [model_name] + [n for n in dump_model_names if n != model_name]
            acl_json = write_acl_json(dump_path / ACL_JSON, dump_path, names, dump_mode=dump_mode)
        outputs = driver.run(Path(om_path), inputs, acl_json=acl_json, input_names=input_names)
        leaf = None
        if dump_path is not None:
            from .ais_bench_driver import DUMP_LIMIT_HINT

            hint = DUMP_LIMIT_HINT if driver.name == "ais_bench" else None
            leaf = find_run_dump(dump_path, model_name=model_name, device_id=self.device_id, hint=hint)
        return RunResult(outputs=tuple(outputs), dump=leaf, acl_json=acl_json)
