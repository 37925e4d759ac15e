"""The ``ascend-accuracy`` section of the terminal summary, as plain lines (no pytest import).

Counts use correct plurals; the models x modes grid shows each (model, mode) pair's outcome;
every failing test gets one line naming its first failing operator; cache counters and golden
files written close the section.

A check's verdict is shown beside its test's outcome: a failed check in a test pytest reports as
xfailed is ``xfail`` (line ``XFAIL ...``), in a test that caught the ``AccuracyFailure`` and
passed, ``caught`` (line ``CAUGHT ...``), and in a test that caught it and called
``pytest.skip``, ``skipped`` (line ``SKIPPED ...``). Only a failed check whose test failed (or
whose outcome is unknown) is ``FAILED``, so the section never contradicts pytest's own summary.
"""
from __future__ import annotations

import math
import os
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..report.mode_titles import grid_titles, short_mode
from .cache_note import unbounded_note
from .session import CheckRecord, GoldenWrite

_IRREGULAR = {"miss": "misses"}


def plural(n: int, word: str) -> str:
    """``plural(1, "model") == "1 model"``, ``plural(2, "miss") == "2 misses"``."""
    return f"{n} {word if n == 1 else _IRREGULAR.get(word, word + 's')}"


def _fmt(value: Optional[float]) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return f"{value:.6f}"


#: a check's status in the summary: passed, or failed in a test that failed, xfailed, passed or
#: was skipped
PASSED, FAILED, XFAIL, CAUGHT, SKIPPED = "passed", "FAILED", "xfail", "caught", "skipped"
_LINE_PREFIX = {FAILED: "FAILED", XFAIL: "XFAIL", CAUGHT: "CAUGHT", SKIPPED: "SKIPPED"}
#: what a failed check's line says of its test, where the test did not fail
_TEST_DID = {CAUGHT: " (the test passed)", SKIPPED: " (the test was skipped)"}


def outcomes_by_test(stats: Mapping[str, Sequence]) -> Dict[str, str]:
    """``{test id: passed | failed | xfailed | xpassed | skipped}`` from a terminal reporter's
    ``stats`` (reports by category; under xdist the controller's has every worker's). A test
    with an error in setup or teardown counts as failed; one skipped in its call (a test that
    caught its ``AccuracyFailure`` and called ``pytest.skip``) and failed in teardown, as
    failed."""
    out: Dict[str, str] = {}
    for category in ("skipped", "passed", "xpassed", "xfailed", "failed", "error"):  # last wins
        for report in stats.get(category, ()):
            nodeid = getattr(report, "nodeid", None)
            if nodeid:
                out[nodeid] = "failed" if category == "error" else category
    return out


#: attribute set on the failed reports of ``@accuracy`` tests (the plugin's makereport hook)
MARKED = "ascend_accuracy_marked"
#: a failed report's first line as the plugin words its own errors (``setup_checks.
#: error_first_line``), the same under every ``--tb``
WHY = "ascend_accuracy_why"


def failed_before_check(stats: Mapping[str, Sequence],
                        checked: Iterable[str]) -> List[Tuple[str, str, str]]:
    """``[(test id, why, "FAILED" | "ERROR")]`` of ``@accuracy`` tests (YAML suite items carry
    the marker too: their failed reports have ``MARKED``) that failed or errored with no check
    recorded (``checked``: the ids that have one), from a terminal reporter's ``stats``: a
    stored golden refused, a misspelled keep_dtype entry, an ATC rejection. Without them the
    section counted only the checks that ran and could read "1 passed, 0 failed" beside
    pytest's failure of the same model. ``why`` is the first line of pytest's crash message;
    the label is pytest's own (an error in setup or teardown is an ``ERROR``)."""
    checked = set(checked)
    out: Dict[str, Tuple[str, str]] = {}
    for category in ("failed", "error"):
        for report in stats.get(category, ()):
            nodeid = getattr(report, "nodeid", None)
            if (not nodeid or nodeid in checked or nodeid in out
                    or not getattr(report, MARKED, False)):
                continue
            why = getattr(report, WHY, None) or first_line(getattr(report, "longrepr", None)) or \
                f"failed in {getattr(report, 'when', 'the test')}"
            out[nodeid] = (why, "FAILED" if category == "failed" else "ERROR")  # (pytest's own:
            # a worker's crash, when "???", is a failure)
    return sorted((nodeid, why, label) for nodeid, (why, label) in out.items())


