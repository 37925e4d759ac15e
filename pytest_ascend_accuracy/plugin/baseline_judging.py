"""A passing accuracy check judged against its per-operator baseline (``max_drop`` set): where
the baseline file is for the test's model, mode and inputs, and the inputs a rerun must be able
to remake (``check_flow`` calls these once the threshold verdict passed).
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .marker_spec import AccuracySpec
from .session import AccuracyState

if TYPE_CHECKING:
    from .accuracy_check import AscendModel


def require_baseline_inputs(handle: "AscendModel", inputs, nodeid: str) -> None:
    """A ``ConfigError`` unless a baseline check of this test can rerun on the same data: the
    dump must come from an ``ascend_model(...).run(inputs)`` of the test, and ``inputs`` from
    ``accuracy_inputs``, which records how to remake them."""
    from ..baseline import BaselineInputs

    if handle is None:
        raise ConfigError(nodeid, "a baseline check (max_drop=...) needs the dump of an "
                                  "ascend_model(...).run(inputs) in this test")
    if not isinstance(inputs, BaselineInputs):
        raise ConfigError(nodeid, "a baseline check (max_drop=... or ini ascend_accuracy_max_drop) "
                                  "records how to remake the inputs it ran on, so a rerun "
                                  "compares the same data; these did not come from the "
                                  "accuracy_inputs fixture, and how they were made cannot be "
                                  "told. Pass run() accuracy_inputs(model, seed=0), or "
                                  "accuracy_inputs(model, inputs=your_arrays) to store your "
                                  "arrays next to the baseline")


def check_against_baseline(state: AccuracyState, result, handle: "AscendModel", inputs,
                           spec: AccuracySpec, *, nodeid: str):
    """The per-operator baseline check of a passing accuracy check (``max_drop`` set; rel_l2
    too where a threshold judges by it, ``baseline_metric``): the ``BaselineOutcome``. The
    baseline is <model key>/<mode>.yaml under the baseline dir for the default inputs (seed 0,
    the model's shapes), <model key>/<mode>/<case>.yaml for any other inputs case
    (``baseline.cases``), the key being the model file's path relative to the rootdir; a
    <mode>.yaml is read by the case whose inputs it records, and one still at its old
    stem-keyed place is used there, with a ``MovedFileWarning``; an in-memory model's key is its
    graph name and a digest of this test's id without its parametrization, so a retrained model
    keeps its baseline and two tests never share one."""
    from ..baseline import check_baseline, environment_for
    from ..baseline.cases import locate_case, with_other_cases
    from ..baseline.env import baseline_label, model_info, owner_of
    from .baseline_metric import rel_l2_limits

    require_baseline_inputs(handle, inputs, nodeid)
    rootdir = state.settings.rootdir
    # one baseline per conversion: the same model and mode with an AIPP file is another one
    # (options that change no number, such as log=, do not make another conversion)
    from ..core.atc_option_check import NEUTRAL_OPTIONS

    label = baseline_label(handle.mode, {k: v for k, v in handle.atc_options.items()
                                         if str(k).lstrip("-") not in NEUTRAL_OPTIONS})
    owner = owner_of(nodeid)
    located = locate_case(state.settings.baseline_dir, handle.model, label, rootdir, inputs,
                          owner)
    if located.belongs is not None:
        from ..core.caller_warning import warn_at_caller
        from ..core.locations import Located, MovedFileWarning

        folder = Located(located.path.parent, belongs=located.belongs.parent)  # modes + inputs
        in_memory = not isinstance(handle.model, (str, os.PathLike))
        warn_at_caller(MovedFileWarning(folder.message(
            "the accuracy baselines folder", state.settings.invocation_dir,
            why=("baselines of in-memory models are now keyed by graph name and test"
                 if in_memory else
                 "baselines are now keyed by the model file's path relative to the rootdir"))))
    return with_other_cases(check_baseline(
        result, located.path, header=environment_for(handle.converted), inputs=inputs,
        max_drop=spec.max_drop, regen=state.settings.regen, **rel_l2_limits(result, spec),
        info=model_info(handle.model, rootdir, owner), shown=state.settings.show(located.path),
        on_written=lambda p: state.note_written(os.path.abspath(p), nodeid)),
        located, inputs.spec, state.settings.show)
