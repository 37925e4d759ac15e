"""The one check of the ATC options a user gives, on every path: ``ascend_model(**options)``,
``Mode(extra=...)`` (a marker's mode, a YAML mode's ``extra``, ``--mode`` of ``diagnose`` and
``dataset``) and, as a last guard, each backend's ``convert``. Each option is emulated,
documented as numerically neutral and given a value ATC takes, or refused: the emulator must
never run a different model than ATC would build (a trial: ``--mode '{extra: {output_type:
FP16}}'`` passed on the emulator where ATC casts every output to float16).

- numerically neutral (``NEUTRAL_OPTIONS``): accepted with the values ATC takes
  (``NEUTRAL_VALUES``; ``log=verbose``, ``input_format=NHWC`` for ONNX, ``display_model_info=yes``
  are ATC errors), a Python bool for ``display_model_info`` written as ATC's ``1``/``0``
  (``option_text``: ATC refuses ``true``);
- set by the mode (``MODE_OPTIONS``), by the backend (``RESERVED_OPTIONS``), for another host
  (``HOST_ENV_OPTIONS``), the AIPP file, the gear options (``GEAR_OPTIONS``): refused saying what
  to write instead;
- one option given twice (``log`` and ``--log``, or ``(("log", "debug"), ("log", "info"))``):
  refused naming both, ATC would get one of them;
- any other: refused, naming the closest known names.
"""
from __future__ import annotations

import difflib
from typing import Iterable, Mapping, Tuple, Union

from ..errors import ConfigError
from .atc_cmdline import HOST_ENV_OPTIONS, HOST_ENV_REFUSAL
from .mode_extra import option_text  # noqa: F401  (atc_command and the tests: from here)

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
    "display_model_info": "prints model information",
}
#: the values ATC takes for each (GE main.cc's checks: ``init()``'s log levels, default
#: included; ``CheckInputFormat`` for ONNX models; ``--display_model_info`` 0 or 1, page
#: atlasatcparam_16_0083), in ATC's case, and the error ATC stops with at another value
NEUTRAL_VALUES = {
    "log": ("debug", "info", "warning", "error", "null", "default"),
    "input_format": ("NCHW", "ND", "NCDHW"),
    "display_model_info": ("0", "1"),
}
VALUE_ERRORS = {"log": "E10010", "input_format": "E10001", "display_model_info": "E10006"}
#: ``--input_format`` with ``--insert_op_conf`` (AIPP): NCHW or NHWC only (the --input_format
#: page, atlasatcparam_16_0015, CANN 8.0-9.0), and ONNX takes no NHWC: NCHW
AIPP_INPUT_FORMATS = ("NCHW",)
#: ATC's gear options: one .om for several shapes, a shape picked at each run
GEAR_OPTIONS = ("dynamic_batch_size", "dynamic_image_size", "dynamic_dims", "input_shape_range")
GEAR_REFUSAL = ("ATC option {name}={value} builds one .om for several shapes (gears), and each "
                "check converts and compares one static shape: leave the option out and check "
                "each gear's shape as a conversion of its own, input_shape={{NAME: [d0, d1, ...]}} "
                "per test or parametrized case (a YAML item's input_shape: key, diagnose's "
                "--input-shape), one per gear (README: \"A model deployed with gears\")")

Options = Union[Mapping[str, object], Iterable[Tuple[str, object]], None]

#: ``atc_convert(model, mode, **atc_options)``'s own spelling of what a refused option does
#: (``atc_convert_advice`` fills in the call's mode and file): its mode is an argument, and
#: ``keep_dtype=[...]`` and ``aipp=`` (``ascend_model``'s) were refused again
ATC_CONVERT_KEEP_DTYPE = ("keep_dtype=... is set by the conversion mode: use mode={expr} (op "
                          "names or OpType::X{own}; from pytest_ascend_accuracy import {names})")
ATC_CONVERT_AIPP = ("insert_op_conf=... is not taken as an ATC option, and atc_convert converts "
                    "without AIPP: convert with the file through ascend_model(model, "
                    "{mode}aipp={file}){imports} (its .converted is the ConvertedModel; run then "
                    "takes raw images, pre-processed as the device does)")


def atc_convert_advice(mode=None, options: Options = None) -> Mapping[str, str]:
    """The refusals ``atc_convert`` gives instead of ``ascend_model``'s, written for the call:
    the keep_dtype fix combined with its own ``mode`` (a resolved ``Mode``:
    ``mode=keep_dtype([...])`` beside ``"high_precision"`` dropped that, and the mode's own
    entries are named), the AIPP fix with the file given (in ``options``, the call's ATC
    options, or the mode's ``extra``) and the mode without it."""
    import json
    from dataclasses import replace

    from .modes import DEFAULT

    given = dict(options or {})
    given.update(getattr(mode, "extra", ()) or ())
    aipp = next((str(v) for k, v in given.items() if str(k).lstrip("-") == "insert_op_conf"),
                "aipp.cfg")
    mode = DEFAULT if mode is None else replace(  # (the file is what the advice moves out)
        mode, label=None, extra=tuple(p for p in mode.extra
                                      if str(p[0]).lstrip("-") != "insert_op_conf"))
    base = replace(mode, keep_dtype=())
    moded, based = mode != DEFAULT, base != DEFAULT
    return {
        "keep_dtype": ATC_CONVERT_KEEP_DTYPE.format(
            expr=f"{base.python_expr()} | keep_dtype([...])" if based else "keep_dtype([...])",
            own=(f", with the mode's own {', '.join(map(repr, mode.keep_dtype))}"
                 if mode.keep_dtype else ""),
            names=", ".join(sorted(set(base.python_imports()) | {"keep_dtype"}) if based
                            else ["keep_dtype"])),
        "insert_op_conf": ATC_CONVERT_AIPP.format(
            mode=f"{mode.python_expr()}, " if moded else "", file=json.dumps(aipp),
            imports=(f" (from pytest_ascend_accuracy import {', '.join(mode.python_imports())})"
                     if moded else ""))}


