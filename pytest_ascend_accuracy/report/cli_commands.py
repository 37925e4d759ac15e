"""The ``ascend-accuracy diagnose`` commands the CLI's advice prints, to paste as they are: the
verdict's own threshold, metric, scale guard, per-op thresholds and ignore list as options, and
the mode the dump was converted with (its om json's ``atc_cmdline``) under the mode advised."""
from __future__ import annotations

import os
from typing import Optional

from ..compare.result import CompareResult, Verdict
from ..compare.thresholds import per_op_flags, threshold_text, written_per_op
from ..core.locations import shown

#: how a command-line user converts and checks a mode: ``ascend-accuracy diagnose`` (compare and
#: judge have no mode; the model the dump ran is not known to them, hence the placeholder)
CLI_MODEL = "MODEL.onnx"


def cli_judge_options(verdict: Verdict) -> str:
    """The verdict's threshold, metric and scale guard as ``ascend-accuracy diagnose`` options
    (none where they are its defaults), so a pasted command judges as the compare did."""
    from ..core.check_defaults import DEFAULT_SCALE_TOLERANCE, DEFAULT_THRESHOLD

    thr = verdict.policy.default
    opts = []
    if thr.metric != "cosine":
        opts.append(f"--metric {thr.metric}")
    if thr.metric != "cosine" or thr.value != DEFAULT_THRESHOLD:
        opts.append(f"--threshold {threshold_text(thr.value)}")
    t = verdict.policy.scale_tolerance
    if t != DEFAULT_SCALE_TOLERANCE:
        opts.append("--scale-tolerance " + ("none" if t is None else f"{t:g}"))
    import shlex  # the compare's own per-op thresholds and ignore list: without them the
    # pasted diagnose failed first on an op the compare had ignored (code review)
    flags = per_op_flags(written_per_op(verdict.policy))  # another metric's: NAME=METRIC:T
    opts += [flags] if flags else []
    opts += [f"--ignore {shlex.quote(name)}" for name in verdict.policy.ignore]
    return "".join(" " + o for o in opts)


def cli_diagnose(verdict: Verdict, mode=None, result: Optional[CompareResult] = None) -> str:
    """``ascend-accuracy diagnose MODEL.onnx [--mode ...] [--input-shape ...] [judge options]``,
    shell-quoted, with the mode the dump was converted with (``dumped_mode``) combined with
    ``mode``, and its input shapes (a dynamic model's pasted command was refused without)."""
    import shlex

    from ..core.atc_cmdline import input_shape_of

    dumped, _ = dumped_mode(result)
    source = (result.meta.get("diagnose") if result is not None else None) or {}
    told = input_shape_of(_cmdline(result)) or ""
    shape = told or source.get("input_shape") or ""
    shaped = f" --input-shape {shlex.quote(shape)}" if shape else ""
    model = shlex.quote(shown(source["model"], os.getcwd())) if _model_there(source) else CLI_MODEL
    if told and source.get("sizes_chosen"):  # the conversion's own sizes: none was chosen
        source = _sized(source, told, result)
    return (f"ascend-accuracy diagnose {model}{cli_mode(mode, dumped)}{shaped}"
            + cli_judge_options(verdict) + _inputs_unknown(source))


def _sized(source, told: str, result: CompareResult):
    """``source`` where the dump's ATC command line gives the input sizes (``told``) that
    neither the golden's record nor its tensors gave: nothing was chosen, and diagnose's seed-0
    inputs at those sizes are the golden's where they have its recorded digest. The note said
    "the sizes the golden ran at are not known ... add --input-shape" after the command's own
    --input-shape from the command line, and said nothing of the inputs (nudenet 320n, H110)."""
    from ..errors import AscendAccuracyError
    from ..graph.input_shape_parse import parse_input_shape_text

    try:
        names = set(parse_input_shape_text(told, "atc_cmdline --input_shape"))
    except (AscendAccuracyError, ValueError):  # an unreadable one: the golden's account stands
        return source
    if not set(source["sizes_chosen"]) <= names:
        return source
    sized = {k: v for k, v in source.items() if k not in ("sizes_chosen", "sizes_unfit")}
    sized["seed"] = _seeded(source, told, result)
    return sized


def _seeded(source, shape: str, result: CompareResult):
    """0 where diagnose's seed-0 inputs at ``shape`` have the digest the result's golden records
    of its inputs (``golden_source``), else None (not those inputs, or not known)."""
    golden = result.meta.get("golden") or {}
    record = golden.get("golden_source") if isinstance(golden, dict) else None
    digest = record.get("inputs_digest") if isinstance(record, dict) else None
    if not digest or not _model_there(source):
        return None
    from ..errors import AscendAccuracyError
    from ..graph.content_digests import inputs_digest
    from ..graph.onnx_graph import make_inputs

    try:
        made = make_inputs(str(source["model"]), seed=0, input_shape=shape)
    except (AscendAccuracyError, ValueError):  # refused: not known to be the golden's inputs
        return None
    return 0 if inputs_digest(made) == digest else None


def _model_there(source) -> bool:
    """Whether the stored golden's model (``cli.golden_source``) is a file here."""
    return bool(source.get("model")) and os.path.isfile(str(source["model"]))


