"""Judging a comparison against its accuracy baseline, and when the baseline file is written.

``check_baseline(result, path, header=..., inputs=..., max_drop=...)`` compares the metrics of a
``CompareResult`` with the baseline at ``path``:

* **missing** baseline -> written from this run; the outcome fails and names the file (with
  ``regen="all"`` it passes);
* the **environment changed** (toolkit, SoC, ATC arguments, backend, mode, or the inputs'
  seed/shapes/dtypes/bytes) -> "rebaseline required", listing each change (the backend first;
  the fields one backend alone records, the emulator's ``faults`` and ``overflow``, are no
  change of their own against another backend), and no op-by-op judging: values recorded
  under another toolkit are not comparable;
* otherwise every baseline line is judged: **regressed** when its cosine (the one the threshold
  judges; a version 1 file's, msaccucmp's plain one, against the run's plain one, as it was
  recorded: see ``baseline.file``) dropped by more than ``max_drop``, its rel_l2 rose by more
  than ``max_rel_l2_rise`` (when given; of the lines ``rel_l2_lines`` names, when given: the
  plugin gives those a threshold judges by rel_l2, ``baseline.metrics``), its NaN or Inf count
  rose, it is no longer compared, or it disappeared from the run. The message lists
  ``op: old -> new`` lines in graph order. Ops the baseline does not know are noted, not failed.

Both sides are rounded the same way before judging (see ``baseline_file``), so a baseline just
written always passes against the run that wrote it, and a drop of exactly ``max_drop`` passes.

Rewriting follows one ``core.regen.Regen`` (the plain strings work too): ``Regen.NONE`` never
rewrites an existing baseline; ``Regen.FAILING`` rewrites it only when the check fails (the
outcome still fails); ``Regen.ALL`` rewrites it always and passes.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Collection, List, Mapping, Optional, Sequence, Tuple

from .env import backend_only_keys, normalise_environment
from .former_draws import former_draw_notes
from ..core.path_lock import PathLocked
from ..core.regen import Regen
from .file import (PLAIN_REL_L2_VERSION, VERSION, Baseline, BaselineWriteError, InputSpec,
                   OpBaseline, ops_from_result, read_baseline, round_cosine, round_error)
from .writing import BaselineRefused, shown_info, writable, write_baseline
from .older_versions import (older_version_note, rel_judged_lines, version_on_disk,
                             written_lines)
from ..errors import ConfigError

REGEN_CHOICES = tuple(r.value for r in Regen)  # ("none", "failing", "all")
#: outcome statuses
PASSED, REGRESSED, REBASELINE, MISSING, UNREADABLE, REWRITTEN = (
    "passed", "regressed", "rebaseline required", "missing", "unreadable", "rewritten")
#: how many change lines a message shows before "+N more"
MAX_LINES = 20
_EPS = 1e-9  # float noise allowance on rounded values


@dataclass(frozen=True)
class OpChange:
    """One way one operator differs from its baseline line."""

    label: str  # op name (with ``:slot`` unless output:0)
    metric: str  # cosine | rel_l2 | nan | inf | compared | missing | absent
    old: object
    new: object
    limit: Optional[float] = None

    def line(self) -> str:
        if self.metric == "missing":
            return f"{self.label}: in the baseline, missing from this run"
        if self.metric == "absent":
            return (f"{self.label}: compared in this run, absent from the baseline file (the "
                    f"model is the one it recorded: the file was edited or cut)")
        if self.metric == "compared":
            return f"{self.label}: compared -> not compared"
        if self.metric in ("nan", "inf"):
            what = "NaN" if self.metric == "nan" else "Inf"
            return f"{self.label}: {what} count {self.old} -> {self.new}"
        if self.metric == "cosine":
            delta = "" if math.isnan(self.new) else f" (drop {_num(self.old - self.new)} > {self.limit:g})"
            return f"{self.label}: cosine {_num(self.old)} -> {_num(self.new)}{delta}"
        delta = "" if math.isnan(self.new) else f" (rise {_num(self.new - self.old, err=True)} > {self.limit:g})"
        return (f"{self.label}: {self.metric} {_num(self.old, err=True)} -> "
                f"{_num(self.new, err=True)}{delta}")


def _num(v: float, err: bool = False) -> str:
    if math.isnan(v):
        return "NaN"
    return f"{v:.3e}" if err else f"{v:.6f}"


@dataclass(frozen=True)
class Judgement:
    """The op-by-op result of judging current lines against baseline lines."""

    regressions: Tuple[OpChange, ...]
    new_ops: Tuple[str, ...]  # labels not in the baseline
    improved: Tuple[str, ...]  # labels whose cosine rose by more than max_drop
    judged: int
    #: labels compared now whose baseline line holds no value to judge against (cosine NaN,
    #: or not compared when recorded): not judged, and said so (``BaselineGapWarning``)
    unjudged: Tuple[str, ...] = ()


def judge_ops(baseline: Sequence[OpBaseline], current: Sequence[OpBaseline], *,
              max_drop: float, max_rel_l2_rise: Optional[float] = None,
              new_fail: bool = False,
              rel_l2_lines: Optional[Collection[Tuple[str, str]]] = None) -> Judgement:
    """Judge rounded ``current`` lines against ``baseline`` lines (pure; no files).
    ``new_fail``: a current line the baseline lacks is a regression, not a note (the model is
    the one the baseline recorded, so the file itself lost it: edited or cut).
    ``rel_l2_lines``: the ``(op, slot)`` keys whose rel_l2 rise ``max_rel_l2_rise`` judges
    (those a threshold judges by rel_l2, ``baseline.metrics``); None: every line. A line whose
    rel_l2 fell by more than that counts as improved, as one whose cosine rose."""
    base = {op.key: op for op in baseline}
    seen = set()
    regressions: List[OpChange] = []
    new_ops, improved, unjudged = [], [], []
    for cur in current:
        old = base.get(cur.key)
        if old is None:
            if new_fail:
                regressions.append(OpChange(cur.label, "absent", "absent", "present"))
            else:
                new_ops.append(cur.label)
            continue
        seen.add(cur.key)
        rise = max_rel_l2_rise if rel_l2_lines is None or cur.key in rel_l2_lines else None
        regressions += _op_changes(old, cur, max_drop, rise)
        if old.compared and cur.compared and (
                cur.cosine - old.cosine > max_drop + _EPS
                or rise is not None and old.rel_l2 - cur.rel_l2 > rise + _EPS):
            improved.append(cur.label)
        if cur.compared and not math.isnan(cur.cosine) and (not old.compared
                                                             or math.isnan(old.cosine)):
            unjudged.append(cur.label)
    regressions += [OpChange(op.label, "missing", "present", "missing")
                    for op in baseline if op.key not in seen]
    return Judgement(tuple(regressions), tuple(new_ops), tuple(improved), len(seen),
                     tuple(unjudged))


def _op_changes(old: OpBaseline, cur: OpBaseline, max_drop: float,
                max_rise: Optional[float]) -> List[OpChange]:
    if not old.compared:
        return []
    if not cur.compared:
        return [OpChange(cur.label, "compared", "compared", "not compared")]
    out = []
    if not math.isnan(old.cosine) and (math.isnan(cur.cosine)
                                      or old.cosine - cur.cosine > max_drop + _EPS):
        out.append(OpChange(cur.label, "cosine", old.cosine, cur.cosine, max_drop))
    if max_rise is not None and not math.isnan(old.rel_l2) and (
            math.isnan(cur.rel_l2) or cur.rel_l2 - old.rel_l2 > max_rise + _EPS):
        out.append(OpChange(cur.label, "rel_l2", old.rel_l2, cur.rel_l2, max_rise))
    if cur.nan > old.nan:
        out.append(OpChange(cur.label, "nan", old.nan, cur.nan))
    if cur.inf > old.inf:
        out.append(OpChange(cur.label, "inf", old.inf, cur.inf))
    return out


def setup_changes(old: Baseline, environment: Mapping[str, object], inputs: InputSpec
                  ) -> Tuple[Tuple[str, object, object], ...]:
    """(what, old, new) for every environment key and input property that differs, the backend
    first; a key only one of two differing backends records is no change of its own
    (``env.backend_only_keys``)."""
    changes = []
    own = backend_only_keys(old.environment, environment)
    for key in sorted(set(old.environment) | set(environment), key=lambda k: (k != "backend", k)):
        if key in own:
            continue
        a, b = old.environment.get(key), environment.get(key)
        if a != b:
            changes.append((key, a, b))
    o, n = old.inputs, inputs
    for what, a, b in (("inputs.seed", o.seed, n.seed), ("inputs.stored", o.stored, n.stored),
                       ("inputs.input_shape", _shape_map(o), _shape_map(n))):
        if a != b:
            changes.append((what, a, b))
    old_t = {t.name: t for t in o.tensors}
    new_t = {t.name: t for t in n.tensors}
    for name in sorted(set(old_t) | set(new_t)):
        a, b = old_t.get(name), new_t.get(name)
        if a is None or b is None:
            changes.append((f"inputs.{name}", "present" if a else "absent",
                            "present" if b else "absent"))
            continue
        for attr in ("dtype", "shape", "sha256"):
            va, vb = getattr(a, attr), getattr(b, attr)
            if attr == "shape":
                va, vb = list(va), list(vb)
            if va != vb:
                changes.append((f"inputs.{name}.{attr}", va, vb))
    return tuple(changes)


def _shape_map(spec: InputSpec):
    return None if spec.input_shape is None else {n: list(d) for n, d in spec.input_shape}


@dataclass(frozen=True)
class BaselineOutcome:
    """What ``check_baseline`` found and did. Truthy when it passed."""

    status: str
    passed: bool
    path: Path
    message: str
    written: Optional[Path] = None  # the baseline file written by this check, if any
    regressions: Tuple[OpChange, ...] = ()
    changes: Tuple[Tuple[str, object, object], ...] = ()  # environment / inputs changes
    new_ops: Tuple[str, ...] = ()
    improved: Tuple[str, ...] = ()
    #: on a pass: the note that the model file changed since the baseline was recorded, else ""
    model_changed: str = ""
    #: operator lines compared now that the baseline holds no value for (``Judgement.unjudged``)
    unjudged: Tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.passed


class BaselineGapWarning(UserWarning):
    """A baseline check passed, but some operators compared now have no value in the baseline
    to be judged against (cosine NaN, or not compared, when it was recorded): they went
    unjudged, which is said instead of passing silently."""


class ModelChangedWarning(UserWarning):
    """A baseline check passed, but the model file's sha256 differs from the recorded one: the
    pass may hide the model's own change (the plugin warns instead of passing silently)."""


