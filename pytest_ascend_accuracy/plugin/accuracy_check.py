"""What one accuracy test does, shared by the fixtures and the YAML suite items.

Convert (cached), run with dumps, get the golden (cached, or a stored golden file under the
regen policy), compare and judge under an ``AccuracySpec``, record the outcome for the summary,
JUnit properties and the per-test report files. Heavy modules are imported inside functions.
"""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Mapping, Optional, Sequence, Tuple

from ..errors import ConfigError
from .given_shape_words import given_shape_words
from .junit_verdict import finite_or_none
from .marker_spec import AccuracySpec
from ..core.atc_option_check import check_atc_options
from .setup_checks import check_mode_names
from .report_folders import begin_report_set, run_fields
from .report_folders import report_slug  # noqa: F401  (check_flow, dataset_check: from here)
from .session import AccuracyState, CheckRecord

_dump_counter = itertools.count()


def model_name(model) -> str:
    from ..graph.onnx_graph import model_label

    return model_label(model)


@dataclass
class AscendModel:
    """A model converted for one mode: ``.converted``, ``.mode`` and ``.run(inputs)``.

    ``run`` executes the converted model on this worker's device (the emulator on a CPU) and
    returns its dump as a DumpSet; each run dumps into a fresh directory."""

    converted: object  # ConvertedModel
    mode: object  # Mode
    model: object
    input_shape: object = None
    state: AccuracyState = field(default=None, repr=False)
    dump_root: Optional[Callable[[], Path]] = field(default=None, repr=False)
    #: called with (this model, inputs, the DumpSet returned) after every run: the fixtures keep
    #: which model made which dump, for the baseline check and ``--accuracy-diagnose``
    on_run: Optional[Callable[["AscendModel", object, object], None]] = field(default=None,
                                                                              repr=False)
    #: the parsed ``aipp=`` file (``aipp.AippConfig``): run() then takes raw uint8 images
    aipp: object = None
    #: the user's extra ATC options of this conversion (the AIPP file as ``insert_op_conf``)
    atc_options: Mapping[str, object] = field(default_factory=dict, repr=False)
    #: (run inputs) -> (golden DumpSet, kl) a run compares against while it runs, or None
    #: (``compared_runs``): the golden the test made of this model before running it
    compare_with: Optional[Callable[[object], object]] = field(default=None, repr=False)

    def run(self, inputs, dump: bool = True, dump_mode: Optional[str] = None):
        """Run once on ``inputs`` ({input name: array}); with ``dump`` every operator's dump,
        of what ``dump_mode`` says (``output``, ``input`` or ``all``; default: the session's
        ``--accuracy-dump-mode``)."""
        __tracebackhide__ = True
        from ..aipp.conversion_name import name_conversion_aipp  # not the cache entry's

        dump_dir = None
        if dump and self.dump_root is not None:
            dump_dir = self.dump_root() / f"dump-{next(_dump_counter)}"

        def run_written():
            __tracebackhide__ = True
            with self.state.device_lock(), given_shape_words(self):
                written = self.state.backend.run(self.converted, inputs, dump=dump,
                                                 dump_dir=dump_dir, dump_mode=dump_mode)
            name_conversion_aipp(written, self.atc_options.get("insert_op_conf"))
            return written

        from .compared_runs import run_compared

        result = run_compared(self, inputs, dump_dir, run_written) if (
            dump and dump_mode is None) else None
        if result is None:
            result = run_written()
        if self.on_run is not None:
            self.on_run(self, inputs, result)
        return result

    def outputs(self, inputs):
        """The model's plain outputs, ``{ONNX output name: array}``, from one run without a dump."""
        __tracebackhide__ = True
        from ..backends.base import model_outputs

        with self.state.device_lock(), given_shape_words(self):
            return model_outputs(self.state.backend, self.converted, inputs)

    @property
    def name(self) -> str:
        return self.converted.model_name

    def __repr__(self) -> str:
        return f"AscendModel({self.converted.model_name!r}, mode={self.mode.name!r})"


