"""The ``check_preprocessing`` fixture's body: step 5 (AIPP vs reference) as a test assertion."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional, Tuple

from ..core.keyword_names import closest_keywords
from ..core.yaml_text import yaml_scalar
from ..errors import ConfigError
from .session import get_state


def preprocessing_checker(request, ctx):
    """``check(om, images, *, reference, rank=0)`` bound to the test (see the fixture)."""
    state = get_state(request.config)

    def check(om, images, *, reference, rank=0):
        __tracebackhide__ = True
        from ..aipp import check_preprocessing as run_preprocessing_check
        from ..report.assertion import AccuracyFailure
        from .user_paths import resolve_file
        from .setup_checks import check_marks_unchanged

        ctx.checks += 1
        check_marks_unchanged(request, ctx)
        where = f"{ctx.nodeid}: check_preprocessing"
        config = getattr(om, "aipp", None)
        if config is None and isinstance(om, (str, Path)):
            config = resolve_file(om, ctx.bases, where, "AIPP file")
        if config is None:
            raise ConfigError(where, "the model has no AIPP file: convert it with "
                                     "ascend_model(model, aipp=\"aipp.cfg\")")
        if not callable(reference):
            raise ConfigError(where, "reference= must be a function image -> float CHW tensor")
        names, model_hw = _model_inputs(om, rank)
        result = run_preprocessing_check(config, images, reference, rank=rank, inputs=names,
                                         model_hw=model_hw)
        written = record_preprocessing(
            state, ctx.nodeid, result, None if result.passed else corrected_copy(
                state, ctx.nodeid, result, lambda: request.getfixturevalue("tmp_path")),
            lambda k, v: request.node.user_properties.append((k, v)))
        if result.passed:
            return result
        raise AccuracyFailure(result.report(corrected_path=written, show=state.settings.show),
                              None, None)

    return closest_keywords(check, "check_preprocessing")


def _model_inputs(om, rank: int):
    """(the model's input names in order, which errors name; the H x W of input ``rank``, what a
    crop size of 0 crops: the conversion's ``input_shape`` where it gives it, else the declared
    dims; None where not known or dynamic); no names and None without a model."""
    model = getattr(om, "model", None)
    if model is None:
        return [], None
    from ..graph.onnx_graph import declared_shape, graph_inputs, load_model, parse_input_shape

    inputs = graph_inputs(load_model(model, weights=False))
    if rank >= len(inputs):
        return [i.name for i in inputs], None
    try:  # (a dict or ATC's "x:1,3,224,224" text)
        given = (parse_input_shape(getattr(om, "input_shape", None)) or {}).get(inputs[rank].name)
    except Exception:  # noqa: BLE001 - refused where the model was converted
        given = None
    dims = tuple(given if given is not None else declared_shape(inputs[rank]))
    hw = dims[-2:] if len(dims) == 4 else ()
    ok = len(hw) == 2 and all(isinstance(d, int) and d > 0 for d in hw)
    return [i.name for i in inputs], hw if ok else None


def corrected_copy(state, nodeid: str, result, temp_dir,
                   suite=None) -> Optional[Tuple[str, str]]:
    """A failed check's corrected AIPP file, written beside the AIPP file (where a pasted path
    lasts: ``aipp.corrected_copy``): ``(path, text)``, the path as printed (relative to where
    pytest ran), the text with it as a YAML ``suite`` file in another folder spells it too, and
    a note when another name or place was taken. With ``--accuracy-report`` a copy goes into
    the test's report folder too (emptied when the test runs again: not the one to paste).
    ``temp_dir()``: where the copy goes when the AIPP file's folder cannot be written. None:
    nothing to correct."""
    import os

    from ..aipp.corrected_copy import write_corrected_beside
    from .report_folders import report_slug

    if not result.fixes:
        return None
    root = state.settings.report_dir
    folder = Path(root) / report_slug(nodeid) if root else None
    copy = write_corrected_beside(result, fallback_dir=folder or temp_dir,
                                  show=state.settings.show)
    if folder is not None and Path(copy.path).parent != folder:
        result.write_corrected(folder / Path(copy.path).name)
    shown = text = state.settings.show(copy.path)
    if suite is not None:  # aipp: paths are relative to the suite file
        in_suite = Path(os.path.relpath(copy.path, Path(suite).parent)).as_posix()
        if not Path(shown).is_absolute() and in_suite != shown:
            text += f" (in {Path(suite).name}: aipp: {yaml_scalar(in_suite)})"
    return shown, f"{text} ({copy.note})" if copy.note else text


def record_preprocessing(state, nodeid: str, result, corrected: Optional[Tuple[str, str]],
                         record_property: Callable[[str, str], None]) -> Optional[str]:
    """The check's figures for the session summary (``terminal_report.preprocessing_lines``)
    and its test's JUnit properties (``preprocessing_*``); ``corrected``: ``corrected_copy``'s.
    The corrected file's text for the failure's report."""
    n = len(result.agreements)
    agree = sum(bool(a.ok) for a in result.agreements)
    record = {"nodeid": nodeid, "aipp": result.where(state.settings.show),
              "input": result.op.rank, "format": result.op.input_format, "images": n,
              "agree": agree, "passed": bool(result.passed),
              "corrected": corrected[1] if corrected else None}
    state.preprocessing_records.append(record)
    props = {"preprocessing_passed": "true" if result.passed else "false",
             "preprocessing_aipp": record["aipp"], "preprocessing_input": str(result.op.rank),
             "preprocessing_images": str(n), "preprocessing_agree": str(agree)}
    if corrected:
        props["preprocessing_corrected"] = corrected[0]
    for key, value in props.items():
        record_property(key, value)
    return record["corrected"]


# -- YAML suites: ``aipp:`` and ``reference:`` per model ----------------------------------------
def yaml_aipp(entry, base_dir: Path, at: str):
    """``(aipp path, (reference spec, base dir))`` of a YAML model entry, validated at collection
    (the AIPP file parsed, the reference importable); ``(None, None)`` without ``aipp:``."""
    aipp, reference = entry.get("aipp"), entry.get("reference")
    if aipp is None and reference is None:
        return None, None
    if not isinstance(aipp, str) or not aipp:
        raise ConfigError(f"{at}.aipp", "required with reference: the AIPP file (ATC insert_op_conf), "
                                        "relative to the suite file")
    if not isinstance(reference, str) or ":" not in reference:
        raise ConfigError(f"{at}.reference", "required with aipp: MODULE:FN, the reference network's "
                                             "pre-processing of one raw image (module next to the suite "
                                             "file, or path/to/file.py)")
    if entry.get("golden") is not None:
        raise ConfigError(f"{at}.golden", "a stored golden is not supported with aipp: yet (the golden "
                                          "is computed from reference(raw inputs))")
    import os

    from ..aipp import read_aipp_config
    from ..aipp.user_files import load_reference
    from ..core.locations import shown

    path = Path(aipp).expanduser()
    path = path if path.is_absolute() else Path(base_dir) / path
    if not path.is_file():
        raise ConfigError(f"{at}.aipp", f"file not found: {shown(path, os.getcwd())}")
    try:
        read_aipp_config(path)
    except ConfigError as exc:  # the file as printed: relative to where pytest ran
        where = str(exc.where or "")
        if where.startswith(str(path)):
            where = shown(path, os.getcwd()) + where[len(str(path)):]
        raise ConfigError(where or None, exc.problem) from None
    load_reference(reference, base_dir, f"{at}.reference")
    return path, (reference, str(base_dir))
