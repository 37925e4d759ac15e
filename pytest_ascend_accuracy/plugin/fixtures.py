"""The plugin's fixtures: thin wrappers over ``accuracy_check`` bound to the session state,
the test's ``@accuracy`` marker and its parametrized conversion mode.

Only pytest is imported at module level; numpy, onnx and the backends load on first use.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional, Tuple

import pytest

from ..core.keyword_names import closest_keywords
from ..errors import ConfigError
from .session import get_state

#: internal fixture that ``@accuracy(modes=[...])`` parametrizes (see plugin.pytest_generate_tests)
MODE_FIXTURE = "_ascend_accuracy_mode"


@dataclass(frozen=True)
class ModelRun:
    """One ``ascend_model(...).run(inputs)`` of a test: the ``AscendModel`` that ran, on what,
    and (weakly, the context outlives the test) the DumpSet it returned."""

    handle: object  # AscendModel
    inputs: object
    dump: Callable[[], object]  # weakref to the DumpSet
    #: the run dumped its operators (``run(inputs, dump=False)`` gives the outputs only)
    dumped: bool = True
    #: (inputs digest, shapes as text) when it ran: a test may change its arrays afterwards
    digested: tuple = (None, "")

    @staticmethod
    def of(handle, inputs, dump) -> "ModelRun":
        from .compared_runs import digested

        dumped = (getattr(dump, "meta", None) or {}).get("dumped", True) is not False
        return ModelRun(handle, inputs, weakly(dump), dumped, digested(inputs))


def weakly(obj) -> Callable[[], object]:
    """A weak reference to ``obj`` (a strong one where it takes none)."""
    import weakref

    try:
        return weakref.ref(obj)
    except TypeError:
        return (lambda d: lambda: d)(obj)


@dataclass
class TestContext:
    """Per-test facts shared by the fixtures and the plugin's report hook."""

    __test__ = False  # not a test class, despite the name

    nodeid: str
    spec: object  # AccuracySpec
    mode: object = None  # the parametrized Mode, or None
    bases: Tuple[Path, ...] = ()
    #: stored golden files this test used, with how to recompute each (for --accuracy-regen)
    stored_goldens: List[Tuple[Path, Callable[[], object]]] = field(default_factory=list)
    #: every ascend_model run of this test, in order: which model made which dump
    runs: List[ModelRun] = field(default_factory=list)
    #: (model, the DumpSet golden_dump returned, weakly) of each call of this test
    #: (``_refuse_swapped``, ``goldens_of``)
    goldens: List[Tuple[object, Callable[[], object]]] = field(default_factory=list)
    #: the models ``ascend_model`` converted for this test, in order (resolved paths)
    converted: List[object] = field(default_factory=list)
    #: checks this test started (check_accuracy, check_dataset, check_preprocessing): a test
    #: marked @accuracy that started none checked nothing (``warn_if_nothing_checked``)
    checks: int = 0
    #: check_accuracy calls, and the max_drop of each check_dataset call: a marker's max_drop
    #: (the per-operator baseline's) on a test with only dataset checks is warned of
    #: (``dataset_check.warn_marker_max_drop``)
    accuracy_checks: int = 0
    dataset_max_drops: List[object] = field(default_factory=list)
    #: ``accuracy`` marks on the test when the spec was read (``check_marks_unchanged``)
    marks: int = 0

    def resolve(self, model, where):
        from .user_paths import resolve_model

        return resolve_model(model, self.bases, where)

    def goldens_of(self, model) -> list:
        """The goldens this test made of ``model`` (a path, or the same ModelProto) that it
        still holds, in order."""
        found = []
        for made, ref in self.goldens:
            golden = ref()
            if golden is not None and (made is model or (
                    isinstance(made, (str, os.PathLike)) and isinstance(model, (str, os.PathLike))
                    and made == model)):
                found.append(golden)
        return found

    def run_of(self, actual) -> Optional[ModelRun]:
        """The run that produced the dump ``actual`` (the baseline check and the diagnosis
        belong to its model, never to whichever model happened to run last). A dump not
        returned by a run (read from a path) is attributed only when every run of the test
        used the same converted model; otherwise None."""
        for run in reversed(self.runs):
            if run.dump() is actual:
                return run
        if self.runs and all(r.handle.converted is self.runs[0].handle.converted
                             for r in self.runs):
            return self.runs[-1]
        return None


CONTEXT_KEY = pytest.StashKey[TestContext]()


def _bases(request) -> Tuple[Path, ...]:
    rootdir = Path(request.config.rootpath)
    test_dir = Path(request.path).parent
    return tuple(dict.fromkeys([rootdir, test_dir]))