def failed_after_checks(stats: Mapping[str, Sequence], passed: Iterable[str],
                        failed: Iterable[str]) -> List[Tuple[str, str, str]]:
    """``[(test id, why, "FAILED" | "ERROR")]`` of ``@accuracy`` tests that failed or errored
    although every check they ran passed (``passed``: ids with a check, ``failed``: ids with a
    failed one): the test's own assert after them, a warning made an error. The section read
    "1 passed, 0 failed" and listed nothing beside pytest's failure of that test (a CI
    trial)."""
    checked = set(passed)
    return [row for row in failed_before_check(stats, set(failed)) if row[0] in checked]


def first_line(longrepr, width: int = 200) -> str:
    """The first line of a failure: the plugin's own text (a str longrepr), else pytest's crash
    message; cut to ``width`` characters (the failure's section has it whole)."""
    text = longrepr if isinstance(longrepr, str) else getattr(
        getattr(longrepr, "reprcrash", None), "message", "")
    from .crash_line import first_text_line

    line = first_text_line(text or "")
    return line if len(line) <= width else line[:width - 3].rstrip() + "..."


def check_status(rec: CheckRecord, outcomes: Mapping[str, str]) -> str:
    """``PASSED``, or for a failed check what its test made of it: ``XFAIL`` (the test is
    xfailed), ``CAUGHT`` (the test passed: it expected the failure), ``SKIPPED`` (the test
    caught it and skipped: a CI trial's was ``FAILED`` beside pytest's "1 skipped") or
    ``FAILED``."""
    return _status(rec.passed, outcomes.get(rec.nodeid))


def _status(passed: bool, outcome: Optional[str]) -> str:
    """A check's status from its verdict and its test's outcome (``outcomes_by_test``)."""
    if passed:
        return PASSED
    if outcome == "xfailed":
        return XFAIL
    if outcome in ("passed", "xpassed"):
        return CAUGHT
    if outcome == "skipped":
        return SKIPPED
    return FAILED


def failure_line(rec: CheckRecord, status: str = FAILED, shape: str = "") -> str:
    """``FAILED node: first failing op X (cosine 0.41 < 0.95)`` (``XFAIL``/``CAUGHT ... (the
    test passed)``/``SKIPPED ... (the test was skipped)`` for a failed check its test expected,
    see ``check_status``); ``shape``: the check's input shape where its test checked several
    (``shape_contexts``), after the model and mode (a long one as the grid titles it,
    ``short_mode``: the test id beside it spells it in full)."""
    op = "cosine" if rec.metric == "cosine" else rec.metric
    rel = "<" if rec.metric == "cosine" else ">"
    where = f" [{rec.model}, {short_mode(rec.mode)}]" + _TEST_DID.get(status, "") + (
        f": {shape}" if shape else "")
    prefix = _LINE_PREFIX[status]
    if rec.note:
        return f"{prefix} {rec.nodeid}{where}: {rec.note}"
    if rec.first_op is None:
        return f"{prefix} {rec.nodeid}{where}"
    value = rec.first_value
    if value is None or (isinstance(value, float) and math.isnan(value)):
        detail = f"{op} undefined: NaN/Inf or not compared"
    else:
        from ..compare.thresholds import beside, threshold_text

        detail = f"{op} {beside(value, rec.threshold)} {rel} {threshold_text(rec.threshold)}"
    return f"{prefix} {rec.nodeid}{where}: first failing op {rec.first_op} ({detail})"


