"""The environment header of a baseline, and where baseline files live.

The environment is what makes metric values comparable: backend, toolkit version, SoC, the ATC
arguments and the conversion mode. ``environment_for(converted)`` builds it from a
``ConvertedModel`` of either backend, without machine paths (the model path, the output prefix
and the log level are left out of the ATC arguments; an absolute path anywhere in a header is
refused), so one baseline file is shared by every machine that runs the test.

Where a baseline lives: ``<baseline dir>/<model key>/<mode>.yaml``. The model key is the model
file's path relative to the rootdir, without its suffix (``team_a/model``), so
``team_a/model.onnx`` and ``team_b/model.onnx`` never share a baseline; the file's sha256 is
recorded with it, so a changed model is reported as such. Baselines written before keyed by the
file's stem alone (``<baseline dir>/model/<mode>.yaml``); ``locate_baseline`` still finds one
there (see ``core.locations``) until it is moved. An in-memory model is keyed by its graph
name and the test that checks it (``model_key``'s ``owner``), its sha256 recorded the same way.
Each inputs case of a model x mode has a file of its own: ``<mode>.yaml`` is the default
inputs' (seed 0), another case's is ``<mode>/<case>.yaml`` (``baseline.cases.locate_case``,
built on ``locate_baseline``).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

from .file import ENVIRONMENT_KEYS
from ..graph.content_digests import model_sha256
from ..core.locations import Located
from ..errors import ConfigError

#: ATC arguments that never change numbers and hold machine-specific values
_NOT_NUMERIC = ("--model=", "--output=", "--log=")
BASELINE_SUFFIX = ".yaml"


def normalise_environment(header: Mapping[str, object], where: str = "baseline header", *,
                          required: Sequence[str] = ENVIRONMENT_KEYS) -> Dict[str, object]:
    """Check a caller's environment header: string keys, plain values (str, int, float, bool,
    None, lists of them), the ``required`` keys present, and no absolute paths (a baseline
    is shared between machines). Tuples become lists, so a tuple and a list compare equal."""
    if not isinstance(header, Mapping):
        raise ConfigError(where, f"expected a mapping, got {type(header).__name__}")
    missing = [k for k in required if k not in header]
    if missing:
        raise ConfigError(where, f"missing {', '.join(missing)} (every baseline records "
                                 f"{', '.join(required)})")
    out: Dict[str, object] = {}
    for key, value in header.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise ConfigError(where, f"key {key!r} must be an identifier")
        out[key] = _check_value(value, f"{where}: {key}")
    return out


def _check_value(value, where: str):
    if isinstance(value, (list, tuple)):
        return [_check_value(v, where) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        if looks_like_absolute_path(value):
            raise ConfigError(where, f"{value!r} holds an absolute path; baselines are shared "
                                     "between machines (use a name or a relative path)")
        return value
    raise ConfigError(where, f"value {value!r} must be a string, number, bool, null or list")


def looks_like_absolute_path(text: str) -> bool:
    """``/abs``, ``~/x``, ``C:\\x`` or an option whose value is one (``--model=/abs/m.onnx``)."""
    value = text.split("=", 1)[1] if text.startswith("-") and "=" in text else text
    return (value.startswith(("/", "~")) or (len(value) > 2 and value[1] == ":"
                                            and value[2] in "\\/" and value[0].isalpha()))


def mode_items(mode) -> List[str]:
    """A mode as sorted ``name=value`` strings (lists joined by commas, empty lists left out),
    label excluded: ``["buffer_optimize=l2_optimize", "fusion=True", ...]``."""
    out = []
    for key, value in sorted(mode.key().items()):
        if isinstance(value, list):
            if not value:
                continue
            value = ",".join("=".join(v) if isinstance(v, list) else str(v) for v in value)
        out.append(f"{key}={value}")
    return out


def atc_args_of(argv: Sequence[str]) -> List[str]:
    """ATC argv without the executable, ``--model``, ``--output`` and ``--log`` (machine paths and
    settings that do not change numbers); an absolute file path keeps only its file name."""
    return [_without_machine_path(arg) for arg in list(argv)[1:] if not arg.startswith(_NOT_NUMERIC)]


def _without_machine_path(arg: str) -> str:
    """``--name=/abs/dir/file.cfg`` -> ``--name=file.cfg``; other arguments as they are."""
    if arg.startswith("--") and "=" in arg:
        name, value = arg.split("=", 1)
        if looks_like_absolute_path(value):
            return f"{name}={os.path.basename(value)}"
    return arg


def environment_for(converted, **extra) -> Dict[str, object]:
    """The environment header of a ``ConvertedModel`` (emulator or ascend backend); ``extra``
    plain keys are added (e.g. ``precision_policy="auto"``)."""
    info = dict(converted.info or {})
    env: Dict[str, object] = {"backend": converted.backend}
    if converted.backend == "emulator":
        from ..backends.emulator.numerics import numerics_version
        from ..graph.onnx_graph import ort_version

        user = (info.get("emulator") or {}).get("atc_options") or {}
        numerics = numerics_version(info.get("emulator"))  # its own model's (numerics.py)
        # a float16-only SoC (--soc-version=Ascend310P3) computes kept Cube ops otherwise: its
        # baselines differ by their environment ("rebaseline required", a review: "REGRESSED");
        # no SoC and an A2/A3 one compute alike and share "emulator"
        cube = info.get("cube_kernels") or ""
        env.update(toolkit_version=f"emulator-{numerics}/onnxruntime-{ort_version()}",
                   soc_version="emulator" + (" (cube-fp16)" if cube == "cube-fp16" else ""),
                   atc_args=[f"--{k}={v}" for k, v in converted.mode.atc_options()]
                   # an AIPP file (insert_op_conf=) is an absolute path: its name only, as
                   # on the ascend backend
                   + [_without_machine_path(f"--{k}={v}") for k, v in sorted(user.items())
                      if not f"--{k}=".startswith(_NOT_NUMERIC)],
                   overflow=info.get("overflow"), faults=list(info.get("faults") or []))
    else:
        env.update(toolkit_version=info.get("toolkit_version"),
                   soc_version=info.get("soc_version"),
                   atc_args=atc_args_of(info.get("atc_command") or ["atc"]))
    env["mode"] = mode_items(converted.mode)
    env.update(extra)
    return normalise_environment(env, f"environment of {converted.model_name!r}")


#: environment keys that only one backend records (``environment_for``): the emulator's overflow
#: behaviour and its injected faults describe the emulator, and a device has neither
BACKEND_ONLY_KEYS: Dict[str, Tuple[str, ...]] = {"emulator": ("overflow", "faults")}


def backend_only_keys(a: Mapping[str, object], b: Mapping[str, object]) -> FrozenSet[str]:
    """The keys of environments ``a`` and ``b`` that one side's backend alone records
    (``BACKEND_ONLY_KEYS``) and the other side lacks, where the two backends differ: the
    backend's own change is the change there, not one more per field it alone has (a baseline
    moved from the emulator to a device listed ``faults: [] -> None`` and ``overflow: 'inf' ->
    None`` beside ``backend: 'emulator' -> 'ascend'``: a CI trial)."""
    if a.get("backend") == b.get("backend"):
        return frozenset()
    out = set()
    for mine, other in ((a, b), (b, a)):
        own = BACKEND_ONLY_KEYS.get(str(mine.get("backend")), ())
        out.update(k for k in own if k in mine and k not in other)
    return frozenset(out)


def _safe(name: str) -> str:
    text = "".join(c if c.isalnum() or c in "-_.+=," else "_" for c in str(name)).strip(".")
    if len(text) > 100 or not text:
        digest = hashlib.sha256(str(name).encode("utf-8")).hexdigest()[:10]
        text = f"{text[:80]}-{digest}"
    return text


def baseline_label(mode, atc_options: Optional[Mapping[str, object]] = None) -> str:
    """What names a conversion's baseline file: the mode's name, then each extra ATC option of
    the user's that changes numbers as ``+name=value`` (a file by its name; the caller leaves
    out the neutral ones): a model converted with an AIPP file (``insert_op_conf``) and without
    one are two conversions, and shared one baseline, each run finding the other's "rebaseline
    required"."""
    label = str(getattr(mode, "name", mode))
    for name, value in sorted((str(k).lstrip("-"), v) for k, v in (atc_options or {}).items()):
        label += "+" + _without_machine_path(f"--{name}={value}")[2:]
    return label