def _inputs_unknown(source) -> str:
    """What to add where the stored golden's inputs are not diagnose's seeded ones (the golden
    records their digest, not the arrays); "" where they are, or no golden names its model."""
    if not _model_there(source) or source.get("seed") == 0:
        return ""
    names = source.get("inputs") or ["NAME"]
    given = " ".join(f"--inputs {n}=FILE.npy" for n in names)
    chosen = source.get("sizes_chosen")
    if chosen and source.get("sizes_unfit"):  # 1s the model refuses: nothing to run pasted
        return (f" (the sizes the golden ran at are not known: its record and tensors do not "
                f"give those of {', '.join(repr(n) for n in chosen)}, and 1 for each dynamic "
                f"dimension does not fit the model: its ONNX shape inference or onnxruntime "
                f"refuses it; add "
                f"--input-shape with the sizes the golden ran at, or give the inputs it was "
                f"made from: {given})")
    if chosen:  # a dynamic model's golden that told no sizes: the command runs at 1s (a trial)
        return (f" (the sizes the golden ran at are not known: its record and tensors do not "
                f"give those of {', '.join(repr(n) for n in chosen)}, and --input-shape gives "
                f"1 for each dynamic dimension: choose them, or give the inputs the golden was "
                f"made from in place of --input-shape: {given})")
    return (f" (with the inputs the golden was made from, which it records only the digest of: "
            f"add {given}; without them diagnose runs seeded random inputs)")


def _cmdline(result: Optional[CompareResult]) -> str:
    """The ATC command line of the dump's conversion (its om json's ``atc_cmdline``), or ""."""
    meta = (result.meta.get("actual") or {}) if result is not None else {}
    return str(meta.get("atc_cmdline") or "")


def cli_mode(mode, dumped) -> str:
    """`` --mode X`` of ``mode`` on top of the dump's own mode ``dumped`` (either may be None)."""
    import shlex

    if dumped is not None:
        mode = dumped if mode is None else dumped | mode
    return "" if mode is None else f" --mode {shlex.quote(mode.yaml_form())}"


def dumped_mode(result: Optional[CompareResult]):
    """(the ``Mode`` the dump was converted with, from its om json's ``atc_cmdline`` in
    ``result``, or None; the options of that command line a mode cannot carry): a diagnose
    command without them diagnosed the default conversion and said PASSES of a fusion-off
    dump's failure (a diagnose trial)."""
    from ..core.atc_cmdline import mode_of_cmdline

    cmdline = _cmdline(result)
    om_json = ((result.meta.get("actual") or {}).get("om_json") or "") if cmdline else ""
    bases = [os.path.dirname(str(om_json))] if om_json else []  # ATC wrote the files there
    return mode_of_cmdline(cmdline, bases) if cmdline else (None, [])


#: what the command cannot carry where the device dump came without its om json: ``compare``
#: reads the dump's conversion mode from the om json's ``atc_cmdline`` only (a dump directory
#: records none), and a fusion-off dump's command without it diagnosed the default conversion
MODE_UNKNOWN = (" (the mode the dump was converted with is not known without its om json, "
                "--om-json F: for a dump converted in another mode, add that mode to --mode, "
                "e.g. --mode '{base: fusion_off, keep_dtype: [...]}')")


def not_carried(result: Optional[CompareResult]) -> str:
    """The sentence naming the dump's conversion options a diagnose command does not carry, or
    saying that the dump's mode is not known (a device dump compared without its om json)."""
    if result is not None and result.meta.get("actual_kind") == "ascend" and not _cmdline(result):
        return MODE_UNKNOWN
    left = dumped_mode(result)[1]
    if not left:
        return ""
    return (f" (the dump's conversion also used {' '.join(left)}, per its om json's "
            "atc_cmdline, which the command does not carry: add its effect to --mode, e.g. "
            "fusion_off for a switch file that turns every fusion off)")


#: said after a hint whose command names ``CLI_MODEL``: the golden names no model, so nothing
#: tells the inputs the dump ran on either, and diagnose pasted with its seeded random inputs
#: PASSED where the dump failed (int16-scale audio against silero's seeded draw, review 32)
PLACEHOLDER_INPUTS = (f"; {CLI_MODEL} stands for the ONNX model the dump ran, which diagnose "
                      "runs on seeded random inputs: give it the arrays the dump ran on, "
                      "--inputs NAME=FILE.npy for each model input, or it may pass where this "
                      "dump failed")


def with_inputs_note(hint: Optional[str], model_name: Optional[str] = None) -> Optional[str]:
    """``hint`` and ``PLACEHOLDER_INPUTS`` where one of its commands names ``CLI_MODEL``, the
    model named where the golden records its name (a cache entry's golden.json: audit 33)."""
    if hint and f"ascend-accuracy diagnose {CLI_MODEL}" in hint:
        if model_name:
            return hint + PLACEHOLDER_INPUTS.replace(
                "the ONNX model the dump ran", f"the ONNX model the dump ran ({model_name}, "
                "as the golden names it)", 1)
        return hint + PLACEHOLDER_INPUTS
    return hint
