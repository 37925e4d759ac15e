"""The ATC options of a diagnosis's fix, as the backend passes them to ATC (``atc_args.txt``).

``fix_atc(backend, model, mode, input_shape=..., atc_options=...) -> FixAtc``:

- a backend with ``atc_command`` (the ascend backend): the very command ``convert`` runs for the
  fix mode (one builder, ``backends.ascend.atc_command``, with the toolkit version the backend
  found: ``--precision_mode=allow_mix_precision`` on CANN 6.0, ``--precision_mode_v2`` from
  7.0), less ``--model``, ``--framework``, ``--output`` and ``--soc_version``;
- otherwise (the emulator, which has no toolkit): the mode's options as ``Mode.atc_options``
  spells them (``--precision_mode=VALUE``), plus ``--input_shape`` and the test's own options;
  ``FixAtc.spelled_for`` says which CANN releases take them.

Either way the mode's config files (``keep_dtype.cfg``, ``fusion_switch.cfg``) are named by
file name and rendered under the fix folder's name (``args(config_dir)``; ``triage.fix_folder``:
run from the folder holding it). A file of the user's (an AIPP ``insert_op_conf``, the file the
diagnosed conversions used) is recorded in ``user_files``: where the fix folder holds its copy
(``args(config_dir, copies)``) it is named under the folder's name as the config files are,
else by its own path, relative to the working directory when it lies below it, absolute
otherwise.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import List, Mapping, Optional, Tuple

#: options ``atc_args.txt`` leaves out: the user's own command names model, output and chip
LEFT_OUT = ("model", "framework", "output", "soc_version")


@dataclass(frozen=True)
class FixAtc:
    """``options``: (name, value) pairs in ATC order; values in ``config_files`` are file
    names of the mode's config files (placed under the output directory by ``args``);
    ``user_files``: (option, absolute path) of each option naming a file of the user's, whose
    value in ``options`` is that path as ``show_path`` shows it."""

    options: Tuple[Tuple[str, str], ...]
    config_files: Tuple[str, ...] = ()
    spelled_for: str = ""
    user_files: Tuple[Tuple[str, str], ...] = ()

    def args(self, config_dir: Optional[str] = None,
             copies: Optional[Mapping[str, str]] = None) -> List[str]:
        """``--name=value`` strings, config files under ``config_dir`` (as given), and the
        user's files whose option ``copies`` maps to the name of their copy there too."""
        copies = copies or {}

        def value(k: str, v: str) -> str:
            if k in copies:
                return os.path.join(config_dir or ".", copies[k])
            return os.path.join(config_dir, v) if config_dir and v in self.config_files else v

        return [f"--{k}={value(k, v)}" for k, v in self.options]


def fix_atc(backend, model, mode, *, input_shape=None,
            atc_options: Optional[Mapping[str, object]] = None) -> FixAtc:
    """The fix's ATC options for ``backend`` (see the module docstring)."""
    from ..errors import AscendAccuracyError

    builder = getattr(backend, "atc_command", None)
    if builder is not None:
        try:
            command = builder(model, mode, input_shape=input_shape, atc_options=atc_options)
        # converted before, so not expected: say so, spell as the mode does
        except AscendAccuracyError as exc:
            fallback = _mode_spelling(mode, input_shape, atc_options)
            return replace(fallback, spelled_for=f"{fallback.spelled_for}; the backend's own "
                                                 f"command could not be built: {exc}")
        return _from_command(command, _toolkit_version(backend))
    return _mode_spelling(mode, input_shape, atc_options)


def _toolkit_version(backend) -> Optional[str]:
    try:
        return backend.toolkit.version
    except Exception:  # noqa: BLE001 - a description only; the command was built already
        return None


def _from_command(command, version: Optional[str]) -> FixAtc:
    sources = dict(command.copied_files)
    options, user_files = [], []
    for arg in command.argv[1:]:
        name, _, value = arg[2:].partition("=")
        if name in LEFT_OUT:
            continue
        if value in sources:  # the cache's copy of a user's file: the user's own
            user_files.append((name, sources[value]))
            value = show_path(sources[value])
        options.append((name, value))
    where = (f"CANN {version}, the toolkit the ascend backend found and converted with" if version
             else "an atc of unknown version: --precision_mode, which every CANN release takes")
    return FixAtc(tuple(options), tuple(command.config_files), f"as passed to {where}",
                  tuple(user_files))


def _mode_spelling(mode, input_shape, atc_options) -> FixAtc:
    from ..backends.ascend.atc_command import FILE_OPTIONS, format_input_shape
    from ..backends.ascend.precision_modes import PRECISION_MODE_SINCE
    from ..graph.onnx_graph import parse_input_shape

    options: List[Tuple[str, str]] = []
    user_files: List[Tuple[str, str]] = []
    shapes = parse_input_shape(input_shape)
    user = {str(k).lstrip("-"): v for k, v in (atc_options or {}).items()}
    if shapes and "input_shape" not in user and format_input_shape(shapes):
        options.append(("input_shape", format_input_shape(shapes)))  # (scalars only: none)
    configs = mode.config_files()
    for name, value in [*mode.atc_options(), *user.items()]:
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        if name in FILE_OPTIONS and text not in configs:  # a user's file (Mode(extra=...) too)
            user_files.append((name, os.path.abspath(text)))
            text = show_path(text)
        options.append((name, text))
    since = PRECISION_MODE_SINCE.get(mode.precision_mode)
    releases = ("every CANN release" if since == () else
                f"CANN {'.'.join(map(str, since))} or later" if since else
                f"the CANN releases whose atc accepts --precision_mode={mode.precision_mode}")
    return FixAtc(tuple(options), tuple(configs),
                  f"spelled by the emulator, which has no toolkit, for {releases}; with a "
                  f"toolkit installed the ascend backend spells them for its version "
                  f"(--precision_mode_v2 from CANN 7.0)", tuple(user_files))


def show_path(path) -> str:
    """A user's file as the user can paste it: relative to the working directory when it lies
    below it, absolute otherwise."""
    full = Path(os.path.abspath(os.fspath(path)))
    cwd = Path(os.getcwd())
    try:
        return os.fspath(full.relative_to(cwd))
    except ValueError:
        return os.fspath(full)