def check_baseline(result, path, *, header: Mapping[str, object], inputs,
                   max_drop: float = 0.002, max_rel_l2_rise: Optional[float] = None,
                   regen=Regen.NONE, info: Optional[Mapping[str, object]] = None,
                   shown: Optional[str] = None,
                   rel_l2_lines: Optional[Collection[Tuple[str, str]]] = None,
                   on_written: Optional[Callable[[Path], None]] = None) -> BaselineOutcome:
    """Judge ``result`` (a ``CompareResult``) against the baseline at ``path``; see the module
    docstring. ``header``: the environment (``backend``, ``toolkit_version``, ``soc_version``,
    ``atc_args`` and any extra plain keys, see ``baseline.environment_for``). ``inputs``: the
    ``BaselineInputs`` (or its ``InputSpec``) the run used; unseeded inputs are refused.
    ``info``: shown in the file and in messages, never judged (model name, model sha256).
    ``shown``: how messages spell ``path`` (the plugin: relative to where pytest ran).
    ``max_rel_l2_rise`` judges the rel_l2 of the ``rel_l2_lines`` keys (``judge_ops``).
    ``on_written(path)``: told, still under the baseline's lock, when this run wrote a baseline
    that was missing or unreadable (not one ``--accuracy-regen`` rewrote on request)."""
    path = Path(path)
    shown = shown if shown is not None else os.fspath(path)
    where = f"baseline {shown}"
    regen = Regen.parse(regen, where)
    max_drop = _limit(max_drop, "max_drop", where)
    if max_rel_l2_rise is not None:
        max_rel_l2_rise = _limit(max_rel_l2_rise, "max_rel_l2_rise", where)
    spec = _spec(inputs, where)
    env = normalise_environment(header, where)
    info_d = shown_info(normalise_environment(info or {}, f"{where} info", required=()))
    lines = written_lines(result)
    version, current = next(iter(lines.items()))  # the version written, its lines
    fresh = Baseline(environment=env, inputs=spec, ops=current, info=info_d, version=version,
                     rel_l2_as_judged=version == PLAIN_REL_L2_VERSION)  # its rel_l2s: judged

    def plain(version: int):  # this run's lines as a file of ``version`` records them
        return lines[version] if version in lines else ops_from_result(result, version=version)
    # one process at a time reads, judges and rewrites a baseline (and its stored inputs):
    # xdist workers whose tests share one recorded it twice at once, half of each
    with PathLocked(path, "baseline"):
        outcome = _judge(path, fresh, regen, max_drop, max_rel_l2_rise, shown, plain,
                         rel_l2_lines)
        if (on_written is not None and outcome.written is not None
                and outcome.status in (MISSING, UNREADABLE)):  # (not a regen of a regression)
            on_written(path)  # (told after the lock, another worker could pass against it)
        return outcome