def convert_model(state: AccuracyState, model, mode, *, keep_dtype=None, input_shape=None,
                  atc_options=None, dump_root=None, where="ascend_model", on_run=None,
                  aipp=None, others=(), compare_with=None) -> AscendModel:
    """Convert ``model`` under ``mode`` (plus ``keep_dtype`` ops) and wrap it for running;
    ``aipp`` (a resolved path) goes to ATC as ``--insert_op_conf``; ``others``: the models the
    test converted before, given where ``mode`` is the marker's (their op names in its
    keep_dtype are not this model's typos; ``keep_dtype`` given here is checked strictly)."""
    from ..core.modes import keep_dtype as keep_dtype_mode, resolve_mode

    check_atc_options(atc_options, where, aipp=aipp is not None)
    aipp_config = None
    if aipp is not None:
        from ..aipp import read_aipp_config

        atc_options = dict(atc_options or {})
        if any(str(k).lstrip("-") == "insert_op_conf" for k in atc_options):
            raise ConfigError(where, "give the AIPP file once: aipp=... or insert_op_conf=..., not both")
        aipp_config = read_aipp_config(aipp)
        atc_options["insert_op_conf"] = os.fspath(aipp)

    mode = resolve_mode(mode, where)
    check_mode_names(mode, model, where, others)  # (others: only for the marker's mode)
    if keep_dtype:
        kept = keep_dtype_mode([keep_dtype] if isinstance(keep_dtype, str) else list(keep_dtype))
        check_mode_names(kept, model, where)  # this call's own names: each must be this model's
        mode = mode | kept
    converted = state.backend.convert(model, mode, input_shape=input_shape,
                                      atc_options=atc_options or None)
    if mode.fusion_rules_off:
        _warn_unused_rules(state, model, mode, converted, input_shape, atc_options)
    return AscendModel(converted, mode, model, input_shape, state, dump_root, on_run, aipp_config,
                       dict(atc_options or {}), compare_with)


def _warn_unused_rules(state: AccuracyState, model, mode, converted, input_shape,
                       atc_options) -> None:
    """``backends.emulator.rules_unused``, at the test's line (the emulator only: its plan says
    which rules fused something)."""
    from ..backends.emulator.backend import EmulatorBackend
    from ..backends.emulator.rules_unused import (FusionRuleUnusedWarning, unused_rules_off,
                                                  unused_text)
    from ..core.caller_warning import warn_at_caller

    if isinstance(state.backend, EmulatorBackend):
        unused = unused_rules_off(state.backend, model, mode, converted,
                                  input_shape=input_shape, atc_options=atc_options or None)
        if unused:
            warn_at_caller(FusionRuleUnusedWarning(unused_text(unused, model)))


def warn_inputs_not_stored(state: AccuracyState, golden, shown: str, status: str) -> None:
    """``--accuracy-store-inputs`` applies when a stored golden is written: say so when it met a
    golden read as it was, without inputs (it did nothing, silently)."""
    from ..golden import stored as golden_files

    if state.settings.store_inputs and status == golden_files.USED \
            and not any(op.inputs for op in golden):
        from ..core.caller_warning import warn_at_caller

        warn_at_caller(UserWarning(
            f"--accuracy-store-inputs: the stored golden {shown} holds op outputs only and was "
            f"used as it is; the option applies when a golden is written: add "
            f"--accuracy-regen-all to rewrite it with every op's inputs"))


#: how long a YAML check, once converted, waits for the golden another xdist worker is building
#: before it runs without it (its dump written, compared from the files once the golden is
#: there): a mid-size model's whole build here (PP-OCRv4 det 736x736: 0.55-0.7 s), which the
#: second worker reaching det's first check missed by 0.13 s; a longer build is not waited for
EARLY_GOLDEN_WAIT_S = 1.0


def fresh_golden(state: AccuracyState, model, inputs, input_shape=None, *, wait=True):
    """The golden dump from onnxruntime fp32 (content-addressed in the shared cache), its op
    names spelled as the model spells them (golden file names hold sanitized names).
    ``wait=False``: None while another worker is building it (a number: None if it still is
    after that many seconds)."""
    from ..golden.onnxruntime_golden import golden_dump

    dump = golden_dump(model, inputs, cache=state.cache, input_shape=input_shape, wait=wait)
    return None if dump is None else real_names(dump, model)


def real_names(dump, model):
    """``dump`` with the model's own op names (``p2o.BatchNormalization.1``, not the
    ``p2o_BatchNormalization_1`` of dump file names)."""
    from ..graph.op_catalogue import model_ops, with_real_names

    return with_real_names(dump, model_ops(model))


