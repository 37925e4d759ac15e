"""``--mode`` of ``diagnose`` and ``dataset``: one parser, so a mode printed by either (or by
the plugin) runs pasted into the other.

Three spellings: a preset name or presets joined by ``+`` (``high_precision``,
``buffer_off+fusion_off``); a YAML flow mapping as a suite writes a mode
(``'{base: fusion_off, keep_dtype: ["fc"]}'``, keys ``core.modes.MODE_KEYS``; the form
``--accuracy-diagnose`` prints); and a mode's printed name (``keep_dtype(scale,fc)``,
``fusion_off+rules_off(R)+keep_dtype(fc)``, as test ids and the summary name a mode). Every
keep_dtype entry is checked against the model's ops, and every ``extra`` ATC option as the
plugin checks it (``core.atc_option_check``: the emulator ignored ``output_type: FP16`` and
passed), before anything is converted.
"""
from __future__ import annotations

from ..errors import ConfigError


def mode_arg(text: str, model, where: str = "--mode", command: str = "diagnose"):
    """``--mode TEXT`` of ``ascend-accuracy COMMAND`` as a ``Mode`` checked against ``model``'s
    ops."""
    import shlex

    import yaml

    from ..core.atc_option_check import CLI_AIPP_ADVICE, check_atc_options
    from ..core.modes import mode_from_spec
    from ..graph.op_catalogue import check_mode

    try:
        value = yaml.safe_load(text) if text.lstrip().startswith("{") else _printed(text, where)
    except yaml.YAMLError as exc:
        raise ConfigError(where, f"not a preset name or a YAML mapping: {exc}") from None
    mode = mode_from_spec(value, where)
    aipp = dict(mode.extra).get("insert_op_conf") or "FILE"
    check_atc_options(mode.extra, f"{where} extra", advice={"insert_op_conf": CLI_AIPP_ADVICE[
        command].format(model=shlex.quote(str(model)), aipp=shlex.quote(aipp))})
    check_mode(mode, model, where)
    return mode


def _printed(text: str, where: str):
    """A printed mode name as ``mode_from_spec`` takes it: the text itself when it holds no
    list part (preset names: their own errors name the closest), else a mapping."""
    from ..core.printed_modes import printed_spec

    spec = printed_spec(text)
    return text if spec is None else spec