def shape_contexts(records: Sequence[CheckRecord]) -> List[str]:
    """Per record, where its test's checks ran its model at several input shapes, which shape
    it ran at and where among the test's checks of that model it stands
    (``report.checked_shapes.shape_context``); else "". Records of one test keep the order
    they were made in."""
    from ..report.checked_shapes import several_shapes, shape_context

    by_test: Dict[Tuple[str, str, Optional[str]], List[int]] = {}
    for k, r in enumerate(records):  # two files of one name are two models
        by_test.setdefault((r.nodeid, r.model, r.model_file), []).append(k)
    out = [""] * len(records)
    for (_, model, _), ks in by_test.items():
        shapes = [records[k].input_shape for k in ks]
        if several_shapes([(model, shape) for shape in shapes]):
            passed = [records[k].passed for k in ks]
            for j, k in enumerate(ks):
                out[k] = shape_context(j, shapes, passed, model)
    return out


def grid_lines(records: Sequence[CheckRecord], outcomes: Mapping[str, str] = {}) -> List[str]:
    """One row per model (a YAML suite's item: per item name, ``grid_row``), one column per
    mode: ``passed``, ``FAILED``, ``xfail``, ``caught``, ``skipped`` (``check_status``),
    ``1/2 passed`` or ``-``."""
    models: List[str] = []
    modes: List[str] = []
    cells: Dict[Tuple[str, str], List[str]] = {}
    for r in records:
        row = grid_row(r)
        if row not in models:
            models.append(row)
        if r.mode not in modes:
            modes.append(r.mode)
        cells.setdefault((row, r.mode), []).append(check_status(r, outcomes))

    def cell(model, mode):
        statuses = cells.get((model, mode))
        if not statuses:
            return "-"
        if len(set(statuses)) == 1:
            return statuses[0]
        return f"{statuses.count(PASSED)}/{len(statuses)} passed"

    modes = sorted(modes, key=lambda m: m != "default")  # default first, the rest as met
    titles, legend = grid_titles(modes)
    header = ["model"] + titles
    rows = [[m] + [cell(m, mode) for mode in modes] for m in models]
    widths = [max(len(row[i]) for row in [header] + rows) for i in range(len(header))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
            for row in [header] + rows] + legend


def grid_row(rec: CheckRecord) -> str:
    """A check's row in the grid: its model, or for a YAML suite's item the item's name (its
    ``name:``): two items of one model with other AIPP files or settings are two rows, and an
    item whose pre-processing check failed (so no accuracy check ran) never reads ``passed``
    through another item of its model (an AIPP trial)."""
    path, sep, rest = rec.nodeid.partition("::")
    if sep and path.endswith((".yaml", ".yml")):
        return rest.partition("[")[0] or rec.model
    return rec.model


def _statuses(records: Sequence[Mapping], outcomes: Mapping[str, str]) -> List[str]:
    """Each record's ``PASSED``, or for a failed check what its test made of it (``XFAIL``,
    ``CAUGHT``, ``SKIPPED``, ``FAILED``), as ``check_status`` says of an accuracy check."""
    return [_status(r["passed"], outcomes.get(r["nodeid"])) for r in records]


def dataset_lines(records: Sequence[Mapping], outcomes: Mapping[str, str] = {}) -> List[str]:
    """``2 dataset checks: ...``, one line of figures per check and a line per failure
    (``XFAIL``/``CAUGHT``/``SKIPPED`` as for an accuracy check: a failed check of an xfailed
    test, or of a test that caught it and passed, was a ``FAILED`` line beside pytest's "1
    xfailed": a CI trial)."""
    records = sorted(records, key=lambda r: r["nodeid"])
    statuses = _statuses(records, outcomes)
    passed = statuses.count(PASSED)
    lines = [f"{plural(len(records), 'dataset check')}: {passed} passed, "
             f"{len(records) - passed} failed{_expected(statuses)}"]
    for r in records:
        sign, d = "<=" if r["passed"] else ">", _decimals(r)
        lines.append(f"  {r['model']} [{short_mode(r['mode'])}] {r['metric']} "
                     f"{r['device']:.{d}f} device vs {r['reference']:.{d}f} reference "
                     f"({_drop_text(r, d)} "
                     f"{sign} {r['max_drop']:g}), {plural(r['samples'], 'sample')}, "
                     + ("flips not tracked" if r.get("untracked") else f"{r['flipped']} flipped"))
    for r, status in zip(records, statuses):
        if status != PASSED:
            traced = (f"; first failing op {r['first_op']} (sample {r['first_sample']})"
                      if r.get("first_op") else "")
            caught = _TEST_DID.get(status, "")
            lines.append(f"{_LINE_PREFIX[status]} {r['nodeid']} [{r['model']}, "
                         f"{short_mode(r['mode'])}]"
                         f"{caught}: {r['metric']} {_drop_text(r, _decimals(r))} > "
                         f"max_drop {r['max_drop']:g}{traced}")
    return lines