# -- judging and recording --------------------------------------------------------------------
@dataclass(frozen=True)
class CheckOutcome:
    """A finished check: the compare result, its verdict and the record kept for the summary."""

    result: object  # CompareResult
    verdict: object  # Verdict
    record: CheckRecord
    failure: Optional[BaseException] = None
    #: where its report files go (None: no --accuracy-report) and their title; a passing check
    #: whose baseline is still to be judged writes them (``publish``) once that is known
    report_dir: Optional[Path] = None
    title: str = ""
    #: the set being written (``report.report_set``: moved to ``report_dir`` when complete)
    #: and what its compare.json says of the run (``run_block``)
    staged: Optional[object] = None
    run: Optional[dict] = None


@dataclass(frozen=True)
class BaselineNote:
    """The baseline check's outcome as the renderings state it: ``status`` (``passed``,
    ``regressed``, ``missing``, ..., or ``not possible``), ``line`` (its first regression line,
    else the baseline file or why no check was possible) and the full ``message``."""

    passed: bool
    status: str
    line: str
    message: str = ""
    file: Optional[str] = None

    def one_line(self) -> str:
        return f"{self.status}: {self.line}"

    def to_dict(self) -> dict:
        return {"passed": self.passed, "status": self.status, "line": self.line,
                "file": self.file, "message": self.message}


def coverage_fraction(result) -> Optional[float]:
    """Share of the golden ops the device ran that were compared (directly or inside a fused
    op, whose output stands for its members): ops folded at conversion (constants, shapes: the
    device never runs them) are out of it. Counting them read 0.49 for PP-OCRv4 det with every
    op that ran compared. Ops inside an If run as one operator ran but were never compared
    (only the If's outputs are): they count as not compared. Counting them read 1.0000 for
    silero_vad.onnx, 4 of its 209 ops compared (``report.if_coverage``)."""
    cov = result.coverage
    ran = cov.golden_total - len(cov.folded)
    if ran <= 0:
        return None
    return (len(cov.compared) + len(cov.fused)) / ran


def run_check(state: AccuracyState, actual, golden, spec: AccuracySpec, *, nodeid: str,
              model: str, mode: str, record_property: Optional[Callable] = None,
              hint: Optional[str] = None, hint_mode=None, source_model=None,
              defer_passed: bool = False, one_of_several: bool = False,
              on_failure: Optional[Callable] = None, label: str = "") -> CheckOutcome:
    """Compare, judge, record, write reports; re-raise ``AccuracyFailure`` when it failed.
    ``hint_mode`` (the ``Mode`` the test converted with) makes the hint paste-able into the
    test's ``modes=[...]``; every rendering (terminal, HTML, JUnit) gets the same hint.
    ``defer_passed``: a passing check records no JUnit property and writes no report file:
    its caller judges a baseline first and calls ``publish`` with that outcome (the reports
    said PASSED of a test its baseline failed). ``one_of_several``: the test converts other
    models too, so a hint's modes are given for this model's ``ascend_model`` call alone.
    ``on_failure(failure)`` runs once a failure's reports are in place (its diagnosis; it
    returns the diagnosis page, which ``report.html`` and ``compare.json`` then link, or
    None). ``label``: the model as the check's texts name it (its record keeps ``model``, the
    stem: ``model_labels``)."""
    __tracebackhide__ = True
    from ..report.assertion import as_dump
    from .setup_checks import check_op_names

    for dump in (actual, golden):
        state.check_not_removed(getattr(dump, "root", dump), nodeid)
    actual, golden = as_dump(actual), as_dump(golden)
    check_op_names(spec, (golden, actual), nodeid, actual, source_model)
    staged = begin_report_set(state, nodeid)  # written aside, moved into place complete
    try:
        return _judged(state, actual, golden, spec, nodeid=nodeid, model=model, mode=mode,
                       record_property=record_property, hint=hint, hint_mode=hint_mode,
                       source_model=source_model, defer_passed=defer_passed,
                       one_of_several=one_of_several, staged=staged, on_failure=on_failure,
                       label=label or model)
    except BaseException:  # no verdict (a refusal, an interrupt): no report folder
        if staged is not None:
            staged.discard()  # (a set in place stays)
        raise