def _judge(path: Path, fresh: Baseline, regen: Regen, max_drop: float,
           max_rel_l2_rise: Optional[float], shown: str,
           plain=None, rel_l2_lines=None) -> BaselineOutcome:
    """``check_baseline`` under the baseline's lock; messages name the file as ``shown``.
    ``plain(version)``: this run's lines as a file of an older version records them
    (msaccucmp's plain cosine in version 1, plain rel_l2 in versions 1 and 2), judged against
    such a file."""
    env, spec, info_d = fresh.environment, fresh.inputs, fresh.info
    if regen.before_use:  # (the file is not read here: its version line alone)
        fresh = _never_older(fresh, version_on_disk(path), plain)
        _write(path, fresh, shown)
        return BaselineOutcome(REWRITTEN, True, path, (
            f"accuracy baseline {shown} rewritten (--accuracy-regen-all): "
            f"{_count(len(fresh.ops), 'operator line')}"), written=path)
    if not path.exists():
        _write(path, fresh, shown)
        return BaselineOutcome(MISSING, False, path, (
            f"accuracy baseline {shown} did not exist: wrote it from this run "
            f"({_count(len(fresh.ops), 'operator line')}, backend {env.get('backend')}).\n"
            "Check it in and run the test again to compare against it."), written=path)
    try:
        old = read_baseline(path, shown=shown)
    except ConfigError as exc:
        if not regen.after_failure:
            raise
        _write(path, _never_older(fresh, version_on_disk(path), plain), shown)
        return BaselineOutcome(UNREADABLE, False, path, (
            f"accuracy baseline {shown} could not be read ({exc.problem}); rewritten from this "
            "run (--accuracy-regen). The test still fails."), written=path)
    fresh = _never_older(fresh, old.version, plain)  # (the version read: no second read)
    current = fresh.ops

    changes = setup_changes(old, env, spec)
    if changes:
        lines = [f"accuracy baseline REBASELINE REQUIRED: {shown} was recorded under another "
                 f"setup ({_count(len(changes), 'change')})"]
        lines += [f"  {change_line(c)}" for c in changes]
        lines += former_draw_notes(  # the same seed, drawn differently
            old.inputs, spec, same_model=bool(old.info.get("model_sha256"))
            and old.info.get("model_sha256") == info_d.get("model_sha256"),
            inputs_only=all(what.startswith("inputs.") for what, _, _ in changes))
        lines.append("Operators were not judged one by one: values recorded under another "
                     "toolkit, SoC, ATC arguments, backend or inputs are not comparable.")
        return _finish(REBASELINE, path, shown, lines, fresh, regen, changes=changes,
                       hint="To record a new baseline: rerun with --accuracy-regen "
                            "(or --accuracy-regen-all).")
    if old.inputs.stored:  # this run's inputs are the recorded ones: are its copies?
        from .inputs import inputs_dir, stored_inputs_problem

        why = stored_inputs_problem(path, old.inputs)
        if why is not None:
            problem = (f"the inputs it stores ({shown_beside(shown, inputs_dir(path))}): "
                       f"{why}; nobody can rerun it on them")
            if not regen.after_failure:
                raise ConfigError(shown, problem)
            _write(path, fresh, shown)
            return BaselineOutcome(UNREADABLE, False, path, (
                f"accuracy baseline {shown}: {problem}; rewritten from this run with its "
                "inputs (--accuracy-regen). The test still fails."), written=path)

    same_model = bool(old.info.get("model_sha256")) and \
        old.info.get("model_sha256") == info_d.get("model_sha256")
    # the model the baseline recorded: a tensor it does not list was edited or cut out of the
    # file (an emptied ops list checked nothing, silently)
    # this run's lines as the file records them: a marked version 2 file holds version 3's
    judged = plain(old.judged_as) if old.judged_as != fresh.judged_as and plain else current
    j = judge_ops(old.ops, judged, max_drop=max_drop, max_rel_l2_rise=max_rel_l2_rise,
                  new_fail=same_model, rel_l2_lines=rel_l2_lines)
    notes = _notes(old, info_d, j, max_drop) + older_version_note(
        old, current, judged, shown, rel_judged_lines(max_rel_l2_rise, rel_l2_lines, current),
        written=fresh.version)
    if not j.regressions:
        text = (f"accuracy baseline passed: {_count(j.judged, 'operator line')} within "
                f"max_drop={max_drop:g} of {shown}")
        return BaselineOutcome(PASSED, True, path, "\n".join([text] + notes),
                               new_ops=j.new_ops, improved=j.improved,
                               model_changed="".join(_model_changed(old, info_d, passed=True)),
                               unjudged=j.unjudged)
    ops = sorted({c.label for c in j.regressions}, key=[c.label for c in j.regressions].index)
    rules = f"cosine drop > {max_drop:g}"
    if max_rel_l2_rise is not None:
        rules += f", rel_l2 rise > {max_rel_l2_rise:g}"
    of = (f"{len(ops)} of {_count(len(old.ops), 'baselined operator line')}"
          if len(ops) <= len(old.ops) else _count(len(ops), "operator line"))
    lines = [f"accuracy baseline REGRESSED: {of} got worse than {shown} allows "
             f"({rules}, more NaN/Inf, no longer compared, missing, or absent from the "
             f"file)"]
    lines += _model_changed(old, info_d)
    lines += ["  " + c.line() for c in j.regressions[:MAX_LINES]]
    if len(j.regressions) > MAX_LINES:
        lines.append(f"  (+{len(j.regressions) - MAX_LINES} more)")
    lines += notes
    return _finish(REGRESSED, path, shown, lines, fresh, regen, regressions=j.regressions,
                   new_ops=j.new_ops, improved=j.improved,
                   hint="To accept these values: rerun with --accuracy-regen (rewrites failing "
                        "baselines) or --accuracy-regen-all.")


