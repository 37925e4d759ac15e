"""What a test sets up, checked before anything runs: every name and option a user gives either
does what it says or is refused with a ``ConfigError`` naming the closest real names.

- keep_dtype entries (names and ``OpType::X``) against the model (``graph.op_catalogue``);
- per-op thresholds and ignored ops against the ops of the dumps compared;
- ATC options given to ``ascend_model(...)``: each is emulated, documented as numerically
  neutral, or refused (``core.atc_option_check``, which every path and backend runs);
- setup mistakes (missing model, wrong input name or shape, dynamic dims, unknown mode) are
  shown as one short paragraph instead of a traceback (``setup_longrepr``).
"""
from __future__ import annotations

from typing import Iterable, Optional

import pytest

from ..core.atc_option_check import check_mode_options
from ..errors import ConfigError


def check_mode_names(mode, model, where: str, others=(), advice=None) -> None:
    """keep_dtype entries of ``mode`` must name ops (or op types) of ``model``, or of one of
    ``others`` (the models its test converted before: ``graph.op_catalogue.check_mode``); the
    extra ATC options of a ``Mode(extra=...)`` pass ``check_atc_options`` like
    ``ascend_model``'s (``core.atc_option_check.check_mode_options``; ``advice``: the caller's
    own spelling of a fix)."""
    from ..graph.op_catalogue import check_mode

    check_mode_options(mode, where, advice=advice)
    if getattr(mode, "keep_dtype", ()) and model is not None:
        check_mode(mode, model, where, others)


def check_op_names(spec, dumps: Iterable, where: str, actual=None, model=None) -> None:
    """Per-op thresholds and ignored ops must name ops of the compared dumps (their real names,
    or globs matching some), else they would silently judge nothing; an error offers the names
    of ``actual`` (the device's dump), those compared, and says where an op of ``model`` (the
    ONNX model, when known) inside an If's branch is, and which op makes a tensor of it named
    (as keep_dtype's check does: ``graph.op_catalogue.ModelOps.outputs``)."""
    from ..graph.op_catalogue import check_dump_setting_names, model_ops

    ops = model_ops(model) if model is not None and (spec.per_op or spec.ignore) else None
    check_dump_setting_names([n for n, _ in spec.per_op], spec.ignore, dumps, where, "model",
                             actual=actual, inside=ops.inside if ops else (),
                             outputs=ops.outputs if ops else ())


def check_judged_names(spec, result, where: str) -> None:
    """After the compare: a per-op threshold or ignore entry that names ops of the dumps
    (``check_op_names``) but none of the compared rows -- only golden ops the device never ran
    (folded at conversion: Shape, constants) or no device op matches -- would judge nothing:
    ``per_op={"p2o.Shape.2": ...}`` passed without a word. An error naming why; but a fused
    member's tensor (``fc1/MatMul:output:0``) in a marker with a mode without fusion is that
    mode's op of its own, judged there."""
    for what, entry in result.uncompared_entries([n for n, _ in spec.per_op], spec.ignore):
        if (result.coverage.never_compared(entry)[1] == "fused"
                and any(not m.fusion for m in spec.modes)):
            continue  # a fused member's tensor: a mode of the marker without fusion judges
            # it (not one switching off some rules: they need not unfuse this member)
        raise ConfigError(where, result.coverage.judges_nothing(what, entry))


def item_spec(request, state, mode):
    """The test's ``@accuracy`` spec (``marker_spec.spec_from_marker`` of its closest marker),
    once ``check_param_modes`` found no modes it would ignore (``mode``: the one it runs in)."""
    from .marker_spec import spec_from_marker

    check_param_modes(request.node, mode)
    return spec_from_marker(request.node.get_closest_marker("accuracy"),
                            default_threshold=state.settings.threshold,
                            where=request.node.nodeid, default_max_drop=state.settings.max_drop)


def check_param_modes(item, mode) -> None:
    """``pytest.param(..., marks=accuracy(modes=[...]))``: a param's marks reach the test after
    ``pytest_generate_tests`` made one test per mode of the test's own marker, so its modes
    were ignored while its threshold applied (audit 33: a keep_dtype mode ran as default, and
    its id said nothing). Refused, saying where modes go."""
    from ..core.modes import resolve_mode

    callspec = getattr(item, "callspec", None)
    marks = [m for m in getattr(callspec, "marks", ()) if m.name == "accuracy"]
    asked = [m.kwargs["modes"] for m in marks if m.kwargs.get("modes") is not None]
    own = [m.kwargs["modes"] for m in item.iter_markers("accuracy")
           if m not in marks and m.kwargs.get("modes") is not None][:1]
    running = resolve_mode(mode)

    def forms(modes):  # each mode however spelled: "fusion_off+buffer_off", FUSION_OFF | ...
        return {resolve_mode(x).yaml_form() for x in (
            [modes] if isinstance(modes, str) or not hasattr(modes, "__iter__") else modes)}
    try:  # the mode it runs in, or the test's own list, named again (a review: refused)
        if all(forms(a) in ({running.yaml_form()}, *map(forms, own)) for a in asked):
            return
    except (TypeError, ConfigError):  # (an unknown mode is the marker check's to refuse)
        pass
    runs = "the default mode" if running.name == "default" else running.name
    raise ConfigError(item.nodeid, f"modes= in the accuracy mark of pytest.param "
                      f"(id {callspec.id!r}) makes no test of its own: only the test's own "
                      f"@accuracy(modes=[...]) marker (or pytestmark's) does, and this one would "
                      f"run in {runs} without a word; put modes= on the test's @accuracy marker, "
                      f"or convert in that mode in the test: ascend_model(MODEL, mode=...) (the "
                      f"param's threshold= and its other settings apply as given)")


