"""One accuracy check with its follow-ups, the single code path of Python tests
(``check_accuracy``) and YAML suite items:

1. compare and judge (``accuracy_check.run_check``), the hint in the test's own mode;
2. on failure, with ``--accuracy-diagnose``: the debugging flow on the test's own mode and
   inputs (``triage.diagnose(mode=...)``), its verdict appended to the failure;
3. on success, with ``max_drop``: the per-operator baseline check; the JUnit properties and
   report files of such a check are written after it and state its outcome.
"""
from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Callable, Optional

import pytest

from .accuracy_check import BaselineNote, publish, report_slug, run_check
from .baseline_judging import check_against_baseline, require_baseline_inputs
from .session import AccuracyState


def _source_model(handle):
    """The ONNX model file ``handle`` (an ``AscendModel``) was converted from, or None (the
    hint finds a failing op's golden operands through it when the golden holds outputs only)."""
    source = getattr(getattr(handle, "converted", None), "source_model", None)
    return source if source is not None and Path(source).is_file() else None


def checked(state: AccuracyState, actual, golden, spec, *, nodeid: str, model: str, mode: str,
            handle=None, inputs=None, record_property: Optional[Callable] = None,
            amend: Optional[Callable] = None, one_of_several: bool = False, label: str = ""):
    """Run the check and its follow-ups; ``handle`` is the ``AscendModel`` that produced
    ``actual`` from ``inputs`` (None when the test compares dumps it did not produce);
    ``amend(exc)`` may add lines to a failure before the diagnosis is appended;
    ``one_of_several``: the test converts other models too (fixes are given for this model's
    ``ascend_model`` call, not the marker); ``label``: the model as the test's texts name it
    where its stem ``model`` names another file of the test too (``model_labels``)."""
    __tracebackhide__ = True
    label = label or model

    def on_failure(exc) -> Optional[Path]:
        """A failure's own lines, then its diagnosis, once its report is in place; the
        diagnosis page, which the report then links (None: none written)."""
        _name_input_shape(state, nodeid, exc, label)
        if amend is not None:
            amend(exc)
        if not state.settings.diagnose:
            return None
        from ..report.hints import diagnosis_below
        from .expected_failure import skipped_diagnosis

        skipped = skipped_diagnosis(state, nodeid, type(exc))
        if skipped:  # an xfail: minutes of conversions nobody would see
            exc.args = (f"{diagnosis_below(exc.args[0], ran=False).rstrip()}\n{skipped}",)
            return None
        state.diagnosed.pop(nodeid, None)
        note = diagnosis_note(state, handle, inputs, spec, nodeid,
                              label if one_of_several else "", golden=golden)
        page = state.diagnosed.pop(nodeid, None)
        exc.args = (f"{diagnosis_below(exc.args[0], ran=page is not None).rstrip()}\n{note}",)
        return page

    outcome = run_check(state, actual, golden, spec, nodeid=nodeid, model=model, mode=mode,
                        record_property=record_property,
                        hint_mode=handle.mode if handle is not None else None,
                        source_model=_source_model(handle), defer_passed=spec.max_drop is not None,
                        one_of_several=one_of_several, on_failure=on_failure, label=label)
    if spec.max_drop is None:
        return outcome
    # the JUnit properties and report files are written once the baseline is judged, and say
    # how it went (they said PASSED of a test its baseline failed)
    notes = []
    try:
        base = _judge_baseline(state, outcome, handle, inputs, spec, nodeid, notes)
    except KeyboardInterrupt:  # a Ctrl-C leaves no set (it read "the baseline check stopped
        if outcome.staged is not None:  # with an error", a verdict of a test never finished)
            outcome.staged.discard()
        raise
    except BaseException:
        if not notes:
            notes.append(_failed_note(state, nodeid, "not judged",
                                      "the baseline check stopped with an error"))
        publish(outcome, record_property, baseline=notes[-1])
        raise
    if not base.passed:  # the test fails: its reports name the dump it keeps
        from .compared_runs import with_written_dump

        outcome = with_written_dump(outcome, actual, golden)
    publish(outcome, record_property, baseline=notes[-1] if notes else None)
    from .fused_overflow_check import warn_fused  # (run_check's, deferred with it)

    def fused(failure=None):  # -W error: a baseline failure keeps its text, this appended
        warn_fused(outcome.result, golden, outcome.verdict, actual, handle.mode if handle
                   is not None else None, spec, label, one_of_several, failure)
    if outcome.failure is None:  # (after its verdict is published, as run_check says it)
        from .accuracy_check import note_judged_through_ifs

        note_judged_through_ifs(outcome.result, label, mode)
    note = notes[-1]
    from .baseline_metric import unjudged_warning  # a metric it cannot judge: said, once

    unjudged = unjudged_warning(state, spec, nodeid)
    if unjudged is not None:
        warn_at_test(unjudged, nodeid, state.settings.rootdir)
    if not base.passed:
        failed = Exception(note.message)
        fused(failed)
        pytest.fail(failed.args[0], pytrace=False)
    if base.model_changed:  # a pass on an edited model is said, not silent (issue 13 D7)
        from ..baseline import ModelChangedWarning

        shown = state.settings.show(base.path)
        changed = _model_wording(base.model_changed[len('note: '):], handle)
        warn_at_test(ModelChangedWarning(f"{shown}: {changed}"), nodeid, state.settings.rootdir)
    if base.unjudged:  # ops with no baseline value went unjudged: said, not silent
        from ..baseline import BaselineGapWarning

        n = len(base.unjudged)
        warn_at_test(BaselineGapWarning(
            f"{state.settings.show(base.path)}: {n} operator line{'s' if n != 1 else ''} "
            f"compared now hold{'s' if n == 1 else ''} no baseline value to be judged "
            f"against (cosine NaN, or not compared, when recorded): "
            f"{', '.join(base.unjudged[:5])}{', ...' if n > 5 else ''}; "
            f"--accuracy-regen-all records their values"), nodeid, state.settings.rootdir)
    fused()  # last: under -W error the warnings above are raised first, not skipped
    return outcome