def _finish(status, path, shown, lines, fresh, regen, *, hint, **fields) -> BaselineOutcome:
    written = None
    if regen.after_failure:
        _write(path, fresh, shown)
        written = path
        lines.append("Baseline rewritten with this run's values (--accuracy-regen); the test "
                     "still fails.")
    else:
        lines.append(hint)
    return BaselineOutcome(status, False, path, "\n".join(lines), written=written, **fields)


def _notes(old: Baseline, info, j: Judgement, max_drop: float) -> List[str]:
    notes = []
    if j.new_ops:
        shown = ", ".join(j.new_ops[:5]) + (f", +{len(j.new_ops) - 5} more" if len(j.new_ops) > 5 else "")
        notes.append(f"note: {_count(len(j.new_ops), 'operator line')} not in the baseline "
                     f"(not judged): {shown}")
    if j.improved:
        notes.append(f"note: {_count(len(j.improved), 'operator line')} improved by more than "
                     f"{max_drop:g} (record them with --accuracy-regen-all): "
                     + ", ".join(j.improved[:5]))
    notes += _model_changed(old, info, passed=True) if not j.regressions else []
    changed = [k for k in sorted(info) if old.info.get(k) != info.get(k) and k != "model_sha256"]
    if changed:
        notes.append("note: changed since the baseline (not judged): " + "; ".join(
            f"{k} {_show(old.info.get(k))} -> {_show(info.get(k))}" for k in changed))
    return notes