def _judged(state: AccuracyState, actual, golden, spec: AccuracySpec, *, nodeid, model, mode,
            record_property, hint, hint_mode, source_model, defer_passed, one_of_several,
            staged, on_failure, label) -> CheckOutcome:
    """``run_check`` once the report set is begun (``staged``, None: no report)."""
    __tracebackhide__ = True
    from ..compare.thresholds import Policy
    from ..report.assertion import AccuracyFailure, assert_accuracy
    from ..report.checked_shapes import input_shape_text
    from ..report.failure_text import (PLUGIN_REPORT_HOW, PROBLEM_ADVICE, failure_text,
                                       short_reason)
    from ..report.hints import hint_for
    from .setup_checks import check_judged_names

    report_dir = staged.final if staged is not None else None
    csv_path = staged.csv_path if staged is not None else None
    failure = None
    try:  # the hint is built below, from the verdict and the test's mode
        result = assert_accuracy(actual, golden, spec.threshold, spec.per_op_dict or None,
                                 ignore=spec.ignore, metric=spec.metric, csv_path=csv_path,
                                 hint=hint if hint is not None else "",
                                 scale_tolerance=spec.scale_tolerance, check_names=False,
                                 progress=state.progress.compare() if state.progress else None)
    except AccuracyFailure as exc:
        failure = exc
        result = exc.result
    check_judged_names(spec, result, nodeid)
    # names checked against the dumps above (check_op_names): the policy as it is
    verdict = result.judge(Policy.build(spec.threshold, spec.per_op_dict or None, spec.ignore,
                                        spec.metric, spec.scale_tolerance))
    from ..report.one_element_groups import grouped

    verdict = grouped(verdict, result.rows)  # (every rendering: one paste for its copies)
    first = verdict.first
    shown_hint = None
    if failure is not None:
        shown_hint = hint if hint is not None else hint_for(
            verdict, golden, hint_mode, actual=actual, result=result,
            problem_advice=PROBLEM_ADVICE, model=source_model)
        if one_of_several and not isinstance(shown_hint, str) and shown_hint.modes:
            from dataclasses import replace

            shown_hint = replace(shown_hint, model=label, base=hint_mode)
        if failure.csv_path:  # where the CSV will be once the set is in place
            failure.csv_path = str(report_dir / "compare.csv")
        shown_csv = state.settings.show(failure.csv_path) if failure.csv_path else None
        kept = actual.meta.get("dump_dir") or actual.root  # a failing test keeps its dumps
        lifetime = state.dump_lifetime.note(kept) if kept and state.dump_lifetime else None
        from .compare_again import compare_again  # the CLI command that judges them again

        lifetime = "\n".join(filter(None, (
            lifetime, compare_again(state, actual, golden, verdict))))
        kept = state.settings.show(kept) if kept else None
        failure.args = (failure_text(result, verdict, csv_path=shown_csv, hint=shown_hint,
                                     report_how=PLUGIN_REPORT_HOW, dump_kept=kept,
                                     dump_lifetime=lifetime),)
    record = CheckRecord(
        # the first failure's own threshold and metric (a per_op one, when set), else the default
        nodeid=nodeid, model=model, mode=mode, passed=bool(verdict.passed),
        metric=first.threshold.metric if first is not None else spec.metric,
        threshold=first.threshold.value if first is not None else spec.threshold,
        first_op=first.row.label if first else None,
        first_value=finite_or_none(first.value) if first else None,
        coverage=coverage_fraction(result),
        report=str(report_dir) if report_dir else None,
        # a failure that is not "value < threshold" (NaN/Inf on one side, not comparable)
        # is summarised by its own reason, and one where nothing was compared by its problem
        note=(f"first failing op {first.row.label} ({short_reason(first)})"
              if first is not None and first.would_pass is None else (verdict.problem or None)),
        input_shape=input_shape_text(golden.meta, actual.meta),
        model_file=os.path.realpath(source_model) if source_model is not None else None,
        model_as_given=os.path.abspath(source_model) if source_model is not None else None,
    )
    state.record(record)
    outcome = CheckOutcome(result, verdict, record, failure, report_dir,
                           title=f"{nodeid} [{label}, {mode}]", staged=staged,
                           run=run_fields(state, nodeid, f"{label}, {mode}", result.actual_root))
    if failure is None and defer_passed:
        return outcome
    links = None
    if staged and failure:  # a failure's tensors are copied next to it: links outlive dumps
        from ..report.tensor_copies import copy_failing_tensors

        links = copy_failing_tensors(actual, golden, verdict, staged.staging)
    asked = failure is not None and on_failure is not None and state.settings.diagnose
    publish(outcome, record_property, hint=shown_hint, links=links, hint_property=not asked)
    from .fused_overflow_check import warn_fused  # a fused op hid an fp16 overflow

    warn_fused(result, golden, verdict, actual, hint_mode, spec, label, one_of_several, failure)
    if failure is None:  # most ops judged only through Ifs' outputs: said, once published (a
        note_judged_through_ifs(result, label, mode)  # -W error run kept its JUnit and report)
    if failure is not None:
        if on_failure is not None:  # the diagnosis: minutes of conversions, after the set is in
            try:  # place (a SIGTERM or the OOM killer in it leaves the check's reports whole)
                raise failure
            except AccuracyFailure:  # (an error in it is shown after the failure's own text)
                diagnosis = on_failure(failure)
        if asked:  # the hint points at a diagnosis that ran, not at a rerun with the option
            before, shown_hint = shown_hint, diagnosed_hint(shown_hint, diagnosis is not None)
            if staged is not None and (diagnosis is not None or shown_hint != before):
                staged.link_diagnosis(None if diagnosis is None else Path(
                    os.path.relpath(diagnosis, staged.final)).as_posix(), hint=shown_hint)
            if record_property is not None and shown_hint is not None:
                record_property("accuracy_hint", _one_line(shown_hint))
        raise failure
    return outcome


