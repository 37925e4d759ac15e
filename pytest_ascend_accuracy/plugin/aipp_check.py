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

        ctx.checks += 1
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


def yaml_golden_inputs(case, inputs, where: str):
    """Step 5, then the golden run's inputs: each AIPP input's raw images through the reference
    pre-processing (the other inputs as they are). A wrong AIPP file fails here, naming fields."""
    import numpy as np

    from ..aipp import check_preprocessing as run_preprocessing_check, read_aipp_config
    from ..aipp.user_files import load_reference
    from ..graph.onnx_graph import graph_inputs, load_model
    from ..report.assertion import AccuracyFailure

    config = read_aipp_config(case.aipp)
    reference = load_reference(case.reference[0], case.reference[1], where)
    # the input names: no weight is read
    names = [i.name for i in graph_inputs(load_model(case.model, weights=False))]
    out = dict(inputs)
    for op in config.ops:
        name = names[op.rank] if op.rank < len(names) else None
        if name is None or name not in inputs:
            raise ConfigError(where, f"inputs: no raw images for AIPP input {op.rank} "
                                     f"({name or 'not in the model'})")
        raw = np.asarray(inputs[name])
        result = run_preprocessing_check(config, raw, reference, rank=op.rank)
        if not result.passed:
            raise AccuracyFailure(result.report(), None, None)
        images = [raw] if raw.ndim == 3 and op.input_format in ("RGB888_U8", "XRGB8888_U8") else list(raw)
        refs = [np.asarray(reference(img), dtype=np.float32) for img in images]
        out[name] = np.stack([r[0] if r.ndim == 4 else r for r in refs])
    return out
