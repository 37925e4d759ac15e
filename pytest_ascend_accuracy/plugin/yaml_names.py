"""The names a YAML suite gives, checked at collection, and the suite key of an error raised
while one of its items runs.

- ``per_op`` and ``ignore`` entries name ops of the model (``graph.op_catalogue``: node names,
  globs matching one, ``OP:output:N``). A model's own entries must name ops of that model. An
  entry of ``defaults:`` applies to the models with an op it names and to no other (a shared
  ``ignore: ["*Shape*"]`` is for the models that have such ops); one naming an op of no model
  of the suite is a typo, refused at ``defaults.per_op`` / ``defaults.ignore``. Checked before
  anything runs, for the accuracy items and the dataset items alike (a dataset item found a
  misspelled name only when a failing check traced its first flipped sample, and then its
  configuration error replaced the failure).
- ``extra`` ATC options of a mode are refused as ``ascend_model(**options)`` refuses them
  (``setup_checks``), in the YAML's words; ``dataset.output`` names an output of the model.
- ``CaseKeys``: where an item's settings are written, so that an error raised while it runs
  (a per_op/ignore entry that judges nothing, a dataset metric its output cannot serve) names
  the file and key as collection errors do.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, List, Mapping, Optional, Tuple

from ..errors import ConfigError

#: the suite keys holding op names, and how their entries are called in errors
NAME_KEYS = (("per_op", "per_op entry"), ("ignore", "ignore entry"))


@dataclass(frozen=True)
class CaseKeys:
    """Where one item's settings are written in its suite file."""

    #: ``models[0]``
    entry: str
    #: (what, entry, key): ``("ignore", "*Shape*", "defaults.ignore")``
    names: Tuple[Tuple[str, str, str], ...] = ()

    def keyed(self, exc: ConfigError, shown_file: str,
              labels: Optional[str] = None) -> Optional[ConfigError]:
        """``exc`` (raised while the item ran) with the suite file and key as its ``where``,
        or None when it is not about a setting of the suite; ``labels``: the labels file as
        its errors name it."""
        for what, name, key in self.names:
            if exc.problem.startswith(f"{what} entry {name!r}"):
                return ConfigError(f"{shown_file}: {key}", exc.problem)
        where = exc.where or ""
        from .dataset_check import YAML_KEYS

        if where in YAML_KEYS:
            return ConfigError(f"{shown_file}: {self.entry}.dataset.{where}", exc.problem)
        if labels and (where == labels or where.startswith(f"{labels} ")):
            return ConfigError(f"{shown_file}: {self.entry}.dataset.labels", str(exc))
        return None


class SuiteNames:
    """The per_op and ignore entries of one suite, checked model by model (module doc)."""

    def __init__(self, where: str, defaults: Mapping):
        self.where = where
        self.defaults = {what: _names(defaults.get(what)) for what, _ in NAME_KEYS}
        self.matched: Dict[str, set] = {what: set() for what, _ in NAME_KEYS}
        self.labels: List[str] = []
        self.all_ops: List[str] = []
        self.unread = False

    def for_model(self, model, entry: Mapping, at: str) -> Tuple[Dict[str, List[str]], CaseKeys]:
        """({what: the defaults' entries that apply to ``model``, a ``yaml_model.EntryModel``},
        its ``CaseKeys``); raises for an entry of the model's own naming none of its ops."""
        own = {what: _names(entry.get(what)) for what, _ in NAME_KEYS}
        index = at.rpartition(": ")[2]
        names = [(what, n, f"{index}.{what}") for what, _ in NAME_KEYS for n in own[what]]
        names += [(what, n, f"defaults.{what}") for what, _ in NAME_KEYS
                  for n in self.defaults[what] if n not in own[what]]
        keys = CaseKeys(index, tuple(names))
        if not names:  # nothing to check: the model is not read
            return {what: [] for what, _ in NAME_KEYS}, keys
        ops = model.ops
        if ops is None:  # a model we cannot read: running it says so
            self.unread = True
            return dict(self.defaults), keys
        if ops.label not in self.labels:
            self.labels.append(ops.label)
            self.all_ops.extend(ops.names)
        applied = {}
        for what, called in NAME_KEYS:
            ops.check_names(own[what], called, f"{at}.{what}")
            applied[what] = []
            for name in self.defaults[what]:
                try:
                    ops.check_names([name], called, None)
                except ConfigError:
                    continue  # names no op of this model: a shared entry for the others
                applied[what].append(name)
                self.matched[what].add(name)
        return applied, keys

    def finish(self) -> None:
        """Refuse a defaults entry that named an op of no model of the suite."""
        if self.unread:
            return
        from ..graph.op_catalogue import ModelOps

        ops = ModelOps("suite", tuple(dict.fromkeys(self.all_ops)), ())
        for what, called in NAME_KEYS:
            for name in self.defaults[what]:
                if name in self.matched[what]:
                    continue
                glob = " (a glob)" if any(c in name for c in "*?[") else ""
                near = ops.closest(name)
                raise ConfigError(
                    f"{self.where}: defaults.{what}",
                    f"{called} {name!r}{glob} names no op of any model of this suite "
                    f"({', '.join(repr(lb) for lb in self.labels)}); an entry of defaults applies "
                    f"to the models with an op it names"
                    + ("; closest: " + ", ".join(repr(n) for n in near) if near else ""))


