"""One accuracy check with its follow-ups, the single code path of Python tests
(``check_accuracy``) and YAML suite items:

1. compare and judge (``accuracy_check.run_check``), the hint in the test's own mode;
2. on failure, with ``--accuracy-diagnose``: the debugging flow on the test's own mode and
   inputs (``triage.diagnose(mode=...)``), its verdict appended to the failure;
3. on success, with ``max_drop``: the per-operator baseline check.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

import pytest

from .accuracy_check import check_against_baseline, report_slug, require_baseline_inputs, run_check
from .session import AccuracyState


def _source_model(handle):
    """The ONNX model file ``handle`` (an ``AscendModel``) was converted from, or None (the
    hint finds a failing op's golden operands through it when the golden holds outputs only)."""
    source = getattr(getattr(handle, "converted", None), "source_model", None)
    return source if source is not None and Path(source).is_file() else None


def checked(state: AccuracyState, actual, golden, spec, *, nodeid: str, model: str, mode: str,
            handle=None, inputs=None, record_property: Optional[Callable] = None,
            amend: Optional[Callable] = None):
    """Run the check and its follow-ups; ``handle`` is the ``AscendModel`` that produced
    ``actual`` from ``inputs`` (None when the test compares dumps it did not produce);
    ``amend(exc)`` may add lines to a failure before the diagnosis is appended."""
    __tracebackhide__ = True
    from ..report.assertion import AccuracyFailure

    try:
        outcome = run_check(state, actual, golden, spec, nodeid=nodeid, model=model, mode=mode,
                            record_property=record_property,
                            hint_mode=handle.mode if handle is not None else None,
                            source_model=_source_model(handle))
    except AccuracyFailure as exc:
        if amend is not None:
            amend(exc)
        if state.settings.diagnose:
            exc.args = (f"{exc.args[0].rstrip()}\n{diagnosis_note(state, handle, inputs, spec, nodeid)}",)
        raise
    if spec.max_drop is not None:
        from ..errors import AscendAccuracyError

        try:
            require_baseline_inputs(handle, inputs, nodeid)
        except AscendAccuracyError as exc:  # no baseline can be judged: the test fails, say so
            state.mark_failed(nodeid, f"baseline check not possible: {exc.problem}")
            raise
        try:
            base = check_against_baseline(state, outcome.result, handle, inputs, spec,
                                          nodeid=nodeid)
        except AscendAccuracyError as exc:  # an unreadable baseline: the test fails, say so
            state.mark_failed(nodeid, f"baseline unreadable: {exc} (--accuracy-regen rewrites "
                                      f"it)")
            raise
        if base.written is not None:
            state.record_golden_write(state.settings.show(base.written),
                                      f"baseline {base.status}", nodeid)
        if not base.passed:
            first = base.regressions[0].line() if base.regressions else state.settings.show(base.path)
            state.mark_failed(nodeid, f"baseline {base.status}: {first}")
            pytest.fail(base.message, pytrace=False)
        if base.model_changed:  # a pass on an edited model is said, not silent (issue 13 D7)
            import warnings

            from ..baseline import ModelChangedWarning
            shown = state.settings.show(base.path)
            warnings.warn(ModelChangedWarning(f"{shown}: {base.model_changed[len('note: '):]}"))
        if base.unjudged:  # ops with no baseline value went unjudged: said, not silent
            import warnings

            from ..baseline import BaselineGapWarning
            n = len(base.unjudged)
            warnings.warn(BaselineGapWarning(
                f"{state.settings.show(base.path)}: {n} operator line{'s' if n != 1 else ''} "
                f"compared now hold{'s' if n == 1 else ''} no baseline value to be judged "
                f"against (cosine NaN, or not compared, when recorded): "
                f"{', '.join(base.unjudged[:5])}{', ...' if n > 5 else ''}; "
                f"--accuracy-regen-all records their values"))
    return outcome


def diagnosis_note(state: AccuracyState, handle, inputs, spec, nodeid: str) -> str:
    """The --accuracy-diagnose verdict for a failed check, or why there is none."""
    from ..errors import AscendAccuracyError

    if handle is None or inputs is None:
        return ("diagnosis (--accuracy-diagnose): not run: this test compared dumps it did not "
                "produce with ascend_model(...).run(inputs)")
    if getattr(handle, "aipp", None) is not None:  # raw inputs: the flow starts at step 5
        return ("diagnosis (--accuracy-diagnose): step 5 first: this model pre-processes raw inputs "
                "with an AIPP file; check it with check_preprocessing(om, images, reference=fn) "
                "or ascend-accuracy diagnose --aipp F --images DIR --reference MODULE:FN")
    try:
        return diagnose_failure(state, handle, inputs, spec, nodeid=nodeid)
    except AscendAccuracyError as exc:
        return f"diagnosis (--accuracy-diagnose): could not run: {exc}"


def diagnose_failure(state: AccuracyState, handle, inputs, spec, *, nodeid: str) -> str:
    """Run the debugging flow from the failing test's own mode (``handle.mode``) on its own
    inputs; the lines to append to the failure. Fix files go to the test's report directory
    (or the cache)."""
    from ..triage.flow import diagnose

    root = state.settings.report_dir or (state.settings.cache_dir / "diagnoses")
    out_dir = Path(root) / report_slug(nodeid) / "diagnosis"
    arrays = getattr(inputs, "arrays", inputs)  # BaselineInputs hold their arrays
    with state.device_lock():
        d = diagnose(handle.model, arrays, state.backend, spec.threshold,
                     budget=state.settings.diagnose_budget, cache=state.cache,
                     input_shape=handle.input_shape, metric=spec.metric,
                     per_op=spec.per_op_dict or None, ignore=spec.ignore, out_dir=out_dir,
                     mode=handle.mode, atc_options=getattr(handle, "atc_options", None) or None)
    shown = state.settings.show(out_dir)
    lines = [f"diagnosis (--accuracy-diagnose, {d.conversions} new conversion"
             f"{'s' if d.conversions != 1 else ''}, from mode {handle.mode.name}): {d.verdict}"]
    if d.fix_mode is not None and d.restored_by != "default":
        files = ", ".join(sorted(n for n in d.fix_files if not n.startswith("diagnosis")))
        lines.append(f"  fix: modes=[{d.fix_mode.python_expr()}]  (YAML: modes: "
                     f"[{d.fix_mode.yaml_form()}]; from pytest_ascend_accuracy import "
                     f"{', '.join(d.fix_mode.python_imports())})")
        lines.append(f"  fix files written to {shown}/ ({files})")
    lines.append(f"  full diagnosis: {shown}/diagnosis.txt")
    return "\n".join(lines)


def suite_spec_and_inputs(state: AccuracyState, case):
    """A YAML case's spec (the ini ``max_drop`` default applied, as for Python tests) and its
    inputs; for a baseline check they are ``BaselineInputs`` a rerun reproduces (the seed, or
    the ``.npy`` files stored next to the baseline)."""
    from dataclasses import replace

    spec = case.spec
    if spec.max_drop is None and state.settings.max_drop is not None:
        spec = replace(spec, max_drop=state.settings.max_drop)
    arrays = case.inputs.load(case.model, case.input_shape)
    if case.aipp is not None and not case.inputs.files:  # an AIPP input takes raw images
        from ..aipp import read_aipp_config
        from ..aipp.raw_images import seeded_raw_images
        from ..graph.onnx_graph import graph_inputs, load_model

        names = [i.name for i in graph_inputs(load_model(case.model, weights=False))]
        arrays = seeded_raw_images(read_aipp_config(case.aipp), arrays, names,
                                   case.inputs.seed or 0)
    if spec.max_drop is None:
        return spec, arrays
    from ..baseline import inputs_for_baseline

    if case.inputs.files or case.aipp is not None:  # raw images: stored, not remade
        return spec, inputs_for_baseline(case.model, None, inputs=arrays,
                                         input_shape=case.input_shape)
    return spec, inputs_for_baseline(case.model, None, seed=case.inputs.seed or 0,
                                     input_shape=case.input_shape)