@pytest.fixture
def _ascend_accuracy_mode(request):
    """The conversion mode of this test instance (parametrized by ``@accuracy(modes=[...])``)."""
    return getattr(request, "param", None)


@pytest.fixture
def _ascend_accuracy_context(request, _ascend_accuracy_mode) -> TestContext:
    """Per-test context: the validated marker spec, the mode and the stored goldens used."""
    from .setup_checks import item_spec

    spec = item_spec(request, get_state(request.config), _ascend_accuracy_mode)
    ctx = TestContext(request.node.nodeid, spec, _ascend_accuracy_mode, _bases(request),
                      marks=len(list(request.node.iter_markers("accuracy"))))
    request.node.stash[CONTEXT_KEY] = ctx
    return ctx


@pytest.fixture(scope="session")
def ascend_device(pytestconfig) -> Optional[int]:
    """The Ascend device id this test process uses, as listed in ``--ascend-device`` (with
    xdist, worker gwK takes device K mod len(list)); None when the CPU emulator is the backend."""
    device = get_state(pytestconfig).device
    return None if device is None else device.device_id


@pytest.fixture(scope="session")
def atc_convert(pytestconfig):
    """Factory ``atc_convert(model, mode="default", *, input_shape=None, **atc_options)`` ->
    ``ConvertedModel``: the model converted by ATC (or the emulator) under a mode preset name or
    ``Mode``; cached by content in the shared cache, so each conversion happens once."""
    from .user_paths import resolve_model
    from ..core.atc_option_check import atc_convert_advice, check_atc_options
    from .setup_checks import check_mode_names
    from ..core.modes import resolve_mode

    state = get_state(pytestconfig)
    bases = (Path(pytestconfig.rootpath),)

    def convert(model, mode="default", *, input_shape=None, **atc_options):
        __tracebackhide__ = True
        mode = resolve_mode(mode, "atc_convert")
        advice = atc_convert_advice(mode, atc_options)  # (what atc_convert takes instead)
        check_atc_options(atc_options, "atc_convert", advice=advice)  # emulated, neutral, refused
        model = resolve_model(model, bases, "atc_convert")
        # keep_dtype names must exist in the model
        check_mode_names(mode, model, "atc_convert", advice=advice)
        return state.backend.convert(model, mode, input_shape=input_shape,
                                     atc_options=atc_options or None)

    return convert


@pytest.fixture
def ascend_model(request, _ascend_accuracy_context):
    """Factory ``ascend_model(model, mode=None, *, keep_dtype=None, input_shape=None, aipp=None,
    **atc_options)``: converts the model (cached) and returns an object with ``.run(inputs,
    dump=True, dump_mode=None)`` -> DumpSet, ``.outputs(inputs)`` -> {ONNX output name: array}
    (no dump), ``.converted`` and ``.mode``. ``mode=None`` is the test's mode from
    ``@accuracy(modes=[...])`` (or ``"default"``); ``keep_dtype`` keeps those ops in fp32.
    ``aipp="aipp.cfg"`` converts with that AIPP file (ATC ``--insert_op_conf``): ``run`` then
    takes raw uint8 images (NHWC) under the model's input name, and the file fixes that
    input's C x H x W (``aipp.shape_from_file``). Dynamic dimensions that ``input_shape``
    leaves open take each ``run(inputs)``'s shapes (``shape_deferred_model``; an AIPP input's
    batch: the number of images)."""
    from .accuracy_check import convert_model
    from .user_paths import resolve_file

    ctx = _ascend_accuracy_context
    state = get_state(request.config)

    def dump_root() -> Path:  # removed when the test passes (plugin.dump_cleanup)
        from .dump_cleanup import register_dump_dir

        return register_dump_dir(request.node, request.getfixturevalue("tmp_path") / "ascend-dumps")

    def remember(handle, inputs, dump) -> None:
        ctx.runs.append(ModelRun.of(handle, inputs, dump))

    def make(model, mode=None, *, keep_dtype=None, input_shape=None, aipp=None, **atc_options):
        __tracebackhide__ = True
        model = ctx.resolve(model, "ascend_model")
        if aipp is not None:
            aipp = resolve_file(aipp, ctx.bases, f"{ctx.nodeid}: ascend_model", "AIPP file")
        where = f"{ctx.nodeid}: ascend_model"
        mode_arg = mode if mode is not None else ctx.mode or "default"
        # a marker mode's keep_dtype names another model's ops too: not this one's typos (a
        # mode given here is this call's own)
        others = _others(ctx.converted, model) if mode is None else ()

        from .compared_runs import golden_chooser, inserts_aipp

        def convert(shape):  # a golden made of this model before running: compared as it runs
            return convert_model(state, model, mode_arg, keep_dtype=keep_dtype,
                                 input_shape=shape, atc_options=atc_options, dump_root=dump_root,
                                 where=where, on_run=remember, aipp=aipp, others=others,
                                 compare_with=golden_chooser(
                                     state, ctx, model,
                                     raw_inputs=inserts_aipp(aipp, atc_options)))

        from .shape_deferred_model import deferred_model

        config = None
        if aipp is not None:  # the AIPP file fixes its inputs' C x H x W (the image after it)
            from ..aipp import read_aipp_config
            from ..aipp.shape_from_file import aipp_input_shape
            from ..graph.shape_advice import DynamicShapeError

            config = read_aipp_config(aipp)
            try:
                input_shape = aipp_input_shape(config, model, input_shape)
            except DynamicShapeError:  # the batch: the images of each run give it
                pass
        # dynamic dims left open: converted at run(inputs), at their shapes
        handle = deferred_model(convert, model, mode_arg, keep_dtype=keep_dtype,
                                input_shape=input_shape, atc_options=atc_options,
                                where=where, others=others, aipp=config,
                                shown=state.settings.show(model)
                                if isinstance(model, (str, os.PathLike)) else None)
        handle = handle or convert(input_shape)
        ctx.converted.append(model)
        return handle

    return make