def _decimals(r: Mapping) -> int:
    """4, or for a failed check as many as it takes for two figures that differ not to print
    alike ("drop 0.0000 > max_drop 0" hid a drop of 0.00004:
    ``dataset.figure_decimals.apart_decimals``, as the check's own verdict line; a passing
    74/100 against 75/100 read in 17 decimals)."""
    from ..dataset.figure_decimals import apart_decimals

    drop = _drop(r)
    if r["passed"]:  # a drop other than 0 never prints as 0.0000 (nor -0.0000)
        return apart_decimals((drop, 0.0))
    return apart_decimals((r["device"], r["reference"]), (abs(drop), r["max_drop"]),
                          (drop, 0.0))


def _drop(r: Mapping) -> float:
    """How much worse the device is (``DatasetResult.drop``); a float sum's residue is 0."""
    diff = r["reference"] - r["device"]
    diff = diff if r.get("higher_is_better", True) else -diff
    return 0.0 if abs(diff) <= 1e-12 else diff


def _drop_text(r: Mapping, decimals: int = 4) -> str:
    """``drop 0.1000`` (reference - device), or for a lower-is-better figure (a loss)
    ``lower is better: rise 5.9385`` (device - reference), as ``DatasetResult.figures``."""
    what = "drop" if r.get("higher_is_better", True) else "lower is better: rise"
    return f"{what} {_drop(r):.{decimals}f}"


def preprocessing_lines(records: Sequence[Mapping],
                        outcomes: Mapping[str, str] = {}) -> List[str]:
    """``2 pre-processing checks: ...`` (step 5, the AIPP file against the reference
    pre-processing), a line per check and one per failure (``XFAIL``/``CAUGHT``/``SKIPPED`` as
    for an accuracy check: ``check_status``)."""
    records = sorted(records, key=lambda r: r["nodeid"])
    statuses = _statuses(records, outcomes)
    passed = statuses.count(PASSED)
    lines = [f"{plural(len(records), 'pre-processing check')}: {passed} passed, "
             f"{len(records) - passed} failed{_expected(statuses)}"]
    lines.extend(f"  {r['aipp']} (input {r['input']}, {r['format']}): {r['agree']} of "
                 f"{plural(r['images'], 'image')} agree" for r in records)
    for r, status in zip(records, statuses):
        if status != PASSED:
            fix = f"; corrected AIPP file: {r['corrected']}" if r.get("corrected") else ""
            caught = _TEST_DID.get(status, "")
            lines.append(f"{_LINE_PREFIX[status]} {r['nodeid']}{caught}: AIPP file {r['aipp']} "
                         f"disagrees with the reference pre-processing{fix}")
    return lines


def _expected(statuses: Sequence[str]) -> str:
    """``, of them 1 in an xfailed test and 2 caught by passing tests`` (empty: none)."""
    xfail, caught, skipped = (statuses.count(s) for s in (XFAIL, CAUGHT, SKIPPED))
    parts = [f"{xfail} in {'an xfailed test' if xfail == 1 else 'xfailed tests'}"] if xfail else []
    if caught:
        parts.append(f"{caught} caught by {'a passing test' if caught == 1 else 'passing tests'}")
    if skipped:
        parts.append(f"{skipped} in {'a skipped test' if skipped == 1 else 'skipped tests'}")
    if not parts:
        return ""
    return f", of them {', '.join(parts[:-1])}{' and ' if len(parts) > 1 else ''}{parts[-1]}"


