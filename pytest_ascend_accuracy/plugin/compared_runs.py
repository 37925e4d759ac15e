"""Runs compared against the test's golden while they run: a passing check writes no dump.

A test that makes its golden before running the model (``golden = golden_dump(model,
inputs)``, then ``ascend_model(model).run(inputs)``; a YAML suite's entries always do) has the
run compared against that golden as it goes, on a backend that can
(``EmulatorBackend.run_compared``): ``check_accuracy(actual, golden)`` then judges the
comparison made, and a passing check never wrote its dump. A failing check, or anything
reading the run's tensors, runs the model again with the dump written (``compared_run``), as
does a test that fails otherwise (a baseline, its own assert): a failing test keeps the dumps of
its runs (``dump_cleanup.settle_dumps``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

import numpy as np


def run_compared(handle, inputs, dump_dir, run_written: Callable[[], object]):
    """``handle.run(inputs)`` compared against the golden ``handle.compare_with(inputs)``
    gives, or None (no golden, or a backend that compares only dumps): the caller runs as
    always."""
    __tracebackhide__ = True
    backend = handle.state.backend
    chosen = handle.compare_with(inputs) if handle.compare_with is not None else None
    if chosen is None or not hasattr(backend, "run_compared"):
        return None
    golden, kl = chosen
    from .given_shape_words import given_shape_words

    progress = handle.state.progress  # ("comparing N/M tensors", as a written run's compare)
    # no device lock held here: the emulator's runs take no device, and ``run_written``, which
    # a run that cannot be compared so (or a later rerun) calls, takes it itself
    with given_shape_words(handle):
        result = backend.run_compared(handle.converted, inputs, golden, kl=kl,
                                      dump_dir=dump_dir, rerun=run_written,
                                      progress=progress.compare() if progress else None)
    from ..aipp.conversion_name import name_conversion_aipp  # not the cache entry's

    name_conversion_aipp(result, handle.atc_options.get("insert_op_conf"))
    later = getattr(result, "write_later", None)
    if later is not None and dump_dir is not None:  # a test that fails keeps its dumps
        handle.state.unwritten_runs.setdefault(Path(dump_dir).parent, []).append(later())
    return result


def kl_wanted(state, spec) -> bool:
    """Whether a check of ``spec`` computes the KL divergence: a report set written (its CSV
    has the column) or a threshold judging by it (``assert_accuracy``'s own choice)."""
    from ..compare.thresholds import Policy

    if state.settings.report_dir is not None:  # (report_dir_for would count a check)
        return True
    try:
        policy = Policy.build(spec.threshold, spec.per_op_dict or None, spec.ignore,
                              spec.metric, spec.scale_tolerance)
    except Exception:  # refused at the check, with its reason
        return True
    return "kl" in policy.metrics


def golden_chooser(state, ctx, model, *, raw_inputs: bool = False
                   ) -> Callable[[object], Optional[tuple]]:
    """``AscendModel.compare_with`` of a test's ``ascend_model(model)``: given a run's inputs,
    the last golden the test made of ``model`` from those inputs, that it still holds, with
    whether its check wants the KL divergence; None where it made none from them (the run is
    written, and ``check_accuracy`` refuses a golden of other inputs: ``refuse_other_inputs``).
    ``raw_inputs``: an AIPP model, whose runs take raw images and whose golden runs on
    pre-processed ones: the last golden it made of ``model``."""
    def choose(inputs):
        goldens = ctx.goldens_of(model)
        if not goldens:
            return None
        golden = _made_from(goldens, inputs)
        if golden is None and raw_inputs:
            golden = goldens[-1]
        if golden is None:
            return None
        return golden, kl_wanted(state, ctx.spec)
    return choose


def refuse_other_inputs(run, actual, golden) -> None:
    """``check_accuracy(actual, golden)`` where ``actual`` is a test's run (``run``, a
    ``ModelRun``) of a model without AIPP and ``golden`` was made from other inputs (another
    seed, shape or file, by the digest ``golden_dump`` records, or a stored golden's record
    where it was given as a path): compared so every operator differs and no conversion mode
    could help, so the check is refused, saying so. The run's inputs as they were when it ran
    (a test may reuse or change its arrays after it, H106)."""
    from ..errors import ConfigError

    if (run is None or run.dump() is not actual
            or inserts_aipp(None, getattr(run.handle, "atc_options", None) or {})):
        return  # (an AIPP file given as aipp= is among the handle's options as insert_op_conf)
    digest, shapes = run.digested
    made_from = _golden_inputs_digest(golden)
    if digest is None or made_from is None or made_from == digest:
        return
    raise ConfigError("check_accuracy",
                      f"the golden was made from other inputs than this run's (its inputs "
                      f"digest {made_from[:19]}..., the run's inputs: {shapes}): "
                      f"compared so every operator differs and no conversion mode can fix it; "
                      f"make the golden from the inputs the run was given: "
                      f"golden_dump(model, inputs) with the same inputs as run(inputs)")


def inserts_aipp(aipp, atc_options) -> bool:
    """The conversion inserts AIPP (``aipp=``, or ATC's ``insert_op_conf`` among its options):
    its runs take raw images, its golden pre-processed ones."""
    return aipp is not None or any(str(k).lstrip("-") == "insert_op_conf" and v
                                   for k, v in atc_options.items())


def digested(inputs) -> tuple:
    """(``inputs_digest`` of a run's inputs, their names, dtypes and shapes as text), or
    (None, "") for inputs the run refuses, with its own reason."""
    from ..graph.content_digests import inputs_digest

    try:
        arrays = {k: np.asarray(v) for k, v in dict(getattr(inputs, "arrays", inputs)).items()}
        return inputs_digest(arrays), ", ".join(f"{k} {v.dtype} {tuple(v.shape)}"
                                                for k, v in sorted(arrays.items()))
    except Exception:  # noqa: BLE001
        return None, ""


def _golden_inputs_digest(golden):
    """The inputs digest ``golden`` was made from: its ``golden_source`` (``golden_dump``'s),
    else the record of the stored golden it was read from as a path; None where unknown."""
    from ..golden.stored_record import SOURCE_META, read_record

    source = golden.meta.get(SOURCE_META) if golden is not None else None
    if isinstance(source, dict) and source.get("inputs_digest"):
        return source["inputs_digest"]
    root = getattr(golden, "root", None)
    try:
        rec = read_record(root) if root else None
    except Exception:  # noqa: BLE001 - an unreadable record says so where the golden is read
        return None
    return rec.get("inputs_digest") if isinstance(rec, dict) else None


def _made_from(goldens, inputs):
    """The last of ``goldens`` whose inputs were ``inputs`` (by digest), else None."""
    digest = digested(inputs)[0]
    if digest is None:
        return None
    return next((g for g in reversed(goldens) if _golden_inputs_digest(g) == digest), None)


def with_written_dump(outcome, actual, golden):
    """``outcome`` (a passing check's ``CheckOutcome``) as made from ``actual``'s written dump,
    where ``actual`` was compared as it ran and the test fails all the same (its baseline): the
    dump is written and compared again, so the reports name its files as a run-first test's."""
    from dataclasses import replace

    from ..compare.engine import compare_dumps

    compared = getattr(actual, "compared_with", None)
    kl = bool(outcome.result.meta.get("kl"))
    if compared is None or compared(golden, kl=kl) is not outcome.result:
        return outcome
    actual.materialize()
    return replace(outcome, result=compare_dumps(actual, golden, kl=kl))
