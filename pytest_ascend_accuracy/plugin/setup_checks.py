"""What a test sets up, checked before anything runs: every name and option a user gives either
does what it says or is refused with a ``ConfigError`` naming the closest real names.

- keep_dtype entries (names and ``OpType::X``) against the model (``graph.op_catalogue``);
- per-op thresholds and ignored ops against the ops of the dumps compared;
- ATC options given to ``ascend_model(...)``: each is emulated, documented as numerically
  neutral, or refused (the emulator must never run a different model than ATC would build);
- setup mistakes (missing model, wrong input name or shape, dynamic dims, unknown mode) are
  shown as one short paragraph instead of a traceback (``setup_longrepr``).
"""
from __future__ import annotations

import difflib
from typing import Iterable, Mapping, Optional

from ..errors import ConfigError

#: ATC options a Mode sets: given as options they would bypass the mode (and its test id)
MODE_OPTIONS = {
    "precision_mode": "mode=... (e.g. \"high_precision\") or Mode(precision_mode=...)",
    "precision_mode_v2": "mode=... (e.g. \"high_precision\") or Mode(precision_mode=...)",
    "keep_dtype": "keep_dtype=[...] (op names or OpType::X)",
    "buffer_optimize": "mode=\"buffer_off\"",
    "fusion_switch_file": "mode=\"fusion_off\" or Mode(fusion_rules_off=(...))",
}
#: options the backend sets itself
RESERVED_OPTIONS = ("model", "framework", "output", "soc_version", "mode", "om", "json", "weight",
                    "singleop")
#: options that change no number the device computes: accepted and passed to ATC as given
NEUTRAL_OPTIONS = {
    "log": "ATC's log level",
    "input_format": "declares the layout of ONNX inputs (NCHW/ND); the tensors stay the same",
    "host_env_os": "the build host's OS",
    "host_env_cpu": "the build host's CPU",
    "display_model_info": "prints model information",
}


def check_atc_options(options: Optional[Mapping[str, object]], where: str) -> None:
    """Refuse ATC options the emulator cannot reproduce; see the module docstring."""
    for key in options or {}:
        name = str(key).lstrip("-")
        if name in NEUTRAL_OPTIONS:
            continue
        if name == "insert_op_conf":
            raise ConfigError(where, "insert_op_conf=... is not taken as an ATC option: pass the "
                                     "AIPP file as aipp=\"aipp.cfg\" (it is then applied to the "
                                     "inputs as the device does, and checked)")
        if name in MODE_OPTIONS:
            raise ConfigError(where, f"{name}=... is set by the conversion mode: use "
                                     f"{MODE_OPTIONS[name]}")
        if name in RESERVED_OPTIONS:
            raise ConfigError(where, f"{name}=... is set by the backend itself")
        near = difflib.get_close_matches(name, list(NEUTRAL_OPTIONS) + list(MODE_OPTIONS)
                                         + ["insert_op_conf"], n=3, cutoff=0.6)
        raise ConfigError(where, f"ATC option {name}=... is not emulated (the emulator would run "
                                 f"a different model than ATC builds), so it is refused"
                          + (f"; closest: {', '.join(near)}" if near else "")
                          + f"; accepted as numerically neutral: {', '.join(NEUTRAL_OPTIONS)}")


def check_mode_names(mode, model, where: str) -> None:
    """keep_dtype entries of ``mode`` must name ops (or op types) of ``model``; the extra ATC
    options of a ``Mode(extra=...)`` pass ``check_atc_options`` like ``ascend_model``'s."""
    from ..graph.op_catalogue import check_mode

    extra = getattr(mode, "extra", ())
    if extra:
        check_atc_options(dict(extra), f"{where}: Mode(extra=...)")
    if getattr(mode, "keep_dtype", ()) and model is not None:
        check_mode(mode, model, where)


def check_op_names(spec, dumps: Iterable, where: str) -> None:
    """Per-op thresholds and ignored ops must name ops of the compared dumps (their real names,
    or globs matching some), else they would silently judge nothing."""
    from ..graph.op_catalogue import check_setting_names

    names = [n for dump in dumps for op in dump.ops for n in (op.name,) + tuple(op.original_names)]
    label = next((d.model_name for d in dumps if getattr(d, "model_name", None)), None) or "model"
    check_setting_names([n for n, _ in spec.per_op], spec.ignore, names, label, where)


def setup_longrepr(item, excinfo) -> Optional[str]:
    """A setup mistake (any ``AscendAccuracyError`` but an accuracy failure: missing model,
    unknown op name, wrong input, unknown mode...) as one short paragraph plus the test line
    that raised it, instead of a traceback through the plugin (``--tb=long`` keeps pytest's)."""
    from pathlib import Path

    from ..errors import AscendAccuracyError

    exc = excinfo.value
    if not isinstance(exc, AscendAccuracyError) or type(exc).__name__ == "AccuracyFailure":
        return None
    if item.config.getoption("tbstyle", "auto") not in ("auto", "short"):
        return None
    kind = "configuration error" if isinstance(exc, ConfigError) else type(exc).__name__
    text = f"ascend-accuracy {kind}: {exc}"
    item_path = Path(str(item.path))
    if (isinstance(exc, ConfigError) and exc.where == "input_shape"
            and item_path.suffix in (".yaml", ".yml")):  # the advice above is spelled in Python
        text += (f"\n(in {item_path.name} that is the model entry's key "
                 f"input_shape: {{NAME: [d0, d1, ...]}})")
    for entry in reversed(list(excinfo.traceback)):
        if Path(str(entry.path)) == item_path:
            import os

            rel = os.path.relpath(item_path, item.config.invocation_params.dir)
            text += f"\n\n{rel}:{entry.lineno + 1}: {type(exc).__name__}"
            break
    return text


def no_check_longrepr(item, ctx) -> Optional[str]:
    """Why a passing test marked ``@accuracy`` fails after all: it ran its model (``om.run``)
    but started no check (``check_accuracy``, ``check_dataset``, ``check_preprocessing``), so
    it passed having compared nothing. None for any other test: unmarked, a YAML suite item,
    one that checked, or one that never called ``run`` (a test that judges
    ``om.outputs()`` its own way is its own business)."""
    if ctx is None or ctx.checks or not ctx.runs or item.get_closest_marker("accuracy") is None:
        return None
    models = ", ".join(dict.fromkeys(r.handle.converted.model_name for r in ctx.runs))
    return (f"ascend-accuracy: {ctx.nodeid} is marked @accuracy and ran {models}, "
            f"but compared nothing: no check_accuracy call (nor check_dataset / "
            f"check_preprocessing) ran. Pass the dump to check_accuracy(actual, golden), or "
            f"remove @accuracy from a test that is not an accuracy check.")