#: ``--mode``'s ``extra`` of ``ascend-accuracy diagnose`` and ``dataset``: the AIPP file's own
#: options (the Python spelling ``aipp="aipp.cfg"`` means nothing on a command line), the model
#: and the file filled in (shell-quoted), the images and the reference left to the user
CLI_AIPP_ADVICE = {
    "diagnose": ("insert_op_conf is not an extra ATC option of --mode: give the AIPP file as "
                 "--aipp {aipp} with --images IMAGES and --reference MODULE:FN (IMAGES: a folder "
                 "of raw .npy images, or one .npy of them; the model is then converted with the "
                 "file and fed the raw images)"),
    "dataset": ("insert_op_conf is not an extra ATC option of --mode, and ascend-accuracy "
                "dataset runs the model without AIPP: check the AIPP file with ascend-accuracy "
                "diagnose {model} --aipp {aipp} --images IMAGES --reference MODULE:FN (IMAGES: a "
                "folder of raw .npy images, or one .npy of them)"),
}


def check_atc_options(options: Options, where: str, allowed: Iterable[str] = (),
                      aipp: bool = False, advice: Mapping[str, str] = None) -> None:
    """Refuse ATC options the emulator cannot reproduce (see the module docstring); ``options``:
    a mapping or ``(name, value)`` pairs (a Mode's ``extra``); ``allowed``: names a caller
    takes as arguments of its own (a backend's ``insert_op_conf``, ``input_shape``); ``aipp``:
    the conversion inserts AIPP (an ``insert_op_conf`` among the options counts too);
    ``advice``: the caller's own refusal of an option, where ``ascend_model``'s spelling of
    the fix does not work in it (``atc_convert_advice``, ``CLI_AIPP_ADVICE``)."""
    pairs = list(options.items()) if isinstance(options, Mapping) else list(options or ())
    aipp = aipp or any(str(k).lstrip("-") == "insert_op_conf" and v for k, v in pairs)
    seen: dict = {}
    for key, value in pairs:
        name = str(key).lstrip("-")
        if name in seen:
            first_key, first_value = seen[name]
            raise ConfigError(where, f"ATC option {name} given twice ({first_key}="
                                     f"{option_text(name, first_value)} and {key}="
                                     f"{option_text(name, value)}): ATC would take one of them; "
                                     f"keep the one you mean")
        seen[name] = (key, value)
        if name in allowed:
            continue
        if name in NEUTRAL_OPTIONS:
            _check_value(name, value, where)
            if name == "input_format" and aipp and option_text(name, value) not in \
                    AIPP_INPUT_FORMATS:
                raise ConfigError(where, f"ATC option input_format={option_text(name, value)} "
                                         f"with AIPP: ATC takes --input_format NCHW or NHWC with "
                                         f"--insert_op_conf, and NHWC is no ONNX format: use "
                                         f"input_format=\"NCHW\" or leave it out")
            continue
        raise ConfigError(where, (advice or {}).get(name) or _refusal(name, value))


def check_mode_options(mode, where: str, aipp: bool = False,
                       advice: Mapping[str, str] = None) -> None:
    """The extra ATC options of ``mode`` (a ``Mode``), as ``check_atc_options`` takes them
    (``aipp``: the conversion inserts AIPP, which a mode's ``input_format`` must suit;
    ``advice``: the caller's own spelling of a fix)."""
    extra = getattr(mode, "extra", ())
    if extra:
        check_atc_options(extra, f"{where}: Mode(extra=...)", aipp=aipp, advice=advice)


def _check_value(name: str, value: object, where: str) -> None:
    valid = NEUTRAL_VALUES[name]
    text = option_text(name, value)
    if text in valid:
        return
    lower = [v for v in valid if v.lower() == text.lower()]  # ATC's own case only
    near = lower or difflib.get_close_matches(text, valid, n=1, cutoff=0.7)
    raise ConfigError(where, f"ATC option {name}={text}: ATC takes {', '.join(valid)} (it stops "
                             f"with {VALUE_ERRORS[name]} at any other value)"
                      + (f"; closest: {name}={near[0]}" if near else ""))


def _refusal(name: str, value: object) -> str:
    if name == "insert_op_conf":
        return ("insert_op_conf=... is not taken as an ATC option: pass the AIPP file as "
                "aipp=\"aipp.cfg\" (it is then applied to the inputs as the device does, and "
                "checked)")
    if name in MODE_OPTIONS:
        return f"{name}=... is set by the conversion mode: use {MODE_OPTIONS[name]}"
    if name in RESERVED_OPTIONS:
        return f"{name}=... is set by the backend itself"
    if name in HOST_ENV_OPTIONS:
        return HOST_ENV_REFUSAL.format(name=name)
    if name in GEAR_OPTIONS:
        return GEAR_REFUSAL.format(name=name, value=option_text(name, value))
    near = difflib.get_close_matches(name, list(NEUTRAL_OPTIONS) + list(MODE_OPTIONS)
                                     + ["insert_op_conf"], n=3, cutoff=0.6)
    return (f"ATC option {name}=... is refused on every backend: the CPU emulator cannot build "
            f"what ATC builds with it, and a test means the same on the emulator and on an NPU"
            + (f"; closest: {', '.join(near)}" if near else "")
            + f"; accepted as numerically neutral: {', '.join(NEUTRAL_OPTIONS)}")
