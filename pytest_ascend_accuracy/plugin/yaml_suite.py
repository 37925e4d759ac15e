"""YAML accuracy suites: files named ``accuracy*.yaml`` collected as tests.

```yaml
defaults:                      # optional; every key may also be set per model
  threshold: 0.95              # a number, or {mode name: number} (names of the suite's modes)
  metric: cosine
  inputs: {seed: 0}            # seeded generator (optional shapes: {input: [dims]}) or npy files
  modes: [default]
models:
  - name: mlp                  # optional, default: the model file's stem
    model: models/mlp.onnx     # relative to this file
    inputs: {x: data/x.npy}    # {input name: .npy file}
    input_shape: {x: [1, 16]}
    modes: [default, high_precision, {keep_dtype: [Add_1]}, {base: fusion_off, keep_dtype: [Mul_0]}]
    per_op: {Relu_2: 0.9}      # merged over the defaults' per_op
    ignore: [Softmax_5]        # added to the defaults' ignore
    golden: golden/mlp         # optional stored golden directory (regen flags apply)
    scale_tolerance: 3         # the scale guard (default 2; null: off): @accuracy(scale_tolerance=)
    dataset: {samples: data/val, labels: data/val.json, metric: top1, max_drop: 0.01}
                               # optional: one more item per mode, mlp-dataset[mode] (with aipp:
                               # it converts with the AIPP file; reference: feeds the reference)
    aipp: aipp/camera.cfg      # optional: convert with this AIPP file; inputs are then raw images
                               # (a seed makes random ones of its format and source size)
    reference: prep:preprocess # with aipp: MODULE:FN, the reference pre-processing of one image
```

Each model x mode is one test item ``file.yaml::name[mode]``. The file is read with
``yaml.SafeLoader`` under ``core.safe_yaml``'s bounds (an alias bomb fails fast) and
validated completely at collection; every problem is a ``ConfigError``
naming the file and the key (``accuracy.yaml: models[1].threshold: ...``), an error raised
while an item runs included (``yaml_names.CaseKeys``). ``inputs.shapes`` and ``input_shape``
combine, one input given two shapes is refused (``yaml_inputs``); op names are checked
against the models, a ``defaults:`` entry applying to the models with an op it names
(``yaml_names``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

import pytest

from ..errors import AscendAccuracyError, ConfigError, closest_text
from .marker_spec import (DEFAULT_SCALE_TOLERANCE, AccuracySpec, make_spec, validate_metric,
                          validate_modes, validate_per_op, validate_threshold)
from ..core.modes import Mode, resolve_mode
from ..core.unquoted_names import op_name_list
from .yaml_aipp_shape import dataset_handle, entry_shape
from .yaml_dataset_shape import first_sample_shape
from .yaml_defaults import defaults_per_op
from .yaml_model import EntryModel
from .yaml_inputs import (InputsSpec, check_input_files, combined_shapes, existing_file,
                          inputs_spelling, parse_inputs, shape_map)
from .yaml_names import (CaseKeys, SuiteNames, check_dataset_output, check_mode_extra,
                         check_yaml_mode_names)

TOP_KEYS = ("defaults", "models")
SETTING_KEYS = ("threshold", "metric", "per_op", "ignore", "modes", "inputs", "input_shape",
                "max_drop", "scale_tolerance")
MODEL_KEYS = ("name", "model", "golden", "dataset", "aipp", "reference") + SETTING_KEYS


@dataclass(frozen=True)
class SuiteCase:
    """One test: a model under one mode with its settings."""

    name: str
    model: Path
    mode: Mode
    spec: AccuracySpec
    inputs: InputsSpec
    input_shape: Optional[Dict[str, Tuple[int, ...]]] = None
    golden: Optional[Path] = None
    #: ``dataset:`` of the entry (``dataset_check.yaml_dataset``): a dataset check item
    dataset: Optional[Dict[str, Any]] = None
    #: ``aipp:`` (the AIPP file: inputs are raw images) and ``reference:`` (MODULE:FN, base dir)
    aipp: Optional[Path] = None
    reference: Optional[Tuple[str, str]] = None
    #: where its settings are written: errors raised while it runs name the key
    keys: Optional[CaseKeys] = None

    @property
    def test_name(self) -> str:
        return f"{self.name}{'-dataset' if self.dataset else ''}[{self.mode.name}]"


def load_suite(path, *, default_threshold: float = 0.95) -> List[SuiteCase]:
    """Read and validate a suite file; returns its cases in file order."""
    import yaml

    from ..core.safe_yaml import load_yaml

    path = Path(path)
    try:  # bounded: an alias bomb is refused before validation walks the document
        # a key given twice is refused: YAML keeps the last, so a second models: dropped
        # every entry above it from the run, silently
        data = load_yaml(path.read_text(encoding="utf-8"), str(path), unique_keys=True)
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(str(path), f"not valid YAML: {exc}") from None
    return parse_suite(data, path, default_threshold=default_threshold)


def parse_suite(data: Any, path: Path, *, default_threshold: float = 0.95) -> List[SuiteCase]:
    """Validate the loaded YAML document of ``path`` and build its cases."""
    where = str(path)
    if not isinstance(data, Mapping):
        raise ConfigError(where, "a suite is a mapping with a 'models' list at the top level")
    _no_unknown(data, TOP_KEYS, where, "")
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, Mapping):
        raise ConfigError(f"{where}: defaults", "must be a mapping")
    _no_unknown(defaults, SETTING_KEYS, where, "defaults.")
    models = data.get("models")
    if not isinstance(models, list) or not models:
        raise ConfigError(f"{where}: models", "must be a non-empty list of model entries")
    base_dir = path.parent
    cases: List[SuiteCase] = []
    seen = set()
    names = SuiteNames(where, defaults)
    read: Dict[str, EntryModel] = {}  # each model file read once, for all its entries
    for i, entry in enumerate(models):
        at = f"{where}: models[{i}]"
        if not isinstance(entry, Mapping):
            raise ConfigError(at, "each model entry is a mapping with at least 'model'")
        _no_unknown(entry, MODEL_KEYS, where, f"models[{i}].")
        for case in _cases(entry, defaults, base_dir, where, i, default_threshold, names, read):
            if case.test_name in seen:
                raise ConfigError(f"{at}.name", f"test {case.test_name} is defined twice")
            seen.add(case.test_name)
            cases.append(case)
    names.finish()  # a defaults per_op/ignore entry must name an op of some model
    _defaults_threshold_modes(defaults.get("threshold"), cases, f"{where}: defaults.threshold")
    return cases


def _defaults_threshold_modes(value, cases, at: str) -> None:
    """A key of the defaults' per-mode threshold map must name a mode of some model in the
    suite: a misspelled one (``defualt``) would otherwise be ignored silently."""
    if not isinstance(value, Mapping):
        return
    names = list(dict.fromkeys(c.mode.name for c in cases))
    for key in value:
        if key not in names:
            raise ConfigError(f"{at}.{key}", f"not a mode of any model in this suite "
                                             f"({', '.join(names)}){closest_text(key, names)}")


def _no_unknown(mapping: Mapping, known, where: str, prefix: str) -> None:
    for key in mapping:
        if key not in known:
            import difflib

            near = difflib.get_close_matches(str(key), list(known), n=2, cutoff=0.6)
            raise ConfigError(f"{where}: {prefix}{key}", "unknown key"
                              + (f"; closest: {', '.join(near)}" if near else "")
                              + f"; known: {', '.join(known)}")


def _cases(entry, defaults, base_dir: Path, where: str, index: int, default_threshold: float,
           names: SuiteNames, read: Dict[str, EntryModel]):
    at, dat = f"{where}: models[{index}]", f"{where}: defaults"
    model_rel = entry.get("model")
    if not isinstance(model_rel, str) or not model_rel:
        raise ConfigError(f"{at}.model", "required: the ONNX file, relative to the suite file")
    model = existing_file(base_dir, model_rel, f"{at}.model")
    onnx_model = read.setdefault(os.path.abspath(model), EntryModel(model))
    name = entry.get("name", model.stem)
    if not isinstance(name, str) or not name or any(c in name for c in "[]/:"):
        raise ConfigError(f"{at}.name", f"must be a plain name (no [ ] / :), got {name!r}")

    def setting(key, default=None):
        return entry[key] if key in entry else defaults.get(key, default)

    def key_at(key):  # the key a setting is read from: the entry's, else the defaults'
        return f"{at if key in entry or key not in defaults else dat}.{key}"

    modes = _modes(setting("modes", ["default"]), key_at("modes"))
    check_yaml_mode_names(onnx_model, modes, key_at("modes"))
    inputs_spelling(setting("inputs"), onnx_model, key_at("inputs"))
    inputs, gen_shapes = parse_inputs(setting("inputs", {"seed": 0}), base_dir, key_at("inputs"))
    input_shape = combined_shapes(shape_map(setting("input_shape"), key_at("input_shape")),
                                  key_at("input_shape"), gen_shapes, f"{key_at('inputs')}.shapes",
                                  onnx_model)
    base_ignore = op_name_list(defaults.get("ignore"), f"{dat}.ignore")
    own_ignore = op_name_list(entry.get("ignore"), f"{at}.ignore")
    golden = entry.get("golden")
    if golden is not None and (not isinstance(golden, str) or not golden):
        raise ConfigError(f"{at}.golden", "must be a path (a directory, relative to the suite file)")
    metric_at = f"{at}.metric" if "metric" in entry else f"{dat}.metric"
    metric = validate_metric(setting("metric", "cosine"), metric_at)
    defaults_metric = validate_metric(defaults.get("metric", "cosine"), f"{dat}.metric")
    per_op = defaults_per_op(defaults, dat, defaults_metric, metric)  # (in their metric)
    per_op.update(validate_per_op(entry.get("per_op"), f"{at}.per_op", metric, yaml=True))
    # names of ops: the model's own must be its ops; the defaults' apply where they name one
    applied, keys = names.for_model(onnx_model, entry, at)
    per_op = {k: v for k, v in per_op.items()
              if k in (entry.get("per_op") or {}) or k in applied["per_op"]}
    shared = [n for n in base_ignore if n in applied["ignore"]]
    ignore = shared + [n for n in own_ignore if n not in shared]
    # the defaults' threshold is one of the defaults' metric: a model of another metric gives
    # its own (a trial: defaults {threshold: 0.99} judged a rel_l2 model as rel_l2 <= 0.99)
    same_metric = metric == defaults_metric
    thresholds = _thresholds(defaults.get("threshold") if same_metric else None, None, metric,
                             f"{dat}.threshold")
    own = _thresholds(entry.get("threshold"), modes, metric, f"{at}.threshold")
    thresholds = own if "*" in own else {**thresholds, **own}  # a plain number wins outright
    from .aipp_check import yaml_aipp

    aipp, reference = yaml_aipp(entry, base_dir, at)
    if aipp is None:  # with aipp: the files hold raw images, for the AIPP file's input
        check_input_files(inputs, setting("inputs"), onnx_model, input_shape, key_at("inputs"),
                          key_at("input_shape"))
    tolerance_at = f"{at if 'scale_tolerance' in entry else dat}.scale_tolerance"
    scale_tolerance = _scale_tolerance(setting("scale_tolerance", DEFAULT_SCALE_TOLERANCE),
                                       tolerance_at)
    dataset = None
    if "dataset" in entry:  # a second item per mode: the dataset check (AIPP file included)
        from .dataset_check import yaml_dataset

        dataset = yaml_dataset(entry["dataset"], base_dir, f"{at}.dataset")
        check_dataset_output(onnx_model, dataset, f"{at}.dataset")
    for mode in modes:
        spec = make_spec(threshold=thresholds.get(mode.name, thresholds.get("*")), metric=metric,
                         per_op=per_op, modes=modes,  # the entry's modes, as a marker's (a
                         # member's tensor is judged in one without fusion: a trial)
                         ignore=ignore, default_threshold=default_threshold,
                         where=f"{at}.threshold", max_drop=setting("max_drop"),
                         scale_tolerance=scale_tolerance)
        yield SuiteCase(name, model, mode, spec, inputs, first_sample_shape(  # a dataset's
                            onnx_model, dataset, input_shape, inputs, aipp),  # open sizes
                        base_dir / golden if golden else None, aipp=aipp, reference=reference,
                        keys=keys)
        if dataset is not None:
            yield SuiteCase(name, model, mode, spec, inputs, input_shape, None, dataset,
                            aipp=aipp, reference=reference, keys=keys)


def _scale_tolerance(value, at: str) -> Optional[float]:
    """``scale_tolerance:`` as the marker's ``scale_tolerance=``: a factor > 1, null: off."""
    from ..compare.thresholds import check_scale_tolerance

    try:
        return check_scale_tolerance(value)
    except ConfigError as exc:
        raise ConfigError(at, exc.problem.replace("or None to", "or null to")) from None