def _model_changed(old: Baseline, info, passed: bool = False) -> List[str]:
    """The line naming an edited model (its recorded sha256 differs), or none. A passing
    baseline is rewritten by --accuracy-regen-all only (--accuracy-regen rewrites failing ones)."""
    a, b = old.info.get("model_sha256"), info.get("model_sha256")
    if not a or not b or a == b:
        return []
    return [f"note: the model file changed since this baseline was recorded (sha256 {str(a)[:12]}"
            f"... -> {str(b)[:12]}...): differences may be the model's own; if the change is "
            f"intended, record a new baseline with --accuracy-regen{'-all' if passed else ''}"]


def shown_beside(shown: str, path: Path) -> str:
    """``path`` (next to the baseline) spelled as ``shown`` spells the baseline."""
    return os.path.join(os.path.dirname(shown), path.name)


def _never_older(fresh: Baseline, on_disk: Optional[int], plain) -> Baseline:
    """``fresh`` as version 3 where the file it replaces is version 3 (``on_disk``): a rewrite
    never turns it into version 2 (the last of two tests sharing it would, a review)."""
    if fresh.version < VERSION and plain is not None and on_disk == VERSION:
        return replace(fresh, ops=plain(VERSION), version=VERSION, rel_l2_as_judged=False)
    return fresh