def _others(converted, model) -> list:
    """The models of ``converted`` that are not ``model``, once each (paths or ModelProtos,
    which are not hashable)."""
    out: list = []
    for m in converted:
        if m is not model and m != model and not any(m is o or m == o for o in out):
            out.append(m)
    return out


@pytest.fixture
def golden_dump(request, _ascend_accuracy_context):
    """Factory ``golden_dump(model, inputs, *, input_shape=None, path=None)`` -> DumpSet: every
    operator of the model run by onnxruntime in fp32 (cached). With ``path=`` the golden is a
    file in your repository: written and the test failed when missing, used as is otherwise,
    rewritten only with ``--accuracy-regen`` (failing tests) or ``--accuracy-regen-all``."""
    from ..golden import stored as golden_files
    from ..golden.stored_record import SOURCE_META, identity_of
    from .accuracy_check import fresh_golden, real_names, warn_inputs_not_stored

    ctx = _ascend_accuracy_context
    state = get_state(request.config)
    policy = state.golden_policy(ctx.nodeid)

    def make(model, inputs, *, input_shape=None, path=None):
        __tracebackhide__ = True
        model = ctx.resolve(model, "golden_dump")
        if path is None:
            dump = fresh_golden(state, model, inputs, input_shape)
            ctx.goldens.append((model, weakly(dump)))
            return dump
        target = _stored_golden_path(path, request)

        def compute():
            return fresh_golden(state, model, inputs, input_shape)

        from .stored_golden_use import obtain_held, settle

        identity = identity_of(model, inputs, input_shape)
        dump, status = obtain_held(state, policy, target, compute, identity, ctx.nodeid)
        dump = real_names(dump, model)  # file names hold sanitized op names
        # (held to these inputs by obtain: what a run of other inputs is refused by)
        dump.meta.setdefault(SOURCE_META, identity.as_meta())
        shown = state.settings.show(target)
        warn_inputs_not_stored(state, dump, shown, status)
        if status == golden_files.USED:  # only a golden read as is may be regenerated later
            ctx.stored_goldens.append((target, compute))
        from .accuracy_check import model_name

        settle(state, target, status, shown, model_name(model), ctx.nodeid)
        ctx.goldens.append((model, weakly(dump)))
        return dump

    return closest_keywords(make, 'golden_dump')


def _junit_property_recorder(item):
    """``record(name, value)``: adds ``(name, value)`` to ``item.user_properties``, which
    pytest's junitxml writes as ``<property>`` of the test case under every ``junit_family``
    (and which pytest-xdist carries in the report). The YAML items record the same way. Not
    pytest's ``record_property`` fixture: that one warns under xunit2 (the default), an error
    with ``-W error``, though the properties it writes are the same."""
    def record(name, value):
        item.user_properties.append((name, value))

    return record


