"""Render a ``Diagnosis``: text, JSON, an HTML page, and the fix as ready-to-use files.

``write_all(diagnosis, out_dir)`` writes, atomically:
- ``keep_dtype.cfg`` / ``fusion_switch.cfg`` (whatever the fix mode needs, from
  ``Mode.config_files``) and ``atc_args.txt``: every ATC option of the fixed conversion but
  ``--model``, ``--framework``, ``--output`` and ``--soc_version``, one per line, as the
  backend passes them to its toolkit (``triage.atc_args``; the test's own options such as
  ``--input_shape`` included), config files as ``<folder name>/<file>``, to run from the
  folder holding ``out_dir`` (``triage.fix_folder``; the printed line says which folder);
- a copy of each file of the user's those options name (the AIPP file of ``--insert_op_conf``,
  as the diagnosed conversions read it), named ``<folder name>/<its name>`` the same way;
- ``diagnosis.txt``, ``diagnosis.json`` and ``diagnosis.html`` (steps, tables, and the per-op
  chart of the final comparison).

For a model with ONNX quantisation ops, which ATC does not convert as it is, none of the ATC
files is written: ``atc_note.txt`` says why in their place, and the fix line names the mode on
the emulator only (``triage.quant_note``).
"""
from __future__ import annotations

import html
import json
import math
import os
import shlex
from dataclasses import replace
from typing import Dict, List, Optional

from ..compare.thresholds import threshold_text
from ..core.atomic_files import atomic_write_bytes, atomic_write_text
from ..errors import ConfigError
from ..report.figures import error_figure
from .fix_folder import REPORT_FILES, copy_names, folder_parts, named_files, shell_line
from .result import GUIDE_STEPS, guide_step

ATC_ARGS_FILE = REPORT_FILES[0]
#: the steps' numbers, as the text and HTML renderings explain them
STEPS_KEY = "; ".join(f"{n} {what}" for n, what in GUIDE_STEPS.items())


def _num(v: Optional[float]) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "NaN"
    return f"{v:.6f}"


def fix_atc_args(diagnosis, config_dir: str = ".",
                 written: Optional[Dict[str, str]] = None) -> List[str]:
    """The ATC options of the fix as ``--k=v`` strings (config files under ``config_dir``, and
    the user's files whose copies ``written`` holds): ``diagnosis.fix_atc`` (as the backend
    passes them), else the fix mode's own spelling."""
    if diagnosis.fix_mode is None:
        return []
    fix = diagnosis.fix_atc
    if fix is not None:
        copies = {option: name for option, name in copy_names(fix.user_files).items()
                  if name in (written or {})}
        return fix.args(config_dir, copies)
    return [f"--{k}={v}" for k, v in diagnosis.fix_mode.atc_options(config_dir)]


def _config_dir(written: Dict[str, str]) -> str:
    """The fix folder's name, which the ATC options name its files under (config files, the
    user's copies), run from the folder holding it (``fix_folder``; the config files are named
    ./keep_dtype.cfg until written)."""
    named = [os.path.dirname(path) for path in named_files(written).values()]
    return folder_parts(named[0] or ".")[1] if named else "."


def _run_from(written: Dict[str, str]) -> str:
    """`` (run from DIR, which holds NAME/)`` where the fix folder's parent is not the working
    directory, else ""."""
    configs = [os.path.dirname(path) for path in named_files(written).values()]
    if not configs:
        return ""
    parent, name = folder_parts(configs[0] or ".")
    return "" if parent == "." else f" (run from {shlex.quote(parent)}, which holds {name}/)"


def step_name(step) -> str:
    """A step's name as shown: step 1's is the mode it ran in (``fusion_off`` where the flow
    starts from fusion off: it read ``default [fusion_off]``), every other step's its own."""
    return step.mode if step.step == "default" and step.mode else step.step


def _spelled_for(diagnosis) -> str:
    return getattr(diagnosis.fix_atc, "spelled_for", "") or ""