def relative_ids(cwd, rootpath) -> Callable[[str], str]:
    """A test id (relative to the rootdir) as pytest's own summary spells it from ``cwd``: its
    path part relative to ``cwd``, ``../`` included, as pytest's ``bestrelpath`` gives it.
    (``Config.cwd_relative_nodeid`` does this, but its argument became a ``NodeId`` object in
    pytest 9.2: a str crashed the summary there.)"""
    import os

    if os.path.abspath(cwd) == os.path.abspath(rootpath):
        return str

    def shown(nodeid: str) -> str:
        path, sep, rest = nodeid.partition("::")
        relative = os.path.relpath(os.path.join(rootpath, path), cwd).replace(os.sep, "/")
        return relative + sep + rest
    return shown


def shown_ids(shown: Callable[[str], str], records: Sequence[CheckRecord],
              dataset_records: Sequence[Mapping], preprocessing_records: Sequence[Mapping],
              outcomes: Mapping[str, str], unchecked: Sequence[Tuple[str, str, str]],
              after_checks: Sequence[Tuple[str, str, str]]) -> Dict[str, object]:
    """``summary_lines``' test-id arguments with every id as ``shown`` gives it
    (``relative_ids``: the id pytest's own summary prints, which pasted into ``pytest`` runs
    from where it ran; the ids are relative to the rootdir: run from a parent folder,
    ``tests/test_models.py::...`` named no file there)."""
    from dataclasses import replace

    return {"records": [replace(r, nodeid=shown(r.nodeid)) for r in records],
            "dataset_records": [{**r, "nodeid": shown(r["nodeid"])} for r in dataset_records],
            "preprocessing_records": [{**r, "nodeid": shown(r["nodeid"])}
                                      for r in preprocessing_records],
            "outcomes": {shown(k): v for k, v in outcomes.items()},
            "unchecked": [(shown(n), *rest) for n, *rest in unchecked],
            "after_checks": [(shown(n), *rest) for n, *rest in after_checks]}


def summary_lines(records: Sequence[CheckRecord], *, backend: str,
                  cache_stats: Mapping[str, int], golden_writes: Iterable[GoldenWrite] = (),
                  report_dir: Optional[str] = None,
                  dataset_records: Sequence[Mapping] = (),
                  preprocessing_records: Sequence[Mapping] = (),
                  outcomes: Mapping[str, str] = {},
                  unchecked: Sequence[Tuple[str, str, str]] = (),
                  after_checks: Sequence[Tuple[str, str, str]] = (),
                  run_id: Optional[str] = None, base=None) -> List[str]:
    """Every line of the section, in order. Records are ordered by test id, so the section is
    the same whichever xdist worker ran which test. ``outcomes``: each test's outcome
    (``outcomes_by_test``), which says what a failed check was to its test; ``unchecked``:
    ``failed_before_check``'s tests, counted and listed after the checks' failures;
    ``after_checks``: ``failed_after_checks``'s, likewise; the pre-processing and dataset
    checks follow, each kind with its own count. ``base``: where pytest ran (a model's label
    is made of its path as shown from there, ``model_labels``)."""
    from .model_labels import relabelled  # two files of one name: by their folders

    records, dataset_records = relabelled(records, dataset_records, base)
    records = sorted(records, key=lambda r: r.nodeid)
    lines = [f"backend: {backend}"]
    before = "; ".join(
        ([f"{plural(len(unchecked), '@accuracy test')} failed without a check verdict"]
         if unchecked else [])
        + ([f"{plural(len(after_checks), '@accuracy test')} failed after "
            f"{'its' if len(after_checks) == 1 else 'their'} checks passed"]
           if after_checks else []))
    if records:
        statuses = [check_status(r, outcomes) for r in records]
        passed = statuses.count(PASSED)
        failed = len(records) - passed
        n_models = len({grid_row(r) for r in records})  # the grid's rows
        n_modes = len({r.mode for r in records})
        lines.append(f"{plural(len(records), 'accuracy check')}: {passed} passed, {failed} failed"
                     f"{_expected(statuses)} "
                     f"({plural(n_models, 'model')} x {plural(n_modes, 'mode')})"
                     + (f"; {before}" if before else ""))
        lines.extend("  " + line for line in grid_lines(records, outcomes))
        shapes = shape_contexts(records)
        lines.extend(failure_line(r, st, shape)
                     for r, st, shape in zip(records, statuses, shapes) if st != PASSED)
    elif before and (dataset_records or preprocessing_records):  # their own lines follow
        lines.append(before)
    elif unchecked:
        lines.append(f"no accuracy check ran: {before}")
    elif not (dataset_records or preprocessing_records):
        lines.append("no accuracy checks ran")
    lines.extend(f"{label} {nodeid}: no check verdict: {why}" for nodeid, why, label in unchecked)
    lines.extend(f"{label} {nodeid}: its checks passed, then the test failed: {why}"
                 for nodeid, why, label in after_checks)
    if preprocessing_records:
        lines.extend(preprocessing_lines(preprocessing_records, outcomes))
    if dataset_records:
        lines.extend(dataset_lines(dataset_records, outcomes))
    hits, misses = cache_stats.get("hits", 0), cache_stats.get("misses", 0)
    cache_line = f"cache: {plural(hits, 'hit')}, {plural(misses, 'miss')}"
    if cache_stats.get("rebuilt"):
        cache_line += f", {cache_stats['rebuilt']} corrupt entr{'y' if cache_stats['rebuilt'] == 1 else 'ies'} rebuilt"
    lines.append(cache_line + unbounded_note(cache_stats))
    lines.extend(written_file_lines(golden_writes))
    if report_dir:  # the index of this run's folders, where this session's is there
        index = os.path.join(str(report_dir), "index.html")
        lines.append(f"reports: {report_dir}"
                     + (f" (this run's folders: {index})"
                        if _index_of(report_dir, run_id) else ""))
    return lines