def _refuse_swapped(ctx, actual, golden) -> None:
    """``check_accuracy(golden, actual)``: a golden where the device's dump goes and this test's
    device run where the golden goes. Judged so, relative metrics divide by the device's values,
    the scale guard measures the golden against the device, and every figure names the wrong
    side: refused, with the call in the right order."""
    from ..golden.stored_record import SOURCE_META

    device = [run.dump() for run in ctx.runs]
    if (any(d is golden for d in device) and not any(d is actual for d in device)
            and (SOURCE_META in actual.meta or any(g() is actual for _, g in ctx.goldens))):
        raise ConfigError("check_accuracy", "the arguments are swapped: the first is this "
                                            "test's golden (golden_dump's), the second its "
                                            "device run (a run of ascend_model's); swap them, "
                                            "check_accuracy(actual, golden)")


@pytest.fixture
def check_accuracy(request, _ascend_accuracy_context):
    """Callable ``check_accuracy(actual, golden, *, per_op=None, ignore=None)`` (DumpSets or dump
    paths) bound to the
    test's ``@accuracy`` threshold/metric/per_op/ignore (call-site ``per_op`` entries win,
    ``ignore`` entries add). Raises ``AccuracyFailure`` with the failure report; records the
    result for the terminal summary, ``--accuracy-report`` and JUnit XML properties."""
    from .accuracy_check import model_name
    from .check_flow import checked
    from .compared_runs import refuse_other_inputs
    from .model_labels import label_in_test

    ctx = _ascend_accuracy_context
    state = get_state(request.config)

    def check(actual, golden, *, per_op=None, ignore=None):
        __tracebackhide__ = True
        from ..report.assertion import as_dump

        ctx.checks += 1
        ctx.accuracy_checks += 1
        from .setup_checks import check_marks_unchanged

        check_marks_unchanged(request, ctx)
        actual, golden = as_dump(actual), as_dump(golden)  # DumpSets or paths to dumps
        _refuse_swapped(ctx, actual, golden)
        spec = ctx.spec.merged(per_op, ignore, where=ctx.nodeid)
        run = ctx.run_of(actual)
        refuse_other_inputs(run, actual, golden)
        handle = run.handle if run is not None else None
        # the model as the test names it (its file stem): a dump's model-name directory holds
        # the sanitized spelling (ch_ppocr_mobile_v2_0_cls_infer), which names no file
        model = ((model_name(handle.model) if handle else None) or actual.model_name
                 or golden.model_name or "model")
        mode = actual.meta.get("mode") or (handle.mode.name if handle else None) or (
            ctx.mode.name if ctx.mode else "default")

        inputs = run.inputs if run is not None else None
        # other models this test converted so far: a fix for the marker would convert them
        # too (converted, not run: a test converting det and cls before running either)
        others = handle is not None and bool(_others(ctx.converted, handle.model))
        outcome = checked(state, actual, golden, spec, nodeid=ctx.nodeid, model=str(model),
                          mode=str(mode), handle=handle, inputs=inputs,
                          record_property=_junit_property_recorder(request.node),
                          one_of_several=others, label=label_in_test(
                              handle.model, ctx.converted, state.settings.invocation_dir)
                          if handle is not None else "")
        return outcome  # the --accuracy-diagnose note and the baseline check: check_flow

    return closest_keywords(check, 'check_accuracy')


@pytest.fixture
def check_preprocessing(request, _ascend_accuracy_context):
    """Callable ``check_preprocessing(om, images, *, reference, rank=0)``: step 5 of the flow.
    Applies the AIPP file of ``om`` (``ascend_model(..., aipp=...)``, or an AIPP file path) to
    each raw uint8 image and compares it with ``reference(image)`` (the float CHW/NCHW tensor
    the reference network's own pre-processing gives) scale-sensitively; on mismatch raises
    ``AccuracyFailure`` naming the AIPP fields to correct with their values, and writes the
    corrected file beside the AIPP file (``<name>.corrected.cfg``; an existing copy with other
    content is kept), a copy also in the report dir with ``--accuracy-report``."""
    from .aipp_check import preprocessing_checker

    return preprocessing_checker(request, _ascend_accuracy_context)