def _modes(value, at: str) -> Tuple[Mode, ...]:
    if isinstance(value, (str, Mapping)):
        value = [value]
    if not isinstance(value, list) or not value:
        raise ConfigError(at, f"must be a non-empty list of modes, got {value!r}")
    modes = []
    for k, item in enumerate(value):
        if isinstance(item, Mapping):
            modes.append(_mode_mapping(item, f"{at}[{k}]"))
            check_mode_extra(modes[-1], f"{at}[{k}]")  # refused here, not when it converts
        elif isinstance(item, str):
            try:
                modes.append(resolve_mode(item, f"{at}[{k}]"))
            except ConfigError as exc:
                raise ConfigError(f"{at}[{k}]", exc.problem) from None
        else:
            raise ConfigError(f"{at}[{k}]", f"a mode is a preset name or a mapping, got {item!r}")
    return validate_modes(modes, at)


def _mode_mapping(item: Mapping, at: str) -> Mode:
    from ..core.modes import mode_from_spec  # one parser: YAML suites and `diagnose --mode`

    return mode_from_spec(item, at)


def _thresholds(value, modes, metric: str, at: str) -> Dict[str, float]:
    """{mode name: threshold} from one number (key ``*``: every mode) or a mapping per mode
    name; ``modes`` None (the defaults) accepts any mode name."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        names = None if modes is None else [m.name for m in modes]
        for key in value:
            if names is not None and key not in names:
                raise ConfigError(f"{at}.{key}", f"not one of this model's modes "
                                                 f"({', '.join(names)}){closest_text(key, names)}")
        return {str(k): validate_threshold(v, f"{at}.{k}", metric=metric) for k, v in value.items()}
    return {"*": validate_threshold(value, at, metric=metric)}


# -- pytest collection ----------------------------------------------------------------------
class AccuracyYamlFile(pytest.File):
    """A YAML suite file; collects one item per model x mode."""

    def collect(self):
        from .session import get_state

        state = get_state(self.config)
        for case in load_suite(self.path, default_threshold=state.settings.threshold):
            # the id as a string, parsed as pytest parses the ids it stores: pytest 9.2 gave
            # "m[mode]" a name holding the brackets, never equal to the stored id of its last
            # failure, whose brackets are parameters (--lf and --ff reran every check)
            yield AccuracyYamlItem.from_parent(self, name=case.test_name, case=case,
                                               nodeid=f"{self.nodeid}::{case.test_name}")

    def repr_failure(self, excinfo):  # a Collector's takes no style (pytest 8 and 9)
        exc = excinfo.value
        if isinstance(exc, ConfigError):
            where = exc.where or ""
            if where == str(self.path) or where.startswith(f"{self.path}:"):
                # the suite's path as pytest's own lines print it, relative to where it ran
                from ..core.locations import shown

                path = shown(self.path, self.config.invocation_params.dir)
                rest = where[len(str(self.path)):]
                return f"invalid accuracy suite: {path}{rest}: {exc.problem}"
            return f"invalid accuracy suite: {exc}"
        return super().repr_failure(excinfo)


class AccuracyYamlItem(pytest.Item):
    """One model under one mode from a YAML suite."""

    #: an accuracy check (a session running one runs its test loop in ``core.frozen_heap``)
    ascend_accuracy_check = True

    def __init__(self, *, case: SuiteCase, **kwargs):
        super().__init__(**kwargs)
        self.case = case
        self.add_marker(pytest.mark.accuracy)

    def runtest(self):
        from .yaml_warning_place import warnings_at_entry

        try:
            with warnings_at_entry(self.path, self.case):  # (no user frame: warnings go here)
                self._run()
        except ConfigError as exc:  # a setting of the suite: the error names its file and key
            keyed = self._keyed(exc)
            if keyed is None:
                raise
            raise keyed from None

    def _keyed(self, exc: ConfigError) -> Optional[ConfigError]:
        if self.case.keys is None:
            return None
        from ..core.locations import shown

        labels = (self.case.dataset or {}).get("labels")
        return self.case.keys.keyed(exc, shown(self.path, self.config.invocation_params.dir),
                                    getattr(labels, "where", None))

    def _run(self):
        from . import accuracy_check as ac
        from ..golden import stored as golden_files
        from .session import get_state

        state = get_state(self.config)
        case = self.case
        if case.dataset is not None:
            return self._run_dataset(state)
        from .check_flow import checked, suite_spec_and_inputs

        with self._shape_advice():
            if case.aipp is not None and not case.inputs.files:  # seeded images: the batch
                case = replace(case, input_shape=entry_shape(case))  # given, or the advice
            spec, inputs = suite_spec_and_inputs(state, case)  # as a Python test gets them
        from .yaml_entry_shape import shape_from_entry_arrays
        # dynamic dims the entry leaves open: its inputs' (AIPP: C x H x W the file's, the
        arrays = getattr(inputs, "arrays", inputs)  # batch the images', as ascend_model does)
        with self._shape_advice():
            shape = (entry_shape(case, arrays) if case.aipp is not None
                     else shape_from_entry_arrays(case, arrays, self.nodeid,
                                                  state.settings.show))
            handle = ac.convert_model(state, case.model, case.mode, input_shape=shape,
                                      dump_root=self._dump_root, where=self.nodeid,
                                      aipp=case.aipp)
        # the golden before the run, unless another xdist worker is still building it after
        # this one has converted and waited ``EARLY_GOLDEN_WAIT_S``: then it runs meanwhile
        # instead of waiting for it (the checks of one model's modes would otherwise queue
        # behind the first one's golden)
        early = None
        if case.golden is None and case.aipp is None:
            early = ac.fresh_golden(state, case.model, inputs, case.input_shape,
                                    wait=ac.EARLY_GOLDEN_WAIT_S)
        golden_inputs = inputs
        if case.aipp is not None:  # step 5 first; the golden runs on reference(raw inputs)
            from .yaml_preprocessing import golden_inputs as aipp_golden_inputs

            golden_inputs = aipp_golden_inputs(self, case, inputs, f"{self.nodeid}: reference")
        if early is not None:  # compared against it while it runs (``compared_runs``)
            from .compared_runs import kl_wanted

            kl = kl_wanted(state, spec)
            handle.compare_with = lambda _inputs: (early, kl)
        actual = handle.run(inputs)
        golden, status = (early, None) if early is not None else self._golden(state, golden_inputs)
        if status == golden_files.USED:  # --accuracy-regen rewrites it if this test fails
            from .fixtures import CONTEXT_KEY, TestContext

            ctx = TestContext(self.nodeid, case.spec, case.mode)
            ctx.stored_goldens.append((case.golden, self._compute))
            self.stash[CONTEXT_KEY] = ctx
        # one code path with check_accuracy: hint in this mode, --accuracy-diagnose, baselines
        from .accuracy_check import model_name

        checked(state, actual, golden, spec, nodeid=self.nodeid, model=model_name(handle.model),
                mode=case.mode.name, handle=handle, inputs=inputs,
                record_property=lambda k, v: self.user_properties.append((k, v)))

    def _run_dataset(self, state):
        from . import accuracy_check as ac
        from .dataset_check import run_dataset

        case = self.case

        def convert(shape):  # dynamic dims: converted per sample shape, as in a Python test
            with self._shape_advice():
                return ac.convert_model(state, case.model, case.mode, input_shape=shape,
                                        dump_root=self._dump_root, where=self.nodeid,
                                        aipp=case.aipp)

        handle = dataset_handle(convert, case, self.nodeid, state.settings.show)  # AIPP: CHW
        reference_inputs = None
        if case.aipp is not None:  # raw samples: the reference run gets reference(raw images)
            from .yaml_preprocessing import reference_inputs as aipp_reference_inputs

            reference_inputs = aipp_reference_inputs(case, f"{self.nodeid}: reference")
        run_dataset(state, handle, nodeid=self.nodeid, spec=case.spec, config=self.config,
                    record_property=lambda k, v: self.user_properties.append((k, v)),
                    reference_inputs=reference_inputs, names_where=self._names_where(),
                    name=case.name, **case.dataset)

    def _names_where(self) -> str:
        """The keys of the item's op names (checked at collection: a safety net)."""
        from ..core.locations import shown

        entry = self.case.keys.entry if self.case.keys is not None else "models"
        return (f"{shown(self.path, self.config.invocation_params.dir)}: {entry}.per_op/"
                f"{entry}.ignore (or defaults.per_op/defaults.ignore)")

    def _compute(self):
        from . import accuracy_check as ac
        from .session import get_state

        case = self.case
        inputs = case.inputs.load(case.model, case.input_shape)
        return ac.fresh_golden(get_state(self.config), case.model, inputs, case.input_shape)

    def _golden(self, state, inputs):
        """(golden dump, stored-golden status or None when no stored golden is used)."""
        from . import accuracy_check as ac

        case = self.case
        if case.golden is None:
            return ac.fresh_golden(state, case.model, inputs, case.input_shape), None
        from ..golden.stored_record import identity_of
        from .stored_golden_use import obtain_held, settle

        identity = identity_of(case.model, inputs, case.input_shape)
        dump, status = obtain_held(state, state.golden_policy(self.nodeid), case.golden,
                                   self._compute, identity, self.nodeid)
        dump = ac.real_names(dump, case.model)  # file names hold sanitized op names
        shown = state.settings.show(case.golden)
        ac.warn_inputs_not_stored(state, dump, shown, status)

        settle(state, case.golden, status, shown, ac.model_name(case.model), self.nodeid)
        return dump, status

    def _shape_advice(self):
        from .shape_deferred_model import yaml_shape_advice

        return yaml_shape_advice(f"{self.path.name}: {self.case.name}")

    def _dump_root(self) -> Path:
        import tempfile

        from .dump_cleanup import register_dump_dir  # removed when the item passes

        factory = getattr(self.config, "_tmp_path_factory", None)
        if factory is not None:
            return register_dump_dir(self, factory.mktemp(f"{self.case.name}-dump", numbered=True))
        return register_dump_dir(self, Path(tempfile.mkdtemp(prefix="ascend-accuracy-")))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (AssertionError, AscendAccuracyError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, self.name
