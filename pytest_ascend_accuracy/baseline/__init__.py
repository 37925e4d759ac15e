"""Accuracy baselines: catch an operator that got worse, even while it passes the threshold.

When a CANN upgrade, a driver or a model change moves an operator from cosine 0.9995 to 0.97,
a fixed threshold of 0.95 still passes. A baseline records every operator's metrics against
the fp32 golden once (per model x mode x inputs case) and later runs fail when one drops by
more than ``max_drop``. Library use, without pytest::

    from pytest_ascend_accuracy.baseline import (check_baseline, environment_for,
                                                 inputs_for_baseline, key_path, model_info,
                                                 model_key)
    from pytest_ascend_accuracy.core.regen import Regen

    path = key_path("tests/baselines", model_key(model, rootdir), mode)  # .../models/mlp/<mode>.yaml
    inputs = inputs_for_baseline(model, path, seed=0)        # unseeded inputs are refused
    converted = backend.convert(model, mode)
    result = compare_dumps(backend.run(converted, inputs), golden_dump(model, inputs, cache=c))
    outcome = check_baseline(result, path, header=environment_for(converted), inputs=inputs,
                             max_drop=0.002, regen=Regen.NONE,  # FAILING / ALL rewrite
                             info=model_info(model, rootdir))  # names an edited model
    assert outcome.passed, outcome.message

The pieces: ``baseline_file`` (the YAML format), ``baseline_inputs`` (seeded or stored inputs),
``baseline_env`` (environment header; file locations keyed by the model's path relative to the
rootdir), ``baseline_cases`` (one file per inputs case: ``locate_case(root, model, mode,
rootdir, inputs)`` is what the plugin judges, ``<mode>.yaml`` for seed 0 and the model's shapes,
``<mode>/<case>.yaml`` for any other inputs), ``baseline_check`` (judging, rewriting under one
``core.regen.Regen``), ``baseline.metrics`` (the lines a rel_l2 threshold judges, whose rel_l2
rise is judged too, and the metrics no baseline judges).

Layer above ``backends``: may import ``backends`` and everything below it.
"""
from __future__ import annotations

from .cases import case_name, locate_case
from .check import (MISSING, PASSED, REBASELINE, REGEN_CHOICES, REGRESSED, REWRITTEN,
                    UNREADABLE, BaselineGapWarning, BaselineOutcome, ModelChangedWarning,
                    OpChange, check_baseline, judge_ops, setup_changes)
from .env import (atc_args_of, baseline_path, environment_for, key_path, locate_baseline,
                  mode_items, model_info, model_key)
from .file import (ENVIRONMENT_KEYS, Baseline, BaselineWriteError, InputSpec, OpBaseline,
                   TensorSpec, ops_from_result, read_baseline, render)
from .writing import BaselineRefused, write_baseline
from .inputs import BaselineInputs, input_spec, inputs_dir, inputs_for_baseline
from .metrics import BaselineMetricWarning, rel_l2_lines, unjudged_metrics

__all__ = ["check_baseline", "BaselineGapWarning", "BaselineOutcome", "ModelChangedWarning",
           "OpChange", "judge_ops", "setup_changes",
           "REGEN_CHOICES", "PASSED", "REGRESSED", "REBASELINE", "MISSING", "UNREADABLE",
           "REWRITTEN", "baseline_path", "environment_for", "atc_args_of", "mode_items",
           "key_path", "locate_baseline", "model_info", "model_key",
           "ENVIRONMENT_KEYS", "Baseline", "BaselineWriteError", "InputSpec", "OpBaseline",
           "TensorSpec", "ops_from_result", "read_baseline", "render", "write_baseline",
           "BaselineRefused",
           "BaselineInputs", "input_spec", "inputs_dir", "inputs_for_baseline",
           "case_name", "locate_case", "BaselineMetricWarning", "rel_l2_lines",
           "unjudged_metrics"]