def baseline_path(root, model_name: str, mode="default") -> Path:
    """``root/<model>/<mode>.yaml`` with both names made file-name safe (a long mode name is
    shortened with a hash of the full name, so two modes never share a file)."""
    label = getattr(mode, "name", mode)
    return Path(root) / _safe(model_name) / f"{_safe(label)}{BASELINE_SUFFIX}"


def key_path(root, key: str, mode="default", *, exact: bool = True) -> Path:
    """``root/<key>/<mode>.yaml`` for a ``model_key`` of a model file: each ``/``-separated part
    of the key is made file-name safe on its own (``..`` and empty parts are dropped). A part
    that making it safe changed (``team a``) also gets a digest of itself, so two keys never
    share a file (``team a/model`` and ``team_a/model`` did); ``exact=False``: the spelling
    without the digests, where such baselines were written before."""
    parts = [p for p in key.split("/") if p not in ("", ".", "..")] or ["model"]
    leaf = baseline_path(root, _exact(parts[-1]) if exact else parts[-1], mode)
    folders = (_safe(_exact(p) if exact else p) for p in parts[:-1])
    return Path(root).joinpath(*folders) / leaf.relative_to(root)


def _exact(part: str) -> str:
    """``part`` with a digest of itself when ``_safe`` would change it (so no two parts that
    differ only in characters ``_safe`` replaces share a name)."""
    if _safe(part) == part:
        return part
    return f"{part}-{hashlib.sha256(part.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def model_key(model, rootdir, owner: Optional[str] = None) -> str:
    """The name a baseline knows its model by: the file's path relative to ``rootdir`` without
    its suffix (``team_a/model``); a file outside the rootdir ``_outside/<stem>-<hash of its
    absolute path>``. An in-memory model: its graph name (``model_label``) and a digest of the
    test using it, ``owner`` (the plugin gives its node id without the parametrization,
    ``tests/test_a.py::test_mem``): ``main_graph-<sha256(owner)[:8]>``, so exporters' reused
    graph names never make two tests' models share one baseline, and a test's retrained model
    keeps its baseline (judged, its changed sha256 named). Without ``owner`` (a library caller)
    the graph name and a digest of the model's bytes, ``main_graph-<sha256[:10]>`` (a changed
    model then has another key)."""
    from ..graph.onnx_graph import model_label

    if not isinstance(model, (str, os.PathLike)):
        if owner:
            return f"{model_label(model)}-{owner_digest(owner)}"
        digest = model_sha256(model)
        return f"{model_label(model)}-{digest[:10]}" if digest else model_label(model)
    p = Path(os.path.abspath(os.fspath(model)))
    try:
        rel = p.relative_to(Path(os.path.abspath(os.fspath(rootdir))))
    except ValueError:
        digest = hashlib.sha256(os.fspath(p).encode("utf-8", "surrogateescape")).hexdigest()[:10]
        return f"_outside/{p.stem}-{digest}"
    return rel.with_suffix("").as_posix() if rel.suffix else rel.as_posix()