def text(diagnosis, files: Optional[Dict[str, str]] = None) -> str:
    """The diagnosis as lines a person reads top-down: verdict, fix, then each step."""
    d = diagnosis
    head = "RESTORED" if d.fixed and d.restored_by != "default" else (
        "PASSES" if d.restored_by == "default" else "NOT RESTORED")
    if d.whole_model:  # still a fix that passes pasted (exit 0), but no float16 one
        from .kept_share import fix_keeps, kept_ops

        kept = kept_ops(fix_keeps(d.keep_dtype, d.fix_mode))
        head += (f" only by keeping {kept} of {d.ops_total} ops in float32 "
                 f"({'the whole model' if kept >= d.ops_total else 'nearly the whole model'})")
    lines = [f"ascend-accuracy diagnosis of {d.model}: {head}",
             f"  {d.verdict}",
             f"  backend: {d.backend}; threshold: {d.metric} {threshold_text(d.threshold)}; "
             f"conversions: {d.conversions} new, {d.cache_hits} from the cache (budget {d.budget})"]
    if d.budget_exhausted:
        from .result import rerun_with_budget

        lines.append(f"  the budget ran out: {rerun_with_budget(d.budget_option, d.budget)} to "
                     f"continue from the cache (the budget counts new conversions only: the "
                     f"same command goes on as well, {d.budget} more at a time)")
    written = files or d.fix_files or {}
    if d.fix_mode is not None and d.restored_by != "default":
        # the config files as written (they were named ./keep_dtype.cfg wherever --out put them)
        if d.atc_quant_ops:  # no ATC options for a model ATC refuses (``quant_note``)
            lines.append(f"  fix: mode {d.fix_mode.name}, on the emulator only; ATC: none, ATC "
                         f"does not convert this model as it is (above)")
        else:
            args = fix_atc_args(d, _config_dir(written), written)
            unwritten = (" (its config files are written by --out DIR)"
                         if not named_files(written) and d.fix_mode.config_files() else "")
            lines.append(f"  fix: mode {d.fix_mode.name}; ATC{_run_from(written)}: "
                         f"{shell_line(args)}{unwritten}")
        if _spelled_for(d) and not d.atc_quant_ops:
            lines.append(f"  (these ATC options are {_spelled_for(d)})")
        lines.append(f"  in a test: modes=[{d.fix_mode.python_expr()}] (from pytest_ascend_accuracy "
                     f"import {', '.join(d.fix_mode.python_imports())}); in a YAML suite: "
                     f"modes: [{d.fix_mode.yaml_form()}]")
        if d.set_aside:  # the fix alone leaves them failing (``triage.coverage``)
            from ..report.ignore_spelling import ignore_flags, yaml_list

            lines.append(f"  with the ops set aside ignored: {ignore_flags(d.set_aside)} on the "
                         f"command line; in a test: ignore={list(d.ignore_with_fix)!r}; in a "
                         f"YAML suite: ignore: {yaml_list(d.ignore_with_fix)}")
    if d.ignore_instead:  # the order after near-tie selections: what judges the rest
        from ..report.ignore_spelling import ignore_flags, yaml_list

        lines.append(f"  instead, to judge the rest with the ops after the selections ignored "
                     f"(that hides them): {ignore_flags(d.ignore_instead)} on the command line; "
                     f"in a test: ignore={list(d.ignore_instead)!r}; in a YAML suite: ignore: "
                     f"{yaml_list(d.ignore_instead)}")
    for name, path in sorted(written.items()):
        lines.append(f"  wrote {name}: {path}")
    lines.append("")
    lines.append("steps:")
    lines.append(f"  (in the order run, each with its number in the debugging flow: {STEPS_KEY})")
    for s in d.steps:
        state = {True: "PASSED", False: "FAILED", None: "-"}[s.passed]
        mode = f" [{s.mode}]" if s.mode else ""
        cost = f" ({s.conversions} conversion{'s' if s.conversions != 1 else ''})" if s.conversions else ""
        lines.append(f"  step {guide_step(s.step)} {step_name(s)}{mode}: {state} | "
                     f"{s.summary}{cost}")
        if s.differing and s.step in ("high_precision", "buffer_off", "fusion_off"):
            lines.append(f"     ops that differ from the default run: {', '.join(s.differing[:8])}"
                         + (" ..." if len(s.differing) > 8 else ""))
        if s.table and s.passed is False:
            width = max(len(r.op) for r in s.table)
            for r in s.table:
                lines.append(f"     {r.op:<{width}}  {r.op_type:<14} cos {_cos(r.cosine, d)}  "
                             f"rel-L2 {error_figure(r.rel_l2)}  "
                             f"max-abs {error_figure(r.max_abs)}  {r.note}".rstrip())
    return "\n".join(lines) + "\n"


