"""The last guard of ``core.atc_option_check`` in each backend's ``convert``: a library user
calling ``EmulatorBackend(cache).convert(model, Mode(extra=(("output_type", "FP16"),)))`` got a
conversion that ignored the option and passed where ATC casts every output to float16 (a
trial); the plugin and the CLI check a mode before it gets here, a direct call did not.

A ``Mode``'s extra options are checked whole on every backend (a mode names a test, a cache
entry and a baseline: it means the same on both). ``atc_options``: the emulator refuses any it
would ignore (all but the neutral ones and its own arguments ``insert_op_conf`` and
``input_shape``); the ascend backend hands the others to ATC, which builds them, and checks the
neutral ones' values (``log=verbose`` is an ATC error there, a pass on the emulator) and refuses
the gear options (``GEAR_REFUSAL``, as the plugin does: ``dynamic_batch_size='1,2,4'`` reached
ATC, whose E10031 was read as "this toolkit may not know that option").
"""
from __future__ import annotations

from .base import shape_from_options

#: what a backend's ``convert`` takes among ``atc_options`` as arguments of its own
BACKEND_OPTIONS = ("insert_op_conf",)  # (input_shape: taken out by shape_from_options)


def checked_options(mode, input_shape, atc_options, *, emulated: bool = True):
    """``shape_from_options(input_shape, atc_options)`` once ``mode`` (a ``Mode``) and
    ``atc_options`` pass the guard (see the module docstring), the options as ``{name: text}``
    (``--log`` as ``log``, a bool as ATC takes it: ``option_text``); ``emulated``: the backend
    imitates ATC rather than running it."""
    from ..core.atc_option_check import (GEAR_OPTIONS, NEUTRAL_OPTIONS, check_atc_options,
                                         check_mode_options, option_text)

    input_shape, options = shape_from_options(input_shape, atc_options)  # one given twice
    aipp = any(str(k).lstrip("-") == "insert_op_conf" and v for k, v in options.items())
    check_mode_options(mode, "convert", aipp=aipp)  # a mode's input_format meets the AIPP file
    checked = options if emulated else {k: v for k, v in options.items()
                                        if str(k).lstrip("-") in (*NEUTRAL_OPTIONS, *GEAR_OPTIONS)}
    check_atc_options(checked, "atc_options", allowed=BACKEND_OPTIONS, aipp=aipp)
    return input_shape, {str(k).lstrip("-"): option_text(k, v) for k, v in options.items()}