def _index_of(report_dir: str, run_id: Optional[str]) -> bool:
    """Whether ``report_dir``'s index is this run's: another session writing into the same
    folder at once rewrites it when it ends (a review: the line named an index listing the
    other session's folders)."""
    import json

    if not os.path.isfile(os.path.join(str(report_dir), "index.html")):
        return False
    try:
        with open(os.path.join(str(report_dir), "index.json"), encoding="utf-8") as f:
            return run_id is None or json.load(f)["run"]["id"] == run_id
    except (OSError, ValueError, KeyError, TypeError):
        return False


def written_file_lines(writes: Iterable[GoldenWrite]) -> List[str]:
    """The stored goldens and baselines written this session, one line per file however many
    tests wrote it (their number follows its reason: four parametrizations sharing one golden
    under --accuracy-regen-all read as "4 golden files" with one path four times, a CI trial).
    A file any test changed was written; one every test regenerated with the same bytes was not."""
    lines: List[str] = []
    writes = list(writes)
    for kind in ("golden file", "baseline file"):
        by_path: Dict[str, List[GoldenWrite]] = {}
        for w in writes:
            if w.reason.startswith("baseline") == (kind == "baseline file"):
                by_path.setdefault(w.path, []).append(w)
        same = {p: ws for p, ws in by_path.items()
                if all(w.reason.startswith("unchanged") for w in ws)}
        written = {p: ws for p, ws in by_path.items() if p not in same}
        for group, what in ((written, "written:"), (same, "regenerated with the bytes already "
                                                          "there (not written):")):
            if group:
                lines.append(f"{plural(len(group), kind)} {what}")
                lines.extend(_written_file_line(path, ws) for path, ws in group.items())
    return lines


def _written_file_line(path: str, writes: Sequence[GoldenWrite]) -> str:
    """The file's reasons, and how many tests gave them: those that changed it, where any did
    (one test writing a missing golden that three more then found unchanged read "written
    (missing) (by 4 tests)", a review)."""
    changed = [w for w in writes if not w.reason.startswith("unchanged")]
    shown = changed or list(writes)
    reasons = "; ".join(dict.fromkeys(w.reason for w in shown))
    tests = len(shown) if any(not w.nodeid for w in shown) else len({w.nodeid for w in shown})
    return f"  {path}: {reasons}" + (f" (by {tests} tests)" if tests > 1 else "")