def _cos(value: float, d) -> str:
    """A step table's cosine: ``cosine_cell`` against the diagnosis's cosine threshold (a
    strict MTCNN check's table read ``cos 0.999999`` for 0.9999985, audit 34), else six
    decimals."""
    from ..report.figures import cosine_cell

    if d.metric != "cosine" or d.threshold is None:
        return _num(value)
    return cosine_cell(value, float(d.threshold))


def to_dict(diagnosis) -> dict:
    d = diagnosis
    return {
        "model": d.model, "backend": d.backend, "threshold": d.threshold, "metric": d.metric,
        "restored_by": d.restored_by, "verdict": d.verdict,
        "fix": None if d.fix_mode is None else {
            "mode": d.fix_mode.name, "mode_key": d.fix_mode.key(),
            "atc_args": [] if d.atc_quant_ops else fix_atc_args(
                d, _config_dir(d.fix_files or {}), d.fix_files),
            "atc_args_spelled_for": None if d.atc_quant_ops else _spelled_for(d) or None,
            "python": d.fix_mode.python_expr(), "yaml": d.fix_mode.yaml_form(),
            "keep_dtype": list(d.keep_dtype), "fusion_rules_off": list(d.fusion_rules_off)},
        "conversions": d.conversions, "cache_hits": d.cache_hits, "budget": d.budget,
        "budget_exhausted": d.budget_exhausted, "files": dict(d.fix_files),
        "set_aside": list(d.set_aside), "ignore_with_fix": list(d.ignore_with_fix),
        "ops_total": d.ops_total, "whole_model": d.whole_model,
        "ignore_instead": list(d.ignore_instead),
        "atc_converts": not d.atc_quant_ops, "atc_quant_ops": list(d.atc_quant_ops),
        "steps": [{
            "step": s.step, "mode": s.mode, "passed": s.passed, "summary": s.summary,
            "first_failure": s.first_failure, "first_value": _json_float(s.first_value),
            "failing": list(s.failing), "differing": list(s.differing),
            "conversions": s.conversions,
            "table": [{"op": r.op, "op_type": r.op_type, "cosine": _json_float(r.cosine),
                       "rel_l2": _json_float(r.rel_l2), "max_abs": _json_float(r.max_abs),
                       "note": r.note} for r in s.table]} for s in d.steps],
    }