def _write(path: Path, baseline: Baseline, shown: str) -> None:
    """Write the baseline (and its stored inputs); a failed write names the file as ``shown``
    spells the baseline (the plugin: relative to where pytest ran), not by its absolute path."""
    try:
        baseline = writable(path, baseline)  # refused before anything is written
        if baseline.inputs.stored:
            from .inputs import write_stored_inputs

            write_stored_inputs(path, baseline.inputs)
        write_baseline(path, baseline)
    except BaselineRefused as exc:  # named as shown, as a failed write is
        raise BaselineRefused(shown, exc.problem) from None
    except BaselineWriteError as exc:
        if exc.path == os.fspath(path):
            named = shown
        else:  # the stored inputs' directory beside it
            named = os.path.join(os.path.dirname(shown), os.path.basename(exc.path))
        raise BaselineWriteError(named, exc.problem, exc.errno) from exc.__cause__


def _spec(inputs, where: str) -> InputSpec:
    spec = getattr(inputs, "spec", inputs)
    if not isinstance(spec, InputSpec):
        raise ConfigError(where, "inputs must be the BaselineInputs from inputs_for_baseline(...) "
                                 "(or an InputSpec), so the baseline can record how to remake "
                                 f"them; got {type(inputs).__name__}")
    if spec.seed is None and not spec.stored:
        raise ConfigError(where, "random unseeded inputs are refused: give a seed or store the "
                                 "arrays (inputs_for_baseline(model, path, seed=0))")
    if spec.stored and spec.arrays is None:
        raise ConfigError(where, "stored inputs need their arrays (use the spec made from them)")
    return spec


def _limit(value, name: str, where: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ConfigError(where, f"{name} must be a number, got {value!r}") from None
    if math.isnan(v) or v < 0:
        raise ConfigError(where, f"{name} must be >= 0, got {value!r}")
    return v


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def change_line(change: Tuple[str, object, object]) -> str:
    """``inputs.x.sha256: 'ab..' -> 'cd..'``: one of a ``BaselineOutcome``'s ``changes``."""
    what, a, b = change
    return f"{what}: {_show(a)} -> {_show(b)}"


def _show(value) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, float):
        return _num(value)
    return repr(value)


__all__ = ["check_baseline", "BaselineOutcome", "ModelChangedWarning", "OpChange", "Judgement",
           "judge_ops", "change_line",
           "setup_changes", "REGEN_CHOICES", "PASSED", "REGRESSED", "REBASELINE", "MISSING",
           "UNREADABLE", "REWRITTEN", "round_cosine", "round_error"]