def owner_of(nodeid: str) -> str:
    """A test's node id without its parametrization (``t.py::test_x[a]`` -> ``t.py::test_x``):
    what keys the baselines of the in-memory models it checks (``model_key``'s ``owner``)."""
    path, sep, names = str(nodeid).partition("::")  # an id given by the user may hold "::"
    return path + sep + names.split("[", 1)[0]


def owner_digest(owner: str) -> str:
    """8 hex digits of sha256 of ``owner`` (a test id), as in an in-memory model's key."""
    return hashlib.sha256(str(owner).encode("utf-8", "surrogateescape")).hexdigest()[:8]


def model_info(model, rootdir, owner: Optional[str] = None) -> Dict[str, object]:
    """The ``info`` a baseline records about its model: ``model`` (its key, ``owner`` as in
    ``model_key``) and ``model_sha256``; shown and compared, so an edited model is named as
    the likely cause."""
    info: Dict[str, object] = {"model": model_key(model, rootdir, owner)}
    digest = model_sha256(model)
    if digest is not None:
        info["model_sha256"] = digest
    return info


def locate_baseline(root, model, mode, rootdir, owner: Optional[str] = None) -> Located:
    """The baseline of ``model`` x ``mode`` under ``root``: ``root/<model_key>/<mode>.yaml``, or
    the old stem-keyed ``root/<stem>/<mode>.yaml`` when only that one exists (``belongs`` then
    says where it should be moved). An in-memory model (``owner``: the test using it, as in
    ``model_key``): a baseline at its earlier places (the graph name alone; the graph name and
    a digest of its bytes) is used, to be moved, only when it records this model's sha256."""
    from ..graph.onnx_graph import model_label

    if not isinstance(model, (str, os.PathLike)):  # in memory: graph name and test (or digest)
        path = baseline_path(root, model_key(model, rootdir, owner), mode)
        digest = model_sha256(model)
        if path.exists() or digest is None:
            return Located(path)
        # where they were: the graph name alone, then the graph name and the model's digest
        for old in (baseline_path(root, model_label(model), mode),
                    baseline_path(root, model_key(model, rootdir), mode)):
            if old != path and old.exists() and _recorded(old, "model_sha256") == digest:
                return Located(old, belongs=path)  # this very model's: to be moved
        return Located(path)
    key = model_key(model, rootdir)
    path = key_path(root, key, mode)
    if path.exists():
        return Located(path)
    # where such baselines were written before: without the digests, or keyed by the file's
    # stem alone; only a file that is this model's (its info.model is this key, or it names
    # none) -- a root model.onnx's model/default.yaml is no baseline of sub/model.onnx
    for old in (key_path(root, key, mode, exact=False),
                baseline_path(root, model_label(model), mode)):
        if old != path and old.exists() and _recorded(old, "model") in (None, key):
            return Located(old, belongs=path)
    return Located(path)


def _recorded(path: Path, field: str) -> Optional[str]:
    """The ``info.<field>`` a baseline file records (None when it records none or cannot be
    read: reading it properly reports that)."""
    import re

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    block = re.search(r"^info:\n((?:[ \t]+.*\n?)*)", text, re.M)
    found = (re.search(rf"^[ \t]+{re.escape(field)}:[ \t]*(.*?)[ \t]*$", block.group(1), re.M)
             if block else None)
    if found is None:
        return None
    import yaml

    try:
        value = yaml.safe_load(found.group(1))
    except yaml.YAMLError:
        return None
    return str(value) if value is not None else None


__all__ = ["normalise_environment", "environment_for", "atc_args_of", "mode_items",
           "BACKEND_ONLY_KEYS", "backend_only_keys",
           "baseline_path", "key_path", "looks_like_absolute_path", "model_key", "model_sha256",
           "model_info", "locate_baseline", "owner_digest", "owner_of"]
