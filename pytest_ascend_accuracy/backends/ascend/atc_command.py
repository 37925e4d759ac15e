"""The ATC command line for one conversion, as an argument list (never a shell string).

``build_atc_command`` turns (model, ``Mode``, input shapes, user ATC options, toolkit version,
soc version) into an ``AtcCommand``: the exact argv, the config files the mode needs (written
next to the output before ATC runs) and user config files copied into the same directory.
Every path in the argv except the source model is relative to that directory, so the recorded
command stays valid after the cache renames the build directory into place.

Argument order: ``--model --framework=5 --output --soc_version [--input_shape] [--input_format]
--precision_mode|--precision_mode_v2 [--keep_dtype] [--buffer_optimize] [--fusion_switch_file]
[--insert_op_conf] [--out_nodes] --log`` then any other user option, all as ``--name=value``.

Precision option (docs/formats.md §5). ``--precision_mode`` is accepted by every CANN release,
including the 8.x/9.0 documentation; ``--precision_mode_v2`` is the documented recommendation
from CANN 7.0 on (first seen in the 7.0.0.alpha003 community docs) and the two may never be
combined. The policy ``"auto"`` therefore passes ``--precision_mode_v2`` only when the toolkit
version is known and >= 7.0 **and** the mode's value has a v2 equivalent; ``allow_fp32_to_fp16``
(our ``high_precision`` preset) and ``allow_fp32_to_bf16`` have none and always stay on
``--precision_mode``. An unknown toolkit version falls back to ``--precision_mode``, which every
release understands. A ``--precision_mode`` value is checked against the values the toolkit's
ATC accepts (``precision_modes``: CANN 6.0 accepts five of the nine) before ATC runs.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ...errors import ConfigError
from ...core.atc_cmdline import HOST_ENV_OPTIONS, HOST_ENV_REFUSAL, PRECISION_MODE_V2
from ...core.atc_option_check import option_text
from ...core.modes import Mode
from .precision_modes import precision_mode_for
from .toolkit import parse_version

#: first toolkit release whose ATC documents ``--precision_mode_v2``.
PRECISION_MODE_V2_SINCE = (7, 0)
PRECISION_POLICIES = ("auto", "precision_mode", "precision_mode_v2")
FRAMEWORK_ONNX = "5"
DEFAULT_LOG_LEVEL = "error"
#: options the backend sets itself; a user value would break the cache entry or the run.
RESERVED_OPTIONS = frozenset({"model", "framework", "output", "soc_version", "mode", "om", "json",
                              "weight", "singleop"})
#: options whose value is a file: user-given ones are copied next to the output and hashed.
FILE_OPTIONS = ("keep_dtype", "fusion_switch_file", "insert_op_conf", "op_precision_mode",
                "modify_mixlist", "customize_dtypes", "op_name_map", "compression_optimize_conf")
_FIXED_ORDER = ("input_shape", "input_format", "precision_mode", "precision_mode_v2", "keep_dtype",
                "buffer_optimize", "fusion_switch_file", "insert_op_conf", "out_nodes", "log")


@dataclass(frozen=True)
class AtcCommand:
    """One ATC invocation. ``argv[0]`` is the atc executable; run it with cwd = the output dir."""

    argv: Tuple[str, ...]
    output_prefix: str
    precision_option: str
    #: files to write into the output dir before running: {relative name: text}
    config_files: Mapping[str, str] = field(default_factory=dict)
    #: user files to copy into the output dir: {relative name: source path}
    copied_files: Mapping[str, str] = field(default_factory=dict)

    @property
    def om_name(self) -> str:
        """ATC appends ``.om`` to ``--output``."""
        return self.output_prefix + ".om"

    def option(self, name: str) -> Optional[str]:
        """Value of ``--name=...`` in the argv, or None."""
        prefix = f"--{name}="
        for arg in self.argv[1:]:
            if arg.startswith(prefix):
                return arg[len(prefix):]
        return None

    def key_parts(self) -> Dict[str, object]:
        """What identifies this conversion apart from the model bytes and versions: the argv
        without the executable and model paths, plus the content hash of every copied file."""
        args = [a for a in self.argv[1:] if not a.startswith("--model=")]
        copied = {}
        for name, src in sorted(self.copied_files.items()):
            try:
                copied[name] = hashlib.sha256(Path(src).read_bytes()).hexdigest()
            except OSError as exc:
                raise ConfigError(f"atc option file {src}", f"cannot be read ({exc.strerror or exc})")
        return {"args": args, "config_files": dict(sorted(self.config_files.items())), "copied": copied}

    def shell_line(self) -> str:
        """The argv quoted for display (never executed through a shell)."""
        import shlex

        return " ".join(shlex.quote(a) for a in self.argv)


def _copied_file(opt_name: str, src, copied: Dict[str, str], where: str) -> str:
    """Record the user's file ``src`` for option ``opt_name`` in ``copied`` (copied into the
    build directory, its content part of the key); returns the local name ATC is given."""
    if not Path(src).is_file():
        raise ConfigError(where, f"file {src} does not exist")
    local = f"user_{opt_name}{Path(src).suffix or '.cfg'}"
    copied[local] = os.fspath(Path(src).resolve())
    return local


def build_atc_command(atc: "str | os.PathLike[str]", model: "str | os.PathLike[str]", mode: Mode, *,
                      output_prefix: str, soc_version: str,
                      input_shape: Optional[Mapping[str, Sequence[int]]] = None,
                      input_format: Optional[str] = None,
                      atc_options: Optional[Mapping[str, object]] = None,
                      toolkit_version: Optional[str] = None,
                      precision_policy: str = "auto",
                      toolkit_version_file: "str | os.PathLike[str] | None" = None) -> AtcCommand:
    """The ATC argv for converting ``model`` under ``mode`` (see the module docstring)."""
    if not soc_version or not re.fullmatch(r"[A-Za-z0-9_]+", soc_version):
        raise ConfigError("soc_version", f"expected a name such as Ascend310P3, got {soc_version!r}")
    if not re.fullmatch(r"[A-Za-z0-9_-]+", output_prefix):
        raise ConfigError("output", f"output prefix must be a plain file stem, got {output_prefix!r}")
    user = _normalise_options(atc_options)
    for host_env in HOST_ENV_OPTIONS:  # ATC would write <output>_<os>_<cpu>.om, for another host
        if host_env in user:
            raise ConfigError("atc_options", HOST_ENV_REFUSAL.format(name=host_env))
    opts: Dict[str, str] = {}
    config_files = dict(mode.config_files())
    copied: Dict[str, str] = {}

    shape_text = user.pop("input_shape", None)
    if input_shape:
        if shape_text is not None:
            raise ConfigError("atc_options", "input_shape given twice (argument and atc option)")
        shape_text = format_input_shape(input_shape)
    if shape_text:
        opts["input_shape"] = shape_text
    fmt = user.pop("input_format", None) or input_format
    if fmt:
        opts["input_format"] = fmt

    name, value = precision_argument(mode, toolkit_version, precision_policy, user,
                                     version_file=toolkit_version_file)
    opts[name] = value

    for opt_name, opt_value in mode.atc_options():
        if opt_name == "precision_mode":
            continue
        if opt_name in user:
            raise ConfigError("atc_options", f"--{opt_name} is set by the mode {mode.name!r}; "
                                             f"change the mode instead of passing it again")
        if opt_name in FILE_OPTIONS and opt_value not in config_files:
            # a file of the user's own (Mode(extra=...)): copied and hashed like atc_options',
            # so an edited file is another conversion, never the cached .om of the old one
            opts[opt_name] = _copied_file(opt_name, opt_value, copied,
                                          f"mode {mode.name!r} option --{opt_name}")
            continue
        opts[opt_name] = opt_value
    for opt_name in FILE_OPTIONS:
        if opt_name in user:
            opts[opt_name] = _copied_file(opt_name, user.pop(opt_name), copied,
                                          f"atc option --{opt_name}")
    opts.setdefault("log", user.pop("log", DEFAULT_LOG_LEVEL))
    if "out_nodes" in user:
        opts["out_nodes"] = user.pop("out_nodes")

    argv: List[str] = [os.fspath(atc), f"--model={os.fspath(Path(model).resolve())}",
                       f"--framework={FRAMEWORK_ONNX}", f"--output={output_prefix}",
                       f"--soc_version={soc_version}"]
    for opt_name in _FIXED_ORDER:
        if opt_name in opts:
            argv.append(f"--{opt_name}={opts.pop(opt_name)}")
    for opt_name, opt_value in list(opts.items()) + sorted(user.items()):
        argv.append(f"--{opt_name}={opt_value}")
    return AtcCommand(argv=tuple(argv), output_prefix=output_prefix, precision_option=name,
                      config_files=config_files, copied_files=copied)


def om_to_json_command(atc: "str | os.PathLike[str]", om: str, json_name: str) -> Tuple[str, ...]:
    """``atc --mode=1 --om=X.om --json=X.json`` (docs/formats.md §4), paths relative to the entry dir."""
    return (os.fspath(atc), "--mode=1", f"--om={om}", f"--json={json_name}")


def precision_argument(mode: Mode, toolkit_version: Optional[str], policy: str = "auto",
                       user: Optional[Dict[str, str]] = None, *,
                       version_file: "str | os.PathLike[str] | None" = None) -> Tuple[str, str]:
    """(option name, value) for the precision mode; a user ``precision_mode[_v2]`` option wins
    (and is removed from ``user``). Never returns both options."""
    if policy not in PRECISION_POLICIES:
        raise ConfigError("precision_policy", f"expected one of {', '.join(PRECISION_POLICIES)}, "
                                              f"got {policy!r}")
    user = {} if user is None else user
    v1, v2 = user.pop("precision_mode", None), user.pop("precision_mode_v2", None)
    if v1 is not None and v2 is not None:
        raise ConfigError("atc_options", "--precision_mode and --precision_mode_v2 cannot be combined "
                                         "(ATC rejects it); give one of them")
    if v1 is not None:
        return "precision_mode", precision_mode_for(v1, toolkit_version, explicit=True, version_file=version_file)
    if v2 is not None:
        return "precision_mode_v2", v2
    v2_value = PRECISION_MODE_V2.get(mode.precision_mode)
    if policy == "precision_mode_v2":
        if v2_value is None:
            raise ConfigError("precision_policy", f"precision_mode {mode.precision_mode!r} has no "
                                                  f"--precision_mode_v2 equivalent")
        return "precision_mode_v2", v2_value
    if policy == "auto" and v2_value is not None and supports_precision_mode_v2(toolkit_version):
        return "precision_mode_v2", v2_value
    return "precision_mode", precision_mode_for(mode.precision_mode, toolkit_version, version_file=version_file)


def supports_precision_mode_v2(toolkit_version: Optional[str]) -> bool:
    if not toolkit_version:
        return False
    try:
        return parse_version(toolkit_version)[:2] >= PRECISION_MODE_V2_SINCE
    except ValueError:
        return False


def format_input_shape(shapes: Mapping[str, Sequence[int]]) -> str:
    """``{"in1": (1,3,224,224), "in2": (1,10)}`` -> ``in1:1,3,224,224;in2:1,10`` (-1 = dynamic).

    A scalar (0-d) input is left out: CANN 6.0's ATC takes no entry for one (its --input_shape
    page, atctool_0052: "如果模型输入数据为标量...无需配置对应节点的--input_shape参数") and its GE
    (``ParseInputShape``) stops at ``sr:`` with E10002 "can not be empty"; from 8.0.RC2 the entry
    is optional (atlasatc_16_0050, atlasatcparam_16_0016) and needed only beside the gear
    options, which every backend refuses (``core.atc_option_check.GEAR_OPTIONS``)."""
    parts = []
    for name, dims in shapes.items():
        if not name or ";" in name:
            raise ConfigError("input_shape", f"input name {name!r} cannot be written in ATC syntax")
        try:
            values = [int(d) for d in dims]
        except (TypeError, ValueError):
            raise ConfigError("input_shape", f"shape of {name!r} must be integers, got {dims!r}") from None
        if any(d < -1 for d in values):
            raise ConfigError("input_shape", f"shape of {name!r} has a negative dim other than -1: {values}")
        if not values:
            continue
        parts.append(f"{name}:{','.join(str(d) for d in values)}")
    return ";".join(parts)


def _normalise_options(options: Optional[Mapping[str, object]]) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for key, value in (options or {}).items():
        name = str(key).lstrip("-")
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise ConfigError("atc_options", f"{key!r} is not an ATC option name")
        if name in RESERVED_OPTIONS:
            raise ConfigError("atc_options", f"--{name} is set by the backend and cannot be overridden")
        if name in out:
            raise ConfigError("atc_options", f"--{name} given twice")
        text = option_text(name, value)  # display_model_info=True: 1, as ATC takes it
        if "\n" in text or "\0" in text:
            raise ConfigError("atc_options", f"value of --{name} must be a single line")
        out[name] = text
    return out
