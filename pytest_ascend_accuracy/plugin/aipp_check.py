"""The ``check_preprocessing`` fixture's body: step 5 (AIPP vs reference) as a test assertion."""
from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from .session import get_state


def preprocessing_checker(request, ctx):
    """``check(om, images, *, reference, rank=0)`` bound to the test (see the fixture)."""
    state = get_state(request.config)

    def check(om, images, *, reference, rank=0):
        __tracebackhide__ = True
        from ..aipp import check_preprocessing as run_preprocessing_check
        from ..report.assertion import AccuracyFailure
        from .accuracy_check import report_slug, resolve_file
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
        result = run_preprocessing_check(config, images, reference, rank=rank)
        if result.passed:
            return result
        written = None
        if result.fixes:
            root = state.settings.report_dir
            out_dir = (Path(root) / report_slug(ctx.nodeid)) if root else request.getfixturevalue("tmp_path")
            out_dir.mkdir(parents=True, exist_ok=True)
            written = result.write_corrected(out_dir / f"{Path(result.config.path).stem}.corrected.cfg")
        raise AccuracyFailure(result.report(corrected_path=written), None, None)

    return check


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
    from ..aipp import read_aipp_config
    from ..aipp.user_files import load_reference

    path = Path(aipp).expanduser()
    path = path if path.is_absolute() else Path(base_dir) / path
    if not path.is_file():
        raise ConfigError(f"{at}.aipp", f"file not found: {path}")
    read_aipp_config(path)
    load_reference(reference, base_dir, f"{at}.reference")
    return path, (reference, str(base_dir))