def _names(value) -> List[str]:
    """The op names of a ``per_op`` mapping or an ``ignore`` list (validated elsewhere)."""
    if isinstance(value, Mapping):
        return [str(k) for k in value]
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value]
    return []


def check_mode_extra(mode, at: str) -> None:
    """The ``extra`` ATC options of a YAML mode (``at``: its key, ``models[0].modes[1]``),
    refused at collection as ``ascend_model`` refuses them when it converts, in YAML words."""
    import difflib

    from ..core.modes import MODE_FIELD_OPTIONS, own_field_advice
    from ..core.atc_option_check import NEUTRAL_OPTIONS, check_atc_options

    # (an option the mode's own fields set never reaches here: Mode refuses it, saying what to
    # write instead)
    for key, value in getattr(mode, "extra", ()) or ():
        name = str(key).lstrip("-")
        where = f"{at}.extra.{key}"
        if name == "insert_op_conf":
            raise ConfigError(where, "the AIPP file is the model's aipp: key (the inputs are then "
                                     "raw images, pre-processed as the device does), not an extra "
                                     "ATC option")
        if name in NEUTRAL_OPTIONS:
            check_atc_options({name: value}, where)  # a value ATC takes
            continue
        near = difflib.get_close_matches(name, list(MODE_FIELD_OPTIONS), n=1, cutoff=0.6)
        if near:
            rest = tuple(p for p in mode.extra if p[0] != key)
            meant = own_field_advice(replace(mode, extra=rest), [(near[0], value)])
            raise ConfigError(where, f"unknown ATC option {name!r}; closest: {near[0]!r}, which "
                                     f"is set by the mode itself: {meant} (extra takes the "
                                     f"numerically neutral options: {', '.join(NEUTRAL_OPTIONS)})")
        try:
            check_atc_options({name: value}, where)
        except ConfigError as exc:
            raise ConfigError(where, exc.problem) from None
    check_atc_options(getattr(mode, "extra", ()) or (), f"{at}.extra")  # one given twice


def check_yaml_mode_names(model, modes, at: str) -> None:
    """The ``keep_dtype`` entries of a model's YAML modes (``at``: the modes' key,
    ``models[0].modes`` or ``defaults.modes``) name ops or op types of ``model``, refused at
    collection under their key as ``ascend_model`` refuses them when it converts (that error
    named the test id, and only once the item ran). A model that cannot be read is left to
    the run, which says why. ``model``: a ``yaml_model.EntryModel``."""
    kept = [(k, mode.keep_dtype) for k, mode in enumerate(modes) if mode.keep_dtype]
    if not kept or model.ops is None:
        return
    ops = model.ops
    for k, entries in kept:
        ops.check_keep_dtype(entries, f"{at}[{k}].keep_dtype")


def check_dataset_output(model, dataset: Mapping, at: str) -> None:
    """``dataset.output`` names an output of ``model``, and a model of several outputs says
    which one a built-in metric reads (``at``: ``file: models[0].dataset``); an unreadable
    model (``yaml_model.EntryModel``) is left to the run to refuse."""
    from .dataset_check import YAML_METRICS

    if dataset.get("metric") not in YAML_METRICS or model.graph is None:
        return
    names = [o.name for o in model.graph.graph.output]
    output = dataset.get("output")
    if output is None and len(names) > 1:
        raise ConfigError(f"{at}.output", f"the model has {len(names)} outputs "
                                          f"({', '.join(names)}): say which one metric "
                                          f"{dataset['metric']} reads, e.g. output: {names[0]}")
    if output is not None and output not in names:
        from ..dataset.scoring import pick_output

        pick_output(names, output, f"{at}.output")