def _name_input_shape(state: AccuracyState, nodeid: str, exc, label: str) -> None:
    """Where the test's checks so far ran its model at several input shapes, the failure's
    first line names the failing check's (pytest's short summary shows that line) and its
    second says where among them it stands (``report.checked_shapes``; the model named
    ``label``); the check's record is the test's last (``run_check`` records it before it
    raises)."""
    from ..report.checked_shapes import several_shapes, shape_context

    mine = [r for r in state.records if r.nodeid == nodeid]
    if not mine or not exc.args:
        return
    mine = [r for r in mine if (r.model, r.model_file) == (mine[-1].model, mine[-1].model_file)]
    shapes = [r.input_shape for r in mine]
    if not several_shapes([(r.model, r.input_shape) for r in mine]):
        return
    first, sep, rest = str(exc.args[0]).partition("\n")
    head = "accuracy FAILED: "
    if first.startswith(head) and shapes[-1]:
        first = f"accuracy FAILED at input {shapes[-1]}: {first[len(head):]}"
    context = shape_context(len(mine) - 1, shapes, [r.passed for r in mine], label)
    exc.args = (f"{first}\n{context}{sep}{rest}",) + tuple(exc.args[1:])


def _failed_note(state: AccuracyState, nodeid: str, status: str, why: str) -> BaselineNote:
    """A failed baseline's note: its summary line and JUnit property on one line (a YAML
    parser's error spans several; the summary cut it, advice included), the full text kept."""
    line = " ".join(why.split())
    state.mark_failed(nodeid, f"baseline {status}: {line}")
    return BaselineNote(False, status, line, f"accuracy baseline {status}: {why}")