def _json_float(v):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return None if v is None or math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def html_page(diagnosis) -> str:
    """A self-contained page: verdict, fix, a step table, and the final per-op chart."""
    from ..report.html_report import _STYLE, chart_svg

    d = diagnosis
    e = html.escape
    rows = "".join(
        f"<tr><td>{guide_step(s.step)}</td><td class=\"w\">{e(step_name(s))}</td>"
        f"<td class=\"w\">{e(s.mode)}</td>"
        f"<td class=\"{'pass' if s.passed else 'fail' if s.passed is False else ''}\">"
        f"{ {True: 'passed', False: 'failed', None: '-'}[s.passed]}</td>"
        f"<td>{s.conversions}</td><td class=\"w\">{e(s.summary)}</td></tr>"  # (it wraps: the
        for s in d.steps)  # page was 2,157 px wide for PP-OCRv4 det, _STYLE's cells never wrap)
    fix = ""
    if d.fix_mode is not None and d.restored_by != "default" and d.atc_quant_ops:
        fix = (f"<p>fix, on the emulator only: <code>modes=[{e(d.fix_mode.python_expr())}]"
               "</code>; no ATC options: ATC does not convert this model as it is</p>")
    elif d.fix_mode is not None and d.restored_by != "default":
        written = d.fix_files or {}
        fix = (f"<p>fix{e(_run_from(written))}: <code>"
               f"{e(shell_line(fix_atc_args(d, _config_dir(written), written)))}</code>")
        fix += f" ({e(_spelled_for(d))})</p>" if _spelled_for(d) else "</p>"
    chart = ""
    if d.final is not None:
        chart = "<h2>final comparison</h2>" + chart_svg(
            d.final, d.final.judge(d.threshold, metric=d.metric))
    cls = "pass" if d.fixed else "fail"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>diagnosis of {e(d.model)}</title><style>{_STYLE}</style></head><body>\n"
            f"<h1 class=\"{cls}\">{e(d.verdict)}</h1>\n"
            f"<p class=\"meta\">{e(d.backend)}; {d.conversions} new conversions, "
            f"{d.cache_hits} cached (budget {d.budget})</p>\n{fix}\n"
            f"<p>steps in the order run; step: its number in the debugging flow ({e(STEPS_KEY)})"
            "</p><table><tr><th>step</th><th>name</th><th>mode</th><th>result</th>"
            "<th>conversions</th>"
            f"<th>what it showed</th></tr>{rows}</table>\n{chart}\n</body></html>\n")


def write_all(diagnosis, out_dir) -> Dict[str, str]:
    """Write the fix files and the three renderings into ``out_dir``; returns {name: path}."""
    out = os.fspath(out_dir)
    os.makedirs(out, exist_ok=True)
    files: Dict[str, str] = {}
    from .quant_note import NOTE_FILE, note_file_text

    quant = diagnosis.fix_mode is not None and note_file_text(diagnosis)
    if quant and diagnosis.restored_by != "default":  # ATC refuses the model: a note instead
        files[NOTE_FILE] = os.fspath(atomic_write_text(os.path.join(out, NOTE_FILE), quant))
    elif diagnosis.fix_mode is not None and diagnosis.restored_by != "default":
        for name, content in diagnosis.fix_mode.config_files().items():
            files[name] = os.fspath(atomic_write_text(os.path.join(out, name), content))
        files.update(_copy_user_files(diagnosis.fix_atc, out))
        # run from the folder holding it
        args = fix_atc_args(diagnosis, folder_parts(out)[1], files)
        files[ATC_ARGS_FILE] = os.fspath(atomic_write_text(os.path.join(out, ATC_ARGS_FILE),
                                                           "\n".join(args) + "\n"))
    for name in ("diagnosis.txt", "diagnosis.json", "diagnosis.html"):
        files[name] = os.path.join(out, name)
    with_files = replace(diagnosis, fix_files=files)
    # reports: text UTF-8 cannot hold (a model file named from undecodable bytes) escaped
    atomic_write_text(files["diagnosis.txt"], text(with_files), errors="backslashreplace")
    atomic_write_text(files["diagnosis.json"], json.dumps(to_dict(with_files), indent=2) + "\n")
    atomic_write_text(files["diagnosis.html"], html_page(with_files), errors="backslashreplace")
    return files


def _copy_user_files(fix, out: str) -> Dict[str, str]:
    """Copy, byte for byte, each file of the user's that the fix's ATC options name into
    ``out`` (``fix_folder.copy_names``): {name: path}. The copy, not the path the user gave,
    goes with the folder to the Ascend machine and resolves from the folder holding it."""
    if fix is None:
        return {}
    sources = dict(fix.user_files)
    copied: Dict[str, str] = {}
    for option, name in copy_names(fix.user_files).items():
        try:
            with open(sources[option], "rb") as f:
                data = f.read()
        except OSError as exc:
            raise ConfigError(f"--{option} file {sources[option]}",
                              f"cannot be copied into the fix folder "
                              f"({exc.strerror or exc})") from None
        copied[name] = os.fspath(atomic_write_bytes(os.path.join(out, name), data))
    return copied