def note_judged_through_ifs(result, label: str, mode: str) -> None:
    """``report.if_coverage.in_if_note`` of a passing check, as a ``JudgedThroughIfWarning``
    at the test's line (a YAML item's entry), after the check's verdict is published: under
    ``-W error`` it fails the test, whose JUnit properties and report still hold the check (a
    review: raised before, they said 'no check verdict' and the report folder was missing)."""
    from ..report.if_coverage import JudgedThroughIfWarning, in_if_note

    note = in_if_note(result.coverage, result.rows, f"{label} [{mode}]")
    if note:
        from ..core.caller_warning import warn_at_caller

        warn_at_caller(JudgedThroughIfWarning(note))


def diagnosed_hint(hint, ran: bool):
    """``hint`` as a failure --accuracy-diagnose was given for shows it once the diagnosis is
    done (``ran``: its verdict follows; else its note says why it did not run)."""
    from dataclasses import replace

    from ..report.hints import diagnosis_below

    if hint is None or isinstance(hint, str):
        return hint
    return replace(hint, advice=diagnosis_below(hint.advice, ran))


def _one_line(hint) -> str:
    return hint if isinstance(hint, str) else hint.one_line()


def publish(outcome: CheckOutcome, record_property: Optional[Callable], *, hint=None,
            links=None, baseline: Optional[BaselineNote] = None,
            hint_property: bool = True) -> None:
    """The JUnit properties and report files of a finished check; ``baseline`` (when one was
    judged, or could not be) is stated in each: a test its baseline failed is not reported
    passed (``accuracy_passed=false``, ``accuracy_baseline``, the page's headline, the JSON's
    ``baseline``); the threshold verdict itself stays as judged."""
    if record_property is not None:
        from .junit_verdict import record_check_properties

        record_check_properties(record_property, outcome.record, outcome.verdict, baseline)
        if hint is not None and hint_property:  # (else after the diagnosis, as it reads then)
            record_property("accuracy_hint", _one_line(hint))
    if outcome.staged is not None:  # the set moves into place complete, or not at all
        outcome.staged.write(outcome.result, outcome.verdict, title=outcome.title, hint=hint,
                             links=links, baseline=baseline.to_dict() if baseline else None,
                             run=outcome.run)


# -- pytest-facing helpers (called from plugin hooks; pytest objects are duck-typed) ------------
def regen_after_failure(state: AccuracyState, stored: Sequence[Tuple[Path, Callable]],
                        nodeid: str) -> List[str]:
    """Rewrite the stored goldens a failed test used, when ``--accuracy-regen`` asks for it."""
    policy = state.golden_policy(nodeid)
    notes = []
    for path, compute in stored:
        status = policy.after_failure(path, compute)
        if status:
            from ..golden.stored import after_failure_note

            shown = state.settings.show(path)
            state.record_golden_write(shown, status, nodeid)
            notes.append(after_failure_note(shown, status))
    return notes


def failure_longrepr(item, excinfo):
    """An ``AccuracyFailure`` shown as its report block plus the test line that raised it
    (relative to the invocation directory, as pytest shows paths), for ``--tb`` auto/long/short;
    other styles keep pytest's own rendering."""
    if item.config.getoption("tbstyle", "auto") not in ("auto", "long", "short"):
        return None
    from .crash_line import report_block

    location = None
    item_path = Path(str(item.path))
    for entry in reversed(list(excinfo.traceback)):
        if Path(str(entry.path)) == item_path:
            rel = os.path.relpath(item_path, item.config.invocation_params.dir)
            location = (rel, entry.lineno + 1, type(excinfo.value).__name__)
            break
    return report_block(str(excinfo.value).rstrip("\n"), location)
