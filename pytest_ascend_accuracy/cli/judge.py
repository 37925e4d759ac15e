"""``ascend-accuracy judge``: a saved JSON result (``compare --json``, or the plugin's
``compare.json``) judged again, no dumps read, under the policy it recorded (threshold and
metric, per-op thresholds, ignore list, scale guard), each unless its option is given."""
from __future__ import annotations

import argparse
import json

from ..core.check_defaults import DEFAULT_METRIC, DEFAULT_SCALE_TOLERANCE, DEFAULT_THRESHOLD
from ..errors import ConfigError
from .app import (Command, judge_and_report, add_command, resolve_threshold, scale_tolerance_arg,
                  stale_golden_note, threshold_options)


def _configure_judge(p: argparse.ArgumentParser) -> None:
    p.add_argument("result", help="a JSON result written by `compare --json` or by the plugin "
                   "(compare.json); its recorded threshold, per-op thresholds, ignore list and "
                   "scale guard apply unless given")
    threshold_options(p, f"the recorded one, else {DEFAULT_SCALE_TOLERANCE:g}")
    p.add_argument("--no-recorded-policy", action="store_true",
                   help="judge by the options given and their defaults only: no recorded "
                        "threshold, per-op thresholds, ignore list or scale guard")


def _load_judged(path: str):
    """The saved result and the policy its verdict was judged with (None when not recorded)."""
    from ..compare.result import CompareResult
    from ..errors import DumpFormatError

    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise DumpFormatError(path, f"cannot read: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting past the limit
        raise DumpFormatError(path, f"not valid JSON: {exc}") from None
    result = CompareResult.from_dict(data, where=path)
    verdict = data.get("verdict")
    policy = verdict.get("policy") if isinstance(verdict, dict) else None
    return result, (policy if isinstance(policy, dict) else None)


def _recorded_settings(policy, path: str):
    """``(scale_tolerance, ignore)`` of a recorded policy, each None when not recorded."""
    from ..compare.thresholds import check_scale_tolerance
    from ..errors import DumpFormatError

    scale = ignore = None
    if policy is not None and "scale_tolerance" in policy:
        try:
            scale = ("recorded", check_scale_tolerance(policy["scale_tolerance"]))
        except ConfigError as exc:
            raise DumpFormatError(path, f"recorded policy: scale_tolerance: "
                                        f"{exc.problem}") from None
    if policy is not None and "ignore" in policy:
        ignore = policy["ignore"]
        if not isinstance(ignore, list) or not all(isinstance(i, str) for i in ignore):
            raise DumpFormatError(path, "recorded policy: ignore is not a list of op names")
    return scale, ignore


def _recorded_thresholds(policy, path: str):
    """``(default Threshold or None, {name: Threshold})`` of a recorded policy: without them
    judge passed a compare.json whose test had failed at its own threshold and per_op (a docs
    trial: "accuracy PASSED: 5 tensors meet cosine >= 0.95" of a test judged at 0.99)."""
    from ..compare.thresholds import Threshold
    from ..errors import DumpFormatError

    if policy is None:
        return None, {}
    try:
        default = Threshold.from_dict(policy["default"]) if policy.get("default") else None
        per_op = {str(k): Threshold.from_dict(t) for k, t in policy.get("per_op") or ()}
    except (ConfigError, KeyError, TypeError, ValueError) as exc:
        raise DumpFormatError(path, f"recorded policy: thresholds: {exc}") from None
    return default, per_op


def _run_judge(args: argparse.Namespace) -> int:
    from ..compare.thresholds import Threshold

    scale_tolerance = scale_tolerance_arg(args.scale_tolerance)  # before reading the file
    result, policy = _load_judged(args.result)
    taken = []  # what the recorded policy set that the user did not (and not as the default)
    recorded_default, recorded_per_op = _recorded_thresholds(policy, args.result)
    if args.no_recorded_policy:
        recorded_default, recorded_per_op = None, {}
    if recorded_default is not None and args.metric in (None, recorded_default.metric):
        # the recorded metric unless another is given (a --threshold alone is for it: a review
        # found --threshold 0.01 of a kl result judged as cosine >= 0.01), its threshold unless
        # one is given
        given = args.threshold is not None
        args.metric = recorded_default.metric
        if not given:
            args.threshold = recorded_default.value
        if recorded_default.metric != DEFAULT_METRIC or (
                not given and recorded_default != Threshold(DEFAULT_THRESHOLD, DEFAULT_METRIC)):
            shown = (recorded_default.describe() if not given
                     else f"metric {recorded_default.metric}")
            taken.append(f"{'threshold ' if not given else ''}{shown} (--threshold/--metric)")
    resolve_threshold(args)
    if args.per_op or not recorded_per_op:
        recorded_per_op = {}
    else:
        taken.append("per_op " + ", ".join(f"{k}: {t.describe()}"
                                           for k, t in recorded_per_op.items()) + " (--per-op)")
    recorded_scale, recorded_ignore = _recorded_settings(policy, args.result)
    if args.no_recorded_policy:
        recorded_scale, recorded_ignore = None, ()
    if args.scale_tolerance is None and recorded_scale is not None:
        scale_tolerance = recorded_scale[1]
        if scale_tolerance != DEFAULT_SCALE_TOLERANCE:
            taken.append("scale guard " + ("off" if scale_tolerance is None else
                                           f"{1 / scale_tolerance:.3g}-{scale_tolerance:g}x")
                         + " (--scale-tolerance)")
    if args.ignore or not recorded_ignore:
        recorded_ignore = ()
    else:
        taken.append(f"ignore {recorded_ignore!r} (--ignore)")
    note = (f"judged with the policy recorded in {args.result}: {'; '.join(taken)}; pass the "
            "option, or --no-recorded-policy, to judge otherwise") if taken else ""
    if result.older_rules:  # judged as written, which a comparison made now would not be
        older = (f"{args.result}: {result.older_rules}; compare the dumps again to judge by "
                 "today's rules")
        note = f"{note}\n{older}" if note else older
    stale = stale_golden_note(result, result.golden_root)  # a stored golden of an older format
    from .golden_source import saved_source  # the model and inputs its diagnose command names

    result.meta["diagnose"] = saved_source(result.meta, result.rows)
    note = "\n".join(n for n in (note, stale) if n)
    return judge_and_report(result, args, scale_tolerance=scale_tolerance,
                            recorded_ignore=recorded_ignore, recorded_per_op=recorded_per_op,
                            note=note)


add_command(Command("judge",
                    "judge a saved JSON result again under other thresholds (no dumps read)",
                    _configure_judge, _run_judge))