@pytest.fixture
def check_dataset(request, _ascend_accuracy_context):
    """Callable ``check_dataset(om, samples, *, metric="top1", labels=None, max_drop=0.01,
    output=None, postprocess=None)``: the metric (top1, top5, agreement, map, or a callable
    ``metric(list_of_output_dicts, labels) -> float``) of ``om`` (an ``ascend_model`` result)
    against onnxruntime fp32 on every sample (a list of input dicts, or a directory of
    ``.npz`` files); fails when ``reference - device > max_drop``, naming the flipped samples
    and the first operator below the ``@accuracy`` threshold on the first of them. Returns
    the result (``.reference``, ``.device``, ``.flipped``). ``reference_inputs=fn`` (sample
    inputs -> reference-network inputs) feeds the reference run, e.g. the reference
    pre-processing of an AIPP model's raw images. ``higher_is_better=False`` for a callable
    metric where lower is better (a loss): it then fails when ``device - reference >
    max_drop``. ``batch_axis``: the output's axis of samples (found from the sizes)."""
    from .dataset_check import run_dataset

    ctx = _ascend_accuracy_context
    state = get_state(request.config)

    def check(om, samples, *, metric="top1", labels=None, max_drop=0.01, output=None,
              postprocess=None, reference_inputs=None, higher_is_better=True, batch_axis="auto"):
        __tracebackhide__ = True
        ctx.checks += 1
        ctx.dataset_max_drops.append(max_drop)
        from .setup_checks import check_marks_unchanged

        check_marks_unchanged(request, ctx)
        if isinstance(samples, (str, Path)) and not Path(samples).is_absolute():
            samples = next((Path(b) / samples for b in ctx.bases if (Path(b) / samples).is_dir()),
                           samples)
        return run_dataset(state, om, samples, nodeid=ctx.nodeid, spec=ctx.spec,
                           config=request.config, metric=metric, labels=labels,
                           max_drop=max_drop, output=output, postprocess=postprocess,
                           record_property=_junit_property_recorder(request.node),
                           reference_inputs=reference_inputs,
                           higher_is_better=higher_is_better, batch_axis=batch_axis)

    return closest_keywords(check, 'check_dataset')


@pytest.fixture
def accuracy_inputs(request, _ascend_accuracy_context):
    """Factory ``accuracy_inputs(model, *, seed=None, input_shape=None, inputs=None)``: inputs
    a rerun reproduces, {input name: array}. Seeded (``make_inputs``, seed 0 unless ``seed=``
    says another) by default, or your ``inputs=`` arrays, which a baseline check
    (``@accuracy(max_drop=...)``) stores next to its baseline file. Both ``seed=`` and
    ``inputs=``: your arrays for the inputs they name, every other input seeded (as ``seed=``
    alone draws it; its dynamic dims from ``input_shape`` or your arrays), e.g.
    ``accuracy_inputs(m, seed=0, inputs={"sr": sr})``; a baseline check stores them all next
    to its baseline. ``inputs=`` without ``seed=`` must
    give every input. Baseline checks refuse inputs that do not come from here."""
    from ..baseline import inputs_for_baseline

    ctx = _ascend_accuracy_context

    def make(model, *, seed=None, input_shape=None, inputs=None):
        __tracebackhide__ = True  # seed None: 0, and with inputs= every input given
        model = ctx.resolve(model, "accuracy_inputs")
        if inputs is not None and seed is None:
            _every_input_given(model, inputs)
        seed = 0 if seed is None and inputs is None else seed
        return inputs_for_baseline(model, None, seed=seed, input_shape=input_shape,
                                   inputs=inputs)

    return closest_keywords(make, 'accuracy_inputs')


def _every_input_given(model, inputs) -> None:
    """``accuracy_inputs(m, inputs=...)`` without ``seed=`` leaving out a model input: refused,
    naming them and ``seed=0`` (which seeds them); other problems are said later."""
    from collections.abc import Mapping

    from ..graph.onnx_graph import graph_inputs, load_model, model_label

    names = [i.name for i in graph_inputs(load_model(model, weights=False))]
    missing = [n for n in names if n not in inputs] if isinstance(inputs, Mapping) else []
    if missing and inputs:  # (an empty mapping: refused later, saying what it must be)
        many = len(missing) > 1
        raise ConfigError(f"accuracy_inputs(inputs=...) of {model_label(model)!r}",
                          f"model input{'s' * many} {', '.join(map(repr, missing))} not given; "
                          f"inputs: {', '.join(names)}. Give {'them' if many else 'it'} too, or "
                          f"add seed=0 to seed the inputs you leave out: "
                          f"accuracy_inputs(..., seed=0, inputs={{...}})")


def _stored_golden_path(path, request) -> Path:
    """``golden_dump(path=...)`` relative to the test file's directory; a golden found only at
    the old rootdir-relative place is used there, with a ``MovedFileWarning``."""
    from ..core.caller_warning import warn_at_caller
    from ..core.locations import MovedFileWarning, resolve_near_test

    located = resolve_near_test(path, Path(request.path).parent,
                                legacy_dir=request.config.rootpath, what="golden_dump(path=...)")
    if located.belongs is not None:
        warn_at_caller(MovedFileWarning(located.message("golden file",
                                                        request.config.invocation_params.dir)))
    return located.path
