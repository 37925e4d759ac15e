"""The ``acl.json`` dump configuration (docs/formats.md §3), written exactly as msit writes it.

msit (``components/debug/compare/msquickcmp/npu/npu_dump_data.py``) writes::

    {"dump": {"dump_list": [{"model_name": <om stem>}, {"model_name": <sub-graph>} ...],
              "dump_path": <dir>, "dump_mode": "all", "dump_op_switch": "off"}}

``dump_list`` holds one object per model name (the om file stem, plus any sub-graph names from
the om json); ``layer`` (op names) limits the dump to those ops; ``dump_path`` must exist and be
writable; ``dump_mode`` is ``output`` (ACL's default), ``input`` or ``all``. The optional keys
``dump_data`` (``tensor``/``stats``) and ``dump_level`` (``op``/``kernel``/``all``) are written
only when asked for, so the default file is byte-for-byte msit's shape.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict, Iterable, Mapping, Optional, Sequence

from ...errors import ConfigError
from ..dump_modes import check_dump_mode

DUMP_DATA = ("tensor", "stats")
DUMP_LEVELS = ("op", "kernel", "all")


def dump_config(dump_path: "str | os.PathLike[str]", model_names: Sequence[str], *,
                dump_mode: str = "all", layers: Optional[Mapping[str, Iterable[str]]] = None,
                dump_data: Optional[str] = None, dump_level: Optional[str] = None) -> Dict[str, object]:
    """The acl.json content as a dict. ``layers`` maps a model name to the op names to dump."""
    check_dump_mode(dump_mode, "acl.json dump_mode")
    if dump_data is not None and dump_data not in DUMP_DATA:
        raise ConfigError("acl.json dump_data", f"expected one of {', '.join(DUMP_DATA)}, got {dump_data!r}")
    if dump_level is not None and dump_level not in DUMP_LEVELS:
        raise ConfigError("acl.json dump_level", f"expected one of {', '.join(DUMP_LEVELS)}, got {dump_level!r}")
    names = []
    for name in model_names:
        if not name or not isinstance(name, str):
            raise ConfigError("acl.json dump_list", f"model name must be a non-empty string, got {name!r}")
        if name not in names:
            names.append(name)
    if not names:
        raise ConfigError("acl.json dump_list", "at least one model name is required")
    dump_list = []
    for name in names:
        entry: Dict[str, object] = {"model_name": name}
        if layers and name in layers:
            entry["layer"] = list(layers[name])
        dump_list.append(entry)
    dump: Dict[str, object] = {
        "dump_list": dump_list,
        "dump_path": os.fspath(dump_path),
        "dump_mode": dump_mode,
        "dump_op_switch": "off",
    }
    if dump_data is not None:
        dump["dump_data"] = dump_data
    if dump_level is not None:
        dump["dump_level"] = dump_level
    return {"dump": dump}


def write_acl_json(path: "str | os.PathLike[str]", dump_path: "str | os.PathLike[str]",
                   model_names: Sequence[str], **options) -> Path:
    """Write acl.json at ``path`` (creating ``dump_path``, which ACL requires to exist)."""
    config = dump_config(Path(dump_path).resolve(), model_names, **options)
    Path(dump_path).mkdir(parents=True, exist_ok=True)
    path = Path(path)
    path.write_text(json.dumps(config, indent=4) + "\n", encoding="utf-8")
    return path


def read_acl_json(path: "str | os.PathLike[str]") -> Dict[str, object]:
    """Read and check an acl.json dump configuration (used by the fake runtime and tests)."""
    from ...errors import DumpFormatError

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise DumpFormatError(path, f"cannot read acl.json ({exc.strerror or exc})") from exc
    except ValueError as exc:
        raise DumpFormatError(path, f"acl.json is not valid JSON ({exc})") from exc
    dump = data.get("dump") if isinstance(data, dict) else None
    if not isinstance(dump, dict):
        raise DumpFormatError(path, "acl.json has no 'dump' object")
    if not isinstance(dump.get("dump_list"), list) or not dump.get("dump_path"):
        raise DumpFormatError(path, "acl.json 'dump' needs 'dump_list' and 'dump_path'")
    return data