def check_marks_unchanged(request, ctx) -> None:
    """A ``request.applymarker(accuracy(...))`` in the test body comes after the spec was read
    at setup: its threshold or metric would be ignored without a word (a user trial judged
    ``metric="rel_l2"`` by cosine 0.95). Refused, saying where the marker goes."""
    if len(list(request.node.iter_markers("accuracy"))) != ctx.marks:
        raise ConfigError(ctx.nodeid, "an accuracy marker was applied after the test's setup "
                          "(request.applymarker in the test body), when its settings had been "
                          "read: put @accuracy(...) on the test (or pytestmark), or pass per_op=/"
                          "ignore= to check_accuracy")


def error_first_line(excinfo) -> Optional[str]:
    """The first line of one of this package's errors as the failure block shows it with
    ``--tb`` auto/short (``ascend-accuracy configuration error: ...``; an accuracy failure's
    verdict line), whatever ``--tb`` is: the summary and JUnit read it, and ``--tb=no`` gave
    them pytest's ``pytest_ascend_accuracy.errors.ConfigError: ...`` instead (a CI trial).
    None for other exceptions (pytest's crash line serves)."""
    from ..errors import AscendAccuracyError

    exc = getattr(excinfo, "value", None)
    if not isinstance(exc, AscendAccuracyError):
        return None
    from .crash_line import first_text_line

    text = first_text_line(str(exc))
    if type(exc).__name__ == "AccuracyFailure":
        return text
    kind = "configuration error" if isinstance(exc, ConfigError) else type(exc).__name__
    return f"ascend-accuracy {kind}: {text}"


def setup_longrepr(item, excinfo) -> Optional[str]:
    """A setup mistake (any ``AscendAccuracyError`` but an accuracy failure: missing model,
    unknown op name, wrong input, unknown mode...) as one short paragraph plus the test line
    that raised it, instead of a traceback through the plugin (``--tb=long`` keeps pytest's)."""
    from pathlib import Path

    from ..errors import AscendAccuracyError

    exc = excinfo.value
    if not isinstance(exc, AscendAccuracyError) or type(exc).__name__ == "AccuracyFailure":
        return None
    if item.config.getoption("tbstyle", "auto") not in ("auto", "short"):
        return None
    kind = "configuration error" if isinstance(exc, ConfigError) else type(exc).__name__
    text = f"ascend-accuracy {kind}: {exc}"
    item_path = Path(str(item.path))
    if (isinstance(exc, ConfigError) and exc.where == "input_shape"
            and item_path.suffix in (".yaml", ".yml")):  # the advice above is spelled in Python
        text += (f"\n(in {item_path.name} that is the model entry's key "
                 f"input_shape: {{NAME: [d0, d1, ...]}})")
    entries = list(excinfo.traceback)
    # the test's own line, else (a fixture of a conftest.py or a helper it calls, a review) the
    # user's last line before the package's code: no stdlib frame (contextlib's, a re-review)
    first = next((k for k, e in enumerate(entries) if _package(Path(str(e.path)))), len(entries))
    entry = next((e for e in reversed(entries) if Path(str(e.path)) == item_path), None) or next(
        (e for e in reversed(entries[:first]) if _users(Path(str(e.path)))), None)
    if entry is not None:
        import os

        rel = os.path.relpath(str(entry.path), item.config.invocation_params.dir)
        text += f"\n\n{rel}:{entry.lineno + 1}: {type(exc).__name__}"
    return text


def _package(path) -> bool:
    """Whether ``path`` is a file of this package."""
    from pathlib import Path

    return Path(__file__).resolve().parents[1] in path.resolve().parents


def _users(path) -> bool:
    """Whether ``path`` is a file of the user's: not this package's, an installed one's or the
    standard library's."""
    import sysconfig

    resolved = path.resolve()
    stdlib = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib")}
    return (not _package(path) and "site-packages" not in resolved.parts
            and "dist-packages" not in resolved.parts and resolved.suffix == ".py"
            and not any(resolved.is_relative_to(p) for p in stdlib))


class NothingCheckedWarning(pytest.PytestWarning):
    """A test marked ``@accuracy`` dumped a run of its model and started no check."""


def warn_if_nothing_checked(item, ctx) -> None:
    """After a passing test marked ``@accuracy`` has torn down (a check may run in a fixture's
    teardown): when it dumped a run of its model (``om.run(inputs)``) but started no check
    (``check_accuracy``, ``check_dataset``, ``check_preprocessing``), warn that nothing was
    compared -- the shape of a test that forgot its ``check_accuracy``. A warning, not a
    failure: a comparison made outside the plugin (``assert_accuracy``) or a test judging the
    outputs its own way cannot be told from it, and is not wrong. Nothing for unmarked tests,
    YAML items, tests that checked, or that dumped no run (``run(inputs, dump=False)``)."""
    if ctx is None or ctx.checks or item.get_closest_marker("accuracy") is None:
        return
    dumped = [r for r in ctx.runs if r.dumped]
    if not dumped:
        return
    from .model_labels import label_in_test  # two files of one name: by their folders

    mine = [r.handle.model for r in dumped]
    base = item.config.invocation_params.dir  # (paths are shown from where pytest ran)
    models = ", ".join(dict.fromkeys(label_in_test(m, mine, base) for m in mine))
    item.warn(NothingCheckedWarning(
        f"{ctx.nodeid} is marked @accuracy and dumped a run of {models}, but started no "
        f"check: pass the dump to check_accuracy(actual, golden) (a comparison made with "
        f"assert_accuracy is not in the summary, the reports or JUnit), or remove @accuracy "
        f"from a test that is not an accuracy check"))
