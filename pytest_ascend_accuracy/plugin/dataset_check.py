"""A dataset check inside pytest, shared by the ``check_dataset`` fixture and YAML items.

Runs ``dataset.run_dataset_check`` with the session's cache and the test's ``@accuracy``
policy (which judges the traced sample's operators), shows a progress line through the
terminal reporter (not under ``-q``, not on xdist workers), records the figures for the
session summary, JUnit properties and, with ``--accuracy-report=DIR``, ``dataset.html``
(``plugin.dataset_page``).
"""
from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Callable, Optional

from ..core.yaml_text import yaml_flow_map
from .session import AccuracyState

#: seconds between progress lines; checks that finish sooner print none
PROGRESS_SECONDS = 5.0


def progress_reporter(config, label: str) -> Optional[Callable[[int, Optional[int]], None]]:
    """``progress(done, total)`` writing ``dataset LABEL: 400/1000 samples`` lines, or None."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or hasattr(config, "workerinput") or config.getoption("verbose", 0) < 0:
        return None  # (-q; ``Config.get_verbosity`` is pytest 8's, this package supports 7.0)
    capture = config.pluginmanager.get_plugin("capturemanager")
    start = time.monotonic()
    state = {"next": start + PROGRESS_SECONDS, "shown": False}

    def progress(done: int, total: Optional[int]) -> None:
        now = time.monotonic()
        final = total is not None and done >= total
        if now < state["next"] and not (final and state["shown"]):
            return
        state["next"] = now + PROGRESS_SECONDS
        state["shown"] = True
        of = f"/{total}" if total else ""
        quiet = capture.global_and_fixture_disabled() if capture else contextlib.nullcontext()
        with quiet:
            reporter.write_line(f"dataset {label}: {done}{of} samples ({now - start:.1f} s)")

    return progress


def run_dataset(state: AccuracyState, om, samples, *, nodeid: str, spec, config, metric="top1",
                labels=None, max_drop=0.01, output=None, postprocess=None,
                record_property: Optional[Callable[[str, str], None]] = None, reference_inputs=None,
                names_where: str = "@accuracy per_op/ignore", higher_is_better: bool = True,
                name: Optional[str] = None, batch_axis="auto"):
    """Run, record and report one dataset check; raises ``DatasetFailure`` when it fails.
    ``names_where`` starts the error of a per_op/ignore entry naming no op of the model (checked
    before any sample runs). The model is named as its accuracy check names it: ``name`` (a
    YAML item's ``name:``, as the grid names it) or the file's stem (``model_label``), in the
    progress line and the summary. The traced sample is judged by the test's whole policy,
    its scale guard (``scale_tolerance``) included, as ``check_accuracy`` judges it."""
    __tracebackhide__ = True
    from ..dataset import run_dataset_check
    from ..dataset.result import DatasetFailure, to_record
    from ..graph.onnx_graph import model_label
    from .model_labels import named_key

    from .dataset_page import DatasetPage

    mode = getattr(getattr(om, "mode", None), "name", "default")
    model = name or (model_label(om.model) if hasattr(om, 'model') else 'model')
    label = f"{model} [{mode}]"
    page = DatasetPage.next_for(state, nodeid)
    try:
        result, compared, verdict = run_dataset_check(
            om, samples, metric=metric, labels=labels, max_drop=max_drop, output=output,
            postprocess=postprocess, cache=state.cache, threshold=spec.threshold,
            per_op=spec.per_op_dict or None, ignore=spec.ignore, op_metric=spec.metric,
            progress=progress_reporter(config, label), reference_inputs=reference_inputs,
            names_where=names_where, higher_is_better=higher_is_better,
            scale_tolerance=spec.scale_tolerance, batch_axis=batch_axis,
            on_traced=page.copy_tensors if page is not None else None)
    except BaseException:  # (a Ctrl-C while the trace copied its tensors: none stay)
        if page is not None:
            page.discard()
        raise
    record = to_record(result, nodeid, str(page.path) if page is not None else None)
    record["model"] = model  # its file tells it from another of one name (``model_labels``)
    _, record["model_file"], record["model_as_given"] = (
        (None, None, None) if name or not hasattr(om, "model") else named_key(om.model))
    state.dataset_records.append(record)
    if record_property is not None:
        for key, value in result.properties().items():
            record_property(key, value)
    if page is not None:
        page.write(state, nodeid, result, compared, verdict)
    if result.passed:
        return result
    failure = DatasetFailure(result, compared, verdict)
    from .expected_failure import skipped_diagnosis

    skipped = state.settings.diagnose and skipped_diagnosis(state, nodeid, DatasetFailure)
    if skipped:  # an xfail: minutes of conversions nobody would see
        from ..report.hints import diagnosis_below

        failure.args = (f"{diagnosis_below(failure.args[0], False).rstrip()}\n{skipped}",)
    elif state.settings.diagnose:  # after the page: a job cancelled in its conversions keeps it
        from dataclasses import replace

        from ..report.hints import diagnosis_below

        state.diagnosed.pop(nodeid, None)
        try:
            raise failure
        except DatasetFailure:  # (an error in it is shown after the failure's own text)
            note = dataset_diagnosis(state, om, samples, result, spec, nodeid, reference_inputs)
        diagnosis = state.diagnosed.pop(nodeid, None)
        ran = diagnosis is not None  # (the AIPP advice points at it, or not at a rerun)
        failure.args = (f"{diagnosis_below(failure.args[0], ran).rstrip()}\n{note}",)
        if diagnosis is not None:
            record["diagnosis"] = str(diagnosis)  # (the index links it)
        advice = result.culprit.next_step if result.culprit is not None else ""
        if advice:  # the page's advice as the terminal's reads now
            result.culprit = replace(result.culprit, next_step=diagnosis_below(advice, ran))
        if page is not None and (ran or advice and result.culprit.next_step != advice):
            page.link_diagnosis(diagnosis)
    raise failure


def dataset_diagnosis(state: AccuracyState, om, samples, result, spec, nodeid: str,
                      reference_inputs=None) -> str:
    """The --accuracy-diagnose verdict of a failed dataset check: the debugging flow on the
    first flipped sample, the one the check traced to an operator (``check_flow``), from the
    test's mode and with its ``@accuracy`` policy; or why there is none."""
    from ..errors import AscendAccuracyError
    from .check_flow import diagnosis_note

    head = "diagnosis (--accuracy-diagnose)"
    culprit = result.culprit
    if culprit is None:
        why = result.untracked or "no sample's top-1 flipped"
        return (f"{head}: not run: no sample was traced to an operator ({why}); the flow "
                f"restores operators that fail the @accuracy threshold on one sample")
    if culprit.op is None:
        return (f"{head}: not run: the {culprit.role} {culprit.sample} was traced to no "
                f"operator ({culprit.note}); the flow restores operators that fail the "
                f"@accuracy threshold")
    on = f"on the {culprit.role} {culprit.sample}"
    if getattr(om, "aipp", None) is None and reference_inputs is not None:
        return (f"{head}: not run: the reference ran on reference_inputs(sample), not on the "
                f"model's own inputs, and the flow compares the model with itself in fp32")
    if getattr(om, "mode", None) is None:
        return (f"{head}: not run: the model was not converted by ascend_model(...), so there "
                f"is no mode to start the flow from")
    try:
        inputs = _sample_inputs(samples, culprit.sample)
    except AscendAccuracyError as exc:
        return f"{head}: could not run: {exc}"
    if inputs is None:
        return (f"{head}: not run: sample {culprit.sample} cannot be read again (the samples "
                f"were a one-pass iterator: pass a list or a directory of .npz files)")
    if getattr(om, "aipp", None) is not None and reference_inputs is not None:
        return _aipp_step_5_note(state, om, inputs, reference_inputs, spec, nodeid, on)
    return diagnosis_note(state, om, inputs, spec, nodeid, on=on)


def _aipp_step_5_note(state: AccuracyState, om, inputs, reference_inputs, spec, nodeid: str,
                      on: str) -> str:
    """The flow on a flipped sample of a model fed raw images through an AIPP file: step 5
    compares the device's Aipp output with the reference run's inputs of that sample
    (``reference_inputs(sample)``, as the check fed the reference), then the other steps, each
    conversion with the AIPP file (a model converted per sample shape: that sample's)."""
    from ..dataset.check import reference_feed
    from ..errors import AscendAccuracyError
    from .aipp_diagnosis import aipp_diagnosis
    from .check_flow import diagnosis_lines

    head = f"diagnosis (--accuracy-diagnose {on})"
    try:
        handle = om.for_inputs(inputs) if hasattr(om, "for_inputs") else om
        golden_inputs = reference_feed(reference_inputs, inputs, nodeid)
        return aipp_diagnosis(state, handle, inputs, None, spec, nodeid, head,
                              run_flow=diagnosis_lines, golden_inputs=golden_inputs, on=on)
    except AscendAccuracyError as exc:
        return f"{head}: could not run: {exc}"


def _sample_inputs(samples, sample_id: str):
    """The inputs of sample ``sample_id`` of ``samples`` (as ``check_dataset`` took them), or
    None where they cannot be read again."""
    import os

    if isinstance(samples, (str, os.PathLike)):
        from ..dump.user_arrays import read_npz

        return read_npz(Path(samples) / f"{sample_id}.npz", what="a readable .npz sample")
    try:
        item = samples[int(sample_id)]
    except (TypeError, ValueError, IndexError, KeyError):
        return None
    import numpy as np

    return {str(k): np.asarray(v) for k, v in item.items()}


class MarkerMaxDropWarning(UserWarning):
    """``@accuracy(max_drop=...)`` on a test whose only checks were dataset checks: the
    marker's max_drop is the per-operator baseline's tolerance (``check_accuracy``), not the
    dataset's (``check_dataset(max_drop=...)``)."""


def warn_marker_max_drop(item, ctx) -> None:
    """Warn once, at the test's teardown, when its marker sets ``max_drop`` and it ran
    ``check_dataset`` but no ``check_accuracy``: the marker's value then judged nothing, and
    the dataset figure was held to ``check_dataset``'s own ``max_drop`` (README: the marker's
    is a cosine drop per operator against a stored baseline, another quantity)."""
    if not getattr(ctx, "dataset_max_drops", None) or ctx.accuracy_checks:
        return
    marker = item.get_closest_marker("accuracy")
    value = marker.kwargs.get("max_drop") if marker is not None else None
    if value is None:
        return
    used = ", ".join(dict.fromkeys(f"{v!r}" for v in ctx.dataset_max_drops))
    item.warn(MarkerMaxDropWarning(
        f"{ctx.nodeid}: @accuracy(max_drop={value!r}) is the per-operator baseline's tolerance "
        f"(each operator's cosine drop against its stored baseline, for check_accuracy), and "
        f"this test ran check_dataset only, which it does not change: the dataset check held "
        f"the metric's drop to check_dataset's own max_drop={used}; pass "
        f"check_dataset(..., max_drop={value!r}) (YAML: dataset: "
        f"{yaml_flow_map({'max_drop': value})}) to "
        f"use it there, and leave it out of @accuracy"))


#: keys of a YAML suite entry's ``dataset:`` mapping
YAML_KEYS = ("samples", "labels", "metric", "max_drop", "output", "batch_axis")
YAML_METRICS = ("top1", "top5", "agreement")


def yaml_dataset(value, base_dir: Path, at: str) -> dict:
    """Validate ``dataset: {samples: dir, labels: file, metric: top1, max_drop: 0.01,
    output: name}`` (paths relative to the suite file) into ``run_dataset`` keywords."""
    import difflib
    import math
    import os

    from ..core.closest_paths import closest_in_folder
    from ..errors import ConfigError, closest_text

    if not isinstance(value, dict):
        raise ConfigError(at, "must be a mapping with at least 'samples' (a directory of .npz)")
    for key in value:
        if key not in YAML_KEYS:
            close = difflib.get_close_matches(str(key), YAML_KEYS, n=1)
            raise ConfigError(f"{at}.{key}", f"unknown key; known: {', '.join(YAML_KEYS)}"
                                             + (f" (did you mean {close[0]!r}?)" if close else ""))
    samples = value.get("samples")
    if not isinstance(samples, str) or not (base_dir / samples).is_dir():
        near = closest_in_folder(base_dir / samples, True, samples) \
            if isinstance(samples, str) else ""
        raise ConfigError(f"{at}.samples", f"required: a directory of .npz samples relative to "
                                           f"the suite file, got {samples!r}{near}")
    out = {"samples": Path(os.path.normpath(base_dir / samples))}  # no "x/../x" in messages
    metric = value.get("metric", "top1")
    if metric not in YAML_METRICS:
        near = closest_text(str(metric).lower(), YAML_METRICS, cutoff=0.5)
        raise ConfigError(f"{at}.metric", f"must be one of {', '.join(YAML_METRICS)} (map and "
                                          f"callables need Python: the check_dataset fixture), "
                                          f"got {metric!r}{near}")
    out["metric"] = metric
    max_drop = value.get("max_drop", 0.01)
    if isinstance(max_drop, bool) or not isinstance(max_drop, (int, float)) \
            or not math.isfinite(max_drop) or max_drop < 0:
        raise ConfigError(f"{at}.max_drop", f"must be a number >= 0, got {max_drop!r}")
    out["max_drop"] = float(max_drop)
    if "output" in value:
        if not isinstance(value["output"], str):
            raise ConfigError(f"{at}.output", f"must be an output name, got {value['output']!r}")
        out["output"] = value["output"]
    if "batch_axis" in value:  # the output's axis of samples (``dataset.batch_axis``)
        from ..dataset.batch_axis import check_batch_axis

        out["batch_axis"] = check_batch_axis(value["batch_axis"], f"{at}.batch_axis")
    if "labels" in value and metric == "agreement":
        raise ConfigError(f"{at}.labels", "metric agreement does not use labels (it compares the "
                                          "device's top-1 with the reference's): leave them out")
    if "labels" in value:
        out["labels"] = _yaml_labels(value["labels"], base_dir, f"{at}.labels")
    elif metric != "agreement":
        raise ConfigError(f"{at}.labels", f"metric {metric} needs labels: a .json file "
                                          f"({{sample id: label}} or a list) or a .npy file")
    return out


def _yaml_labels(value, base_dir: Path, at: str):
    """The labels file's ``Labels`` (``dataset.samples.read_labels``): its errors name the
    file relative to where pytest ran, as every printed path."""
    import os

    from ..core.locations import shown
    from ..core.closest_paths import closest_in_folder
    from ..dataset.samples import read_labels
    from ..errors import ConfigError, DumpFormatError

    if not isinstance(value, str) or not (base_dir / value).is_file():
        near = closest_in_folder(base_dir / value, False, value) if isinstance(value, str) else ""
        raise ConfigError(at, f"must be a .json or .npy file relative to the suite file, got "
                              f"{value!r}{near}")
    try:
        return read_labels(base_dir / value, shown(base_dir / value, os.getcwd()))
    except (ConfigError, DumpFormatError) as exc:  # the suite's key, the file, its problem
        raise ConfigError(at, str(exc)) from None