def _judge_baseline(state: AccuracyState, outcome, handle, inputs, spec, nodeid: str,
                    notes: list):
    """The ``BaselineOutcome`` of a passing check, its ``BaselineNote`` appended to ``notes``;
    a failed baseline is marked in the summary. A check that cannot be made raises, its note
    appended first."""
    from ..errors import AscendAccuracyError

    try:
        require_baseline_inputs(handle, inputs, nodeid)
    except AscendAccuracyError as exc:  # no baseline can be judged: the test fails, say so
        notes.append(_failed_note(state, nodeid, "check not possible", exc.problem))
        raise
    try:
        base = check_against_baseline(state, outcome.result, handle, inputs, spec, nodeid=nodeid)
    except AscendAccuracyError as exc:  # an unreadable or unwritable baseline: the test fails
        from ..baseline.writing import BaselineRefused
        from ..core.atomic_files import FileWriteError

        if isinstance(exc, FileWriteError):  # readable, but writing it failed: regen cannot help
            notes.append(_failed_note(state, nodeid, "not written",
                                      f"{exc} (make its folder writable or free space, then run "
                                      "again)"))
        elif isinstance(exc, BaselineRefused):  # it would not read back: nothing was written
            notes.append(_failed_note(state, nodeid, "not written", str(exc)))
        else:  # (a link loop in its place: regen cannot write it either, the text says so)
            regen = "" if "symbolic link loop" in str(exc) else " (--accuracy-regen rewrites it)"
            notes.append(_failed_note(state, nodeid, "unreadable", f"{exc}{regen}"))
        raise
    from ..baseline.check import UNREADABLE

    key = os.path.abspath(base.path)
    writer = state.written_by(key) if base.passed and base.written is None else None
    if base.written is not None:
        # what was done to the file, not what the check found ("baseline unreadable" listed
        # under "1 baseline file written" read as a failed write: a CI trial)
        done = ("baseline rewritten (--accuracy-regen: it could not be read; the test still "
                "fails)" if base.status == UNREADABLE else f"baseline {base.status}")
        state.record_golden_write(state.settings.show(base.written), done, nodeid)
        # (a missing or unreadable one this run wrote is in the session's registry: noted under
        # the baseline's lock, check_baseline's on_written)
    elif writer is not None:
        # a rerun (pytest-rerunfailures) or another test of the same conversion, on any xdist
        # worker: the baseline this session wrote from its own run is no reviewed baseline,
        # and passing against it turned a fresh CI clone green on every run (a CI trial)
        from dataclasses import replace

        shown = state.settings.show(base.path)
        base = replace(base, passed=False, status=WRITTEN_THIS_SESSION, message=(
            f"accuracy baseline {shown} was written by this session (by {writer}, from its "
            "own run): comparing against it compares the device with itself. Check it in and "
            "run the session again."))
    shown = state.settings.show(base.path)
    first = base.regressions[0].line() if base.regressions else shown
    if not base.regressions and base.changes:  # rebaseline required: what changed, not the path
        from ..baseline.check import change_line

        more = len(base.changes) - 1
        first = (f"{shown}: {change_line(base.changes[0])}"
                 + (f" and {more} more change{'s' if more > 1 else ''}" if more else ""))
    if not base.passed:
        state.mark_failed(nodeid, f"baseline {base.status}: {first}")
    notes.append(BaselineNote(bool(base.passed), base.status, first,
                              _model_wording(base.message, handle), shown))
    return base


#: the status of a check against a baseline this session wrote from its own run
WRITTEN_THIS_SESSION = "written by this session"


def _model_wording(text: str, handle) -> str:
    """``baseline.check`` says "the model file changed" of every model: an in-memory model
    (``onnx.ModelProto``) has no file, so of it the text says "the model changed"."""
    model = getattr(handle, "model", None)
    if model is None or isinstance(model, (str, os.PathLike)):
        return text
    return text.replace("the model file changed", "the model changed")


def warn_at_test(warning: Warning, nodeid: str, rootdir) -> None:
    """Issue ``warning`` at the test's own line (the ``check_accuracy`` call in the test's
    file, found on the stack), not at this module's; a YAML item (no Python frame in its
    file) gets its file's first line, as the summary lists it under the item's id."""
    shown = nodeid.split("::")[0]  # relative to the rootdir, as item.warn spells it
    test_file = os.path.realpath(os.path.join(os.fspath(rootdir), shown))
    frame = sys._getframe(1)
    while frame is not None:
        if os.path.realpath(frame.f_code.co_filename) == test_file:
            import linecache

            linecache.cache.pop(shown, None)  # another file of that name may be cached
            warnings.warn_explicit(warning, type(warning), shown, frame.f_lineno,
                                   module=frame.f_globals.get("__name__"),
                                   module_globals=frame.f_globals)
            return
        frame = frame.f_back
    warnings.warn_explicit(warning, type(warning), shown, 1)


def diagnosis_note(state: AccuracyState, handle, inputs, spec, nodeid: str,
                   one_model: str = "", on: str = "", golden=None) -> str:
    """The --accuracy-diagnose verdict for a failed check, or why there is none; ``one_model``:
    the failing model's name where the test converts others too (``diagnose_failure``);
    ``on``: what ``inputs`` are where they are not the check's own (a dataset check's sample);
    ``golden``: the golden the check compared with, which the flow judges every run against
    (a fresh onnxruntime golden judged something else: a golden the test made or stored without
    an op read "the default conversion already meets the threshold" of the check it failed);
    a model with an AIPP file is run on raw images: the flow's step 5 compares its Aipp output
    with the golden's inputs."""
    from ..errors import AscendAccuracyError

    head = f"diagnosis (--accuracy-diagnose{' ' + on if on else ''})"
    if handle is None or inputs is None:
        return (f"{head}: not run: this test compared dumps it did not produce with "
                "ascend_model(...).run(inputs)")
    try:
        if getattr(handle, "aipp", None) is not None:  # raw images in, the golden's inputs out
            from .aipp_diagnosis import aipp_diagnosis

            return aipp_diagnosis(state, handle, inputs, golden, spec, nodeid, head, one_model,
                                  run_flow=diagnosis_lines)
        if golden is not None:  # (a dump path as check_accuracy takes it)
            from ..report.assertion import as_dump

            golden = as_dump(golden)
        return diagnose_failure(state, handle, inputs, spec, nodeid=nodeid, one_model=one_model,
                                on=on, golden=golden)
    except AscendAccuracyError as exc:
        return f"{head}: could not run: {exc}"


def diagnose_failure(state: AccuracyState, handle, inputs, spec, *, nodeid: str,
                     one_model: str = "", on: str = "", golden=None) -> str:
    """Run the debugging flow from the failing test's own mode (``handle.mode``) on its own
    inputs; the lines to append to the failure. Fix files go to the test's report directory
    (or the cache). ``one_model``: the fix is given for that model's ``ascend_model`` call;
    ``on``: what ``inputs`` are (``diagnosis_note``); ``golden``: the check's (None: a fresh
    onnxruntime golden of ``inputs``)."""
    return "\n".join(diagnosis_lines(state, handle, inputs, spec, nodeid=nodeid,
                                     one_model=one_model, on=on, golden=golden)[0])


def diagnosis_lines(state: AccuracyState, handle, inputs, spec, *, nodeid: str,
                    one_model: str = "", on: str = "", golden=None, golden_inputs=None):
    """``diagnose_failure``'s lines, the ``Diagnosis`` and the folder its files went to;
    ``golden``/``golden_inputs``: the check's golden and the inputs it ran on, where the device
    ran on others (raw images an AIPP file pre-processes)."""
    from ..report.hints import model_argument
    from ..triage.flow import PLUGIN_BUDGET_OPTION, diagnose

    root = state.settings.report_dir or (state.settings.cache_dir / "diagnoses")
    out_dir = Path(root) / report_slug(nodeid) / _diagnosis_folder(state, nodeid)
    import shutil

    shutil.rmtree(out_dir, ignore_errors=True)  # an earlier run's files (the cache's folders
    # outlive a session): only this diagnosis's fix files lie beside its atc_args.txt
    arrays = getattr(inputs, "arrays", inputs)  # BaselineInputs hold their arrays
    with state.device_lock():
        d = diagnose(handle.model, arrays, state.backend, spec.threshold,
                     budget=state.settings.diagnose_budget, cache=state.cache,
                     input_shape=handle.input_shape, metric=spec.metric,
                     per_op=spec.per_op_dict or None, ignore=spec.ignore, out_dir=out_dir,
                     mode=handle.mode, atc_options=getattr(handle, "atc_options", None) or None,
                     scale_tolerance=spec.scale_tolerance, budget_option=PLUGIN_BUDGET_OPTION,
                     golden=golden, golden_inputs=golden_inputs)
    if (out_dir / "diagnosis.html").is_file():  # the page the failure's report links
        state.diagnosed[nodeid] = out_dir / "diagnosis.html"
    shown = state.settings.show(out_dir)
    lines = [f"diagnosis (--accuracy-diagnose{' ' + on if on else ''}, {d.conversions} new "
             f"conversion"
             f"{'s' if d.conversions != 1 else ''}, from mode {handle.mode.name}): {d.verdict}"]
    if d.fix_mode is not None and d.restored_by != "default":
        files = ", ".join(sorted(n for n in d.fix_files if not n.startswith("diagnosis")))
        imports = ", ".join(d.fix_mode.python_imports())
        if one_model:  # the marker's modes=[...] would convert the test's other models too
            argument = model_argument(d.fix_mode, handle.mode)
            lines.append(f"  fix: in the ascend_model call of {one_model} alone: {argument}"
                         + (f"  (from pytest_ascend_accuracy import {imports})"
                            if argument.startswith("mode=") else ""))
        else:
            lines.append(f"  fix: modes=[{d.fix_mode.python_expr()}]  (YAML: modes: "
                         f"[{d.fix_mode.yaml_form()}]; from pytest_ascend_accuracy import "
                         f"{imports})")
        if d.set_aside:  # not compared: they fail under any mode (``triage.coverage``)
            from ..report.ignore_spelling import yaml_list

            lines.append(f"  with it: ignore={list(d.ignore_with_fix)!r} in the test's "
                         f"@accuracy(...) (YAML: ignore: {yaml_list(d.ignore_with_fix)}), for "
                         f"the ops not compared set aside above")
        lines.append(f"  fix files written to {shown}/ ({files})")
        lines.extend(_fix_folder_note(out_dir, d.fix_files))
    lines.append(f"  full diagnosis: {shown}/diagnosis.txt")
    return lines, d, out_dir


def _diagnosis_folder(state: AccuracyState, nodeid: str) -> str:
    """``diagnosis`` for a test's first diagnosed failure, ``diagnosis-2`` for its second (a
    failing subtest after another), counted per attempt as its dataset reports are. Both went
    to one folder: the second's files over the first's, whose failure still named them (its
    keep_dtype.cfg beside the second's atc_args.txt)."""
    key = f"{report_slug(nodeid)}/diagnosis"
    n = state.report_slugs.get(key, 0)
    state.report_slugs[key] = n + 1
    return "diagnosis" if n == 0 else f"diagnosis-{n + 1}"


def _fix_folder_note(out_dir: Path, files) -> list:
    """Where to run atc with the fix folder's atc_args.txt from (it names the config files and
    the copied AIPP file from the folder holding it); where ATC would refuse their path (a
    report or cache folder holding a space or a ``+``; the folder's own name, from
    ``report_slug``, never does), a warning."""
    from ..triage.fix_folder import ATC_PATH_RULE, folder_parts, named_files, refused_chars

    if not named_files(files):  # config files, copies of the user's (an AIPP file)
        return []
    parent, name = folder_parts(out_dir)
    bad = refused_chars(out_dir)
    if not bad:
        return [f"  (atc_args.txt names them as {name}/...: run atc from {parent})"]
    return [f"  warning: this folder's path holds {', '.join(repr(c) for c in bad)}: "
            f"{ATC_PATH_RULE}; copy {name}/ into a folder whose path holds none of them and run "
            f"atc from that folder"]


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
