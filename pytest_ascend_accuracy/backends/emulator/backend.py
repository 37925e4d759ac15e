"""``EmulatorBackend``: the CPU stand-in for ATC + an Ascend NPU.

``convert`` rewrites the ONNX graph for a conversion mode (``rewrite.emulate_graph``) and
stores the result in the cache like an ``.om``: ``model.onnx`` (the rewritten graph),
``plan.json`` (what to dump) and ``model.json`` (the ``atc --mode=1`` style om json listing
every dumped operator with its original op names). ``run`` executes it with onnxruntime and
writes every dumped operator's inputs and outputs, op by op, as Ascend binary dump files in
the real directory layout; the returned DumpSet is read back from those files by the same
reader that reads real NPU dumps.

This is an honest model of the numerics, not of performance or of every ATC pass: see the
module docs of ``rounding`` (precision per mode), ``fusion`` (fusion rules) and ``faults``.
``buffer_optimize`` is accepted and changes nothing numerically (only buffer faults react to
it). Extra ATC options are recorded and otherwise ignored. ``device_formats`` (default on)
dumps conv-like and matmul tensors in NC1HWC0 / FRACTAL_Z / FRACTAL_NZ, as a device does
(``layouts``), and the om json describes them as ATC does. ``dump_mode`` is acl.json's: ``all``
(the default here) dumps every operator's inputs and outputs, ``output`` (ACL's own default)
only the outputs and ``input`` only the inputs; ``run(dump_mode=...)`` overrides it per run.
"""
from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

import numpy as np

from ...core.atc_paths import AtcPathWarning, path_warning
from ...core.cache import Cache, make_key
from ...core.caller_warning import warn_at_caller
from ...dump.model import DumpSet, OpRecord, TensorRef
from ...dump.dtypes import UnsupportedDtype
from ...errors import (AscendAccuracyError, BackendError, ConfigError, ConversionError,
                       DumpWriteError)
from ...core.modes import Mode, resolve_mode
from ...graph.content_digests import model_digest
from ...graph.input_names import listed_initializers
from ...graph.onnx_graph import check_inputs, load_model, model_label, ort_version
from ...graph.parser_refusals import parser_refusal
from ...graph.onnx_graph import parse_input_shape, tensor_info, tensor_info_from_json, tensor_info_to_json
from ...aipp.emulation import AIPP_FILE, AippInputs, aipp_om_ops, conversion_aipp, key_options, preprocess
from ..base import ConvertedModel
from ..option_guard import checked_options
from ..dump_modes import check_dump_mode, dumps_inputs, dumps_outputs
from .atc_quant import quant_ops, warn_quant
from .atc_resize import warn_resize
from .folded_keeps import folded_keep_problem
from .faults import Fault, check_fault_targets, check_faults
from .op_values import aipp_format, op_values, slot_layout, stored_type
from .plan import PLAN_FILE, Plan
from .rounding import check_overflow, cube_fp32_kernels, cube_kernels_label, float32_cube

#: bump when the rewrite changes what a converted entry holds (3: TENSOR_INFO_FILE; 4: ops in
#: an order that runs, unnamed nodes named as ATC names them, OpType:: by parser type; 5: op
#: types as the real ATC 6.0 om json has them, BNInferenceD, ReduceMinD, Transpose; the mode's
#: config files its atc_cmdline names, written beside the om json; 6: the atc_cmdline records
#: --input_shape, as ATC's does; 7: a folded constant only an If branch reads is kept, a
#: folded weight's graph-input entry (IR 3) dropped, faults on If branch nodes applied; 8: a
#: kept op is not UB-fused with one not kept; 9: a nearest Resize typed ResizeNearestNeighborV2,
#: the Resize ops ATC computes otherwise listed, atc_resize.py; 10: those rows say why, a
#: 'safe' setting at sizes where it is not: a format-9 entry's rows had no reason, IndexError;
#: 11: those sizes compared by the source pixels, before the constants are renamed; 12: every
#: nearest Resize compared under both CANN parsers' flags, at onnxruntime's output size; 13:
#: linear Resize rows, against canndev's ResizeBilinearV2; 14: linear at opset 10, roi crops,
#: no claim under antialias, lists from the first difference; 15: crops probed with their roi,
#: antialias upscales compared, antialias downscales said; 16: an LSTM typed DynamicRNN, a GRU
#: DynamicGRUV2, as CANN's fusion passes name them, core/ascend_optypes.py; 17: Loop/Scan
#: refused as ATC refuses them, graph/control_flow.py; an If's branch ops rounded in their
#: precision, branch_rounding.py; 18: NonMaxSuppression/ArgMax/GatherND typed
#: NonMaxSuppressionV6/ArgMaxV2/GatherNd, ArgMax/ArgMin select_last_index=1 refused as ATC
#: refuses it, graph/parser_refusals.py; 19: ops that share a name refused as ATC refuses
#: them, E19009, graph/parser_refusals.py: an entry made of such a model renamed one; the
#: initializers an IR 3 model lists as inputs recorded, a run given one says what it is; 20:
#: the same inside an If's branches; 21: ONNX quantisation ops recorded, warned at each
#: conversion, atc_quant.py; 22: those in If branches and com.microsoft's too, named as ATC;
#: 23: ops of a domain other than ai.onnx (ai.onnx.ml, com.microsoft, ...) refused as ATC
#: refuses them, E19010, graph/parser_refusals.py: an entry made of such a model ran them;
#: 24: a call of a model-local function of ONNX's own domain refused too, and onnxruntime's
#: QOperator quantisation ops warned of again, graph/op_domains.py; 25: a Loop/Scan or a
#: refused attribute value in an If branch the conversion drops refused too, as ATC parses it;
#: 26: float16 ops' outputs rounded, float16_model.py; 27: If branches round by their own types;
#: 28: plan info "inside"; 29: If branch Constants as weights; 30-31: Resize parser rows; 32: the
#: fusion change; 33: the SoC's cube kernels; 34: fusion_limits' axis 0 and "fusion_refused")
EMULATOR_FORMAT = 34
#: bump when a conversion can compute other numbers (what a baseline's toolkit_version records,
#: ``baseline.env``): numerics.py holds each version's change and which models it moves
EMULATOR_NUMERICS = 13
MODEL_FILE = "model.onnx"
OM_JSON_FILE = "model.json"
#: ``onnx_graph.tensor_info`` of the converted model, saved with it: a run cuts the model into
#: segments by these sizes without running shape inference again (most of the set-up time of
#: a cached model's run)
TENSOR_INFO_FILE = "tensor_info.json"


class EmulatorBackend:
    """CPU emulator of ATC conversion and NPU execution (see module docstring)."""

    name = "emulator"

    def __init__(self, cache: Cache, *, faults: Sequence[Fault] = (), overflow: str = "inf",
                 threads: int = 0, device_formats: bool = True, dump_mode: str = "all",
                 soc_version: Optional[str] = None):  # its cube kernels: rounding.py
        self.cache, self.soc_version = cache, soc_version or None
        self.cube_fp32 = cube_fp32_kernels(self.soc_version, "--soc-version")
        self.cube_kernels = cube_kernels_label(self.soc_version)  # (its class: "" or cube-fp16)
        self.dump_mode = check_dump_mode(dump_mode, "EmulatorBackend dump_mode")
        self.device_formats = bool(device_formats)
        self.faults = check_faults(faults)
        self.overflow = check_overflow(overflow)
        self.threads = threads
        self._states: Dict[str, _RunState] = {}
        self._runs_root: Optional[Path] = None  # dumps of runs given no dump_dir
        self._runs_cleanup = None

    def close(self) -> None:
        """Delete the dump directories of runs that were given no ``dump_dir`` (as the Ascend
        backend does); also done when the backend is collected or the interpreter exits."""
        cleanup, self._runs_cleanup, self._runs_root = self._runs_cleanup, None, None
        if cleanup is not None:
            cleanup()

    def _own_dump_dir(self) -> Path:
        """A fresh directory for one run's dump, inside this backend's own temporary root."""
        if self._runs_root is None:
            import shutil
            import weakref

            self._runs_root = Path(tempfile.mkdtemp(prefix="ascend-accuracy-emulator-"))
            self._runs_cleanup = weakref.finalize(self, shutil.rmtree, str(self._runs_root), True)
        return Path(tempfile.mkdtemp(prefix="run-", dir=self._runs_root))

    def describe(self) -> str:
        extra = f", soc {self.soc_version}" if self.soc_version else ""
        extra += f", {len(self.faults)} fault(s) injected" if self.faults else ""
        return f"emulator (CPU, onnxruntime {ort_version()}, overflow={self.overflow}{extra})"

    # -- convert ---------------------------------------------------------------------------
    def convert(self, model, mode: Mode = None, *, input_shape=None,
                atc_options: Optional[Mapping[str, str]] = None) -> ConvertedModel:
        mode = resolve_mode(mode, "emulator.convert")
        if mode.fusion_rules_off:
            from .fusion import check_rules_off

            check_rules_off(mode.fusion_rules_off)
        check_fault_targets(self.faults, model)
        from .bf16_opset import check_bf16_opset

        check_bf16_opset(model, mode, model_label(model))
        input_shape, options = checked_options(mode, input_shape, atc_options)  # {name: text}
        shapes = parse_input_shape(input_shape)
        # --insert_op_conf: keyed by content, applied at run; its output size checked against
        # the model input it feeds (ATC refuses a mismatch), so a cache hit is checked too
        aipp = conversion_aipp(options, model, shapes)
        key = make_key(kind="emulator", format=EMULATOR_FORMAT, model=model_digest(model),
                       mode=mode.key(), input_shape={k: list(v) for k, v in (shapes or {}).items()},
                       faults=[f.key() for f in self.faults], overflow=self.overflow,
                       atc_options=key_options(options, aipp), onnxruntime=ort_version(),
                       device_formats=self.device_formats,
                       cube_kernels=self.cube_kernels)
        label = _safe_name(model_label(model))

        def build(tmp: Path) -> None:
            from ...dump.om_json import OmOp, write_om_json
            from ...graph.external import WeightSink
            from .layouts import om_desc
            from .rewrite import emulate_graph

            # the model as in the file: ATC parses the If branches a conversion inlines or drops
            # too (a Loop in an untaken branch, an op of another domain there)
            source = load_model(model, weights=False)  # IR 3's weights: a run refuses them
            refused = parser_refusal(model_label(model), source)  # E19010/E11010, parser_refusals
            if refused:
                raise ConversionError(refused)
            try:  # external-data weights go straight to model.onnx.data
                with float32_cube(self.cube_fp32):  # what a kept cube op computes in
                    proto, plan = emulate_graph(
                        model, mode, input_shape=shapes, faults=self.faults, overflow=self.overflow,
                        device_formats=self.device_formats,
                        sink=WeightSink(tmp, MODEL_FILE + ".data"))
            except AscendAccuracyError:
                raise
            except Exception as exc:  # onnx/onnxruntime errors on a model they cannot handle
                raise ConversionError(f"emulator could not convert {label!r}: "
                                      f"{type(exc).__name__}: {exc}") from exc
            plan.info.update({"mode": mode.name, "atc_options": options,  # as what they are
                              "listed_initializers": listed_initializers(source),
                              "atc_quant": quant_ops(source.graph)})  # atc_quant.py
            plan.save(tmp / PLAN_FILE)
            info = tensor_info_to_json(tensor_info(proto))
            (tmp / TENSOR_INFO_FILE).write_text(json.dumps(info, separators=(",", ":")),
                                               encoding="utf-8")
            _save_model(proto, tmp / MODEL_FILE)
            pre = []
            if aipp is not None:
                (tmp / AIPP_FILE).write_text(aipp[0], encoding="utf-8")
                pre = aipp_om_ops(aipp[0], plan.model_inputs, options["insert_op_conf"])
            ops = pre + [OmOp(name=op.name, type=op.op_type, id=k + len(pre), original_names=op.original_names,
                        output_origins=tuple(s.origin for s in op.outputs), inputs=op.input_refs,
                        output_descs=tuple(om_desc(s, op.onnx_types) for s in op.outputs))
                   for k, op in enumerate(plan.ops)]
            for name, text in mode.config_files().items():  # the files the command names,
                (tmp / name).write_text(text, encoding="utf-8")  # beside the om json, as ATC's
            shape_text = ";".join(f"{k}:" + ",".join(map(str, v))
                                  for k, v in (shapes or {}).items())
            shape_opt = [f"--input_shape={shape_text}"] if shape_text else []  # as ATC's has it
            cmdline = " ".join(["atc(emulator)", "--framework=5", f"--model={label}.onnx"] +
                               shape_opt + [f"--{k}={v}" for k, v in mode.atc_options()] +
                               [f"--{k}={v}" for k, v in sorted(options.items())])
            write_om_json(tmp / OM_JSON_FILE, label, ops,
                          attrs={"atc_cmdline": cmdline, "soc_version": "emulator",
                                 "atc_version": f"emulator-{EMULATOR_FORMAT}/onnxruntime-{ort_version()}"})

        entry = self.cache.get_or_build("emulator", key, build)
        plan_json = json.loads((entry / PLAN_FILE).read_text(encoding="utf-8"))
        plan_info = plan_json.get("info", {})
        warn_resize(model_label(model), plan_info.get("atc_resize"))  # at each conversion
        warn_quant(model_label(model), plan_info.get("atc_quant"))
        path_text = path_warning(model_label(model), model)  # where it lies, not in the key
        if path_text:
            warn_at_caller(AtcPathWarning(path_text))  # at the test's line (core.atc_paths)
        problem = folded_keep_problem(  # at each conversion, a cache hit too (folded_keeps.py)
            mode.keep_dtype, plan_info.get("folded") or (),
            (m for op in plan_json.get("ops", ()) for m in op.get("original_names") or ()),
            model_label(model), model)  # its OpType:: entries: the model's types
        if problem:
            raise ConfigError("keep_dtype", problem)
        return ConvertedModel(backend=self.name, path=entry / MODEL_FILE,
                              source_model=Path(model) if isinstance(model, (str, Path)) else Path(label),
                              mode=mode, key=key, model_name=label, om_json=entry / OM_JSON_FILE,
                              info={"emulator": plan_info, "overflow": self.overflow,
                                    "insert_op_conf": options.get("insert_op_conf"),  # as given
                                    "faults": [f.describe() for f in self.faults],
                                    "cube_kernels": self.cube_kernels,
                                    "cache_entry": str(entry)})

    def fusion_rules(self, converted: ConvertedModel) -> List[str]:
        """The fusion rules that fused something in ``converted``, section-qualified as the
        fusion switch file needs them (``GraphFusion:X`` / ``UBFusion:X``), in first-use order."""
        from .fusion import RULE_SECTION

        plan = Plan.load(Path(converted.path).parent / PLAN_FILE)
        rules: List[str] = []
        for op in plan.ops:
            for r in op.rules:
                q = f"{RULE_SECTION.get(r, 'GraphFusion')}:{r}"
                if q not in rules:
                    rules.append(q)
        return rules

    # -- run -------------------------------------------------------------------------------
    def outputs(self, converted: ConvertedModel, inputs: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
        """``om.outputs``: one run without dumps, the plain outputs keyed by ONNX output name."""
        state = self._state(converted)
        inputs, _ = preprocess(state.aipp, inputs, converted.info.get("insert_op_conf"))
        feeds = check_inputs(state.input_model, inputs, where=f"inputs of {converted.model_name!r}")
        names = list(state.plan.model_outputs)
        try:
            streamed = state.segmented(names).run(feeds)
            streamed.ensure(names)
        except Exception as exc:
            from .op_values import run_failed

            raise run_failed(converted.model_name, exc, feeds, converted.source_model) from exc
        # copies: the run's arrays live in the shared arena, given back once they are dropped
        out = {n: np.array(streamed.values[n]) for n in names}
        streamed.values.clear()
        streamed.close()
        return out

    def run(self, converted: ConvertedModel, inputs: Mapping[str, np.ndarray], *, dump: bool = True,
            dump_dir=None, dump_mode: Optional[str] = None) -> DumpSet:
        from ...dump.layout import AscendDumpWriter
        from ...dump.loader import load_dump

        mode = self.dump_mode if dump_mode is None else check_dump_mode(dump_mode, "run dump_mode")
        with_inputs, with_outputs = dumps_inputs(mode), dumps_outputs(mode)
        if not dump:
            values = self.outputs(converted, inputs)
            return DumpSet([OpRecord(name=n, op_type="NetOutput", order=k,
                                     outputs=(TensorRef.from_array(v),))
                            for k, (n, v) in enumerate(values.items())],
                           kind="memory", model_name=converted.model_name,
                           meta={"backend": "emulator", "mode": converted.mode.name,
                                 "dumped": False})
        state = self._state(converted)
        plan = state.plan
        inputs, aipp_ops = preprocess(state.aipp, inputs, converted.info.get("insert_op_conf"))
        feeds = check_inputs(state.input_model, inputs, where=f"inputs of {converted.model_name!r}")
        run = op_values(state, converted.model_name, feeds, with_inputs=with_inputs,
                        with_outputs=with_outputs, source_model=converted.source_model)
        root = Path(dump_dir) if dump_dir is not None else self._own_dump_dir()
        leaf = _fresh_leaf(root, converted.model_name)
        base_ts = int(time.time() * 1e6)
        try:
            with AscendDumpWriter(leaf, private=True) as writer:  # made by mkdir for this run alone
                # every file's name is known now: a thread creates them ahead of the writes
                writer.create_ahead(
                    [("Aipp", name, len(plan.ops) + k, 0, base_ts - len(aipp_ops) + k)
                     for k, (name, _, _) in enumerate(aipp_ops)]
                    + [(op.op_type, op.name, k, 0, base_ts + k) for k, op in enumerate(plan.ops)])
                for k, (name, raw, out) in enumerate(aipp_ops):  # the Aipp ops run first
                    writer.write_op("Aipp", name, [raw] if with_inputs else [],
                                    [out] if with_outputs else [], task_id=len(plan.ops) + k,
                                    timestamp_us=base_ts - len(aipp_ops) + k,  # AIPP writes 5HD:
                                    output_formats=[aipp_format(self.device_formats, out)])
                for v in run:
                    try:
                        writer.write_op(v.op.op_type, v.op.name, v.inputs, v.outputs,
                                        output_origins=[s.origin for s in v.out_slots],
                                        input_dtypes=[stored_type(s) for s in v.in_slots],
                                        output_dtypes=[stored_type(s) for s in v.out_slots],
                                        input_formats=[slot_layout(s, a)
                                                       for s, a in zip(v.in_slots, v.inputs)],
                                        output_formats=[slot_layout(s, a)
                                                        for s, a in zip(v.out_slots, v.outputs)],
                                        task_id=v.k, timestamp_us=base_ts + v.k)
                    except UnsupportedDtype as exc:  # a value no dump holds (a string)
                        raise BackendError(f"emulator run of {converted.model_name!r}: op "
                                           f"{v.op.name!r} ({v.op.op_type}): {exc}") from None
                    except DumpWriteError as exc:
                        from .dump_space import dump_write_failed

                        writer.close()  # no file is created ahead while the partial dump goes
                        raise dump_write_failed(exc, converted.model_name, leaf,
                                                plan.ops[v.k:], written=writer.written,
                                                dump_mode=mode) from exc
        finally:  # the run's tensors are written (or abandoned): their arena memory goes back
            run.close()
        result = load_dump(leaf, om_json=state.om_graph(converted), model_name=converted.model_name,
                           written=writer.parsed)  # its headers, not read back from the files
        result.meta.update(self.run_meta(converted, root, mode))
        return result

    def run_meta(self, converted: ConvertedModel, root, mode: str) -> dict:
        """What a run's DumpSet says of it beyond its files (``meta``)."""
        info = converted.info.get("emulator", {})
        return {"om_json": str(converted.om_json),  # (as load_dump records the file)
                "backend": "emulator", "mode": converted.mode.name, "overflow": self.overflow,
                "dump_dir": str(root), "dump_mode": mode,
                "faults_active": info.get("faults_active", {}),
                # nodes computed at conversion (constants, static shapes): never run; nodes
                # inside an If run as one operator: never dumped ({node: that operator})
                "folded_ops": list(info.get("folded", [])), "inside_ops": info.get("inside", {})}

    def run_compared(self, converted: ConvertedModel, inputs: Mapping[str, np.ndarray], golden,
                     *, kl: bool = True, dump_dir=None, rerun=None, progress=None) -> DumpSet:
        """``run(converted, inputs, dump_dir=dump_dir)`` compared against ``golden`` while it
        runs, writing no dump (``compared_run``): a ``ComparedRun`` whose
        ``compare_dumps(run, golden, kl=kl)`` is the comparison made, and which runs again with
        its dump written when anything reads its values. ``rerun``: how to run again (default:
        ``run`` with ``dump_dir``); ``progress``: ``compare_dumps``'s callback, after each pair
        measured. Where the run cannot be compared so (dump mode other than
        ``output``, an output whose shape or dtype is not planned, a golden that is not a
        DumpSet), the run's own DumpSet, written."""
        from .compared_run import compare_while_running

        def again() -> DumpSet:
            return self.run(converted, inputs, dump_dir=dump_dir)

        if self.dump_mode == "output" and isinstance(golden, DumpSet):
            root = Path(dump_dir) if dump_dir is not None else ""
            done = compare_while_running(self, self._state(converted), converted, inputs,
                                         golden, kl=kl, rerun=rerun or again,
                                         meta=self.run_meta(converted, root, "output"),
                                         progress=progress)
            if done is not None:
                return done
        return (rerun or again)()

    def _state(self, converted: ConvertedModel) -> "_RunState":
        state = self._states.get(converted.key)
        if state is None:
            state = _RunState.load(converted, self.threads)
            self._states.clear()  # one loaded model at a time: weights are held once
            self._states[converted.key] = state
        return state


@dataclass
class _RunState:
    """A converted model loaded for running: plan, the model (run in segments, sessions built
    on first use and kept per fetched set), the model's input declarations and the
    initializers that dumps show as operator inputs."""

    plan: Plan
    model: object
    input_model: object
    inits: Mapping[str, np.ndarray]
    aipp: Optional[AippInputs] = None  # the --insert_op_conf blocks, by input name
    threads: int = 0
    folder: Optional[str] = None  # external-data weights are read from here (graph.external)
    info: Optional[Mapping[str, tuple]] = None  # the model's tensor_info (TENSOR_INFO_FILE)
    _segmented: Dict[tuple, object] = field(default_factory=dict)
    _om_graph: object = None

    def om_graph(self, converted: ConvertedModel):
        """The converted model's om json, read once (a cache entry's files do not change)."""
        if self._om_graph is None:
            from ...dump.om_json import read_om_json

            self._om_graph = read_om_json(converted.om_json)
        return self._om_graph

    def segmented(self, wanted, *, writing: bool = False):
        """The model run in segments fetching ``wanted``; ``writing``: this thread writes the
        tensors out while onnxruntime computes (``ort_threads_beside_writer``)."""
        from ...graph.onnx_graph import ort_threads_beside_writer
        from ...graph.stream import SegmentedModel

        key = (tuple(wanted), writing)
        if key not in self._segmented:
            threads = self.threads or (ort_threads_beside_writer() if writing else 0)
            self._segmented[key] = SegmentedModel(self.model, key[0], threads=threads,
                                                  folder=self.folder, info=self.info, reserve=True)
        return self._segmented[key]

    @staticmethod
    def load(converted: ConvertedModel, threads: int) -> "_RunState":
        import onnx

        from ...graph.external import WeightValues, load_model_refs

        plan = Plan.load(Path(converted.path).parent / PLAN_FILE)
        proto, folder = load_model_refs(converted.path)  # big external weights stay in their file
        wanted = {s.fetch for op in plan.ops for s in op.inputs if s.source == "init"}
        inits = WeightValues(proto, folder, wanted)  # external ones read when dumped, one at a time
        spec = onnx.ModelProto()
        spec.graph.input.extend(i for i in proto.graph.input if i.name in set(plan.model_inputs))
        aipp = AippInputs.load(Path(converted.path).parent, plan.model_inputs, declared=spec)
        for name in plan.info.get("listed_initializers") or ():  # refused as what they are
            spec.graph.input.add().name = spec.graph.initializer.add().name = name
        return _RunState(plan, proto, spec, inits, aipp, threads, folder,
                         _saved_tensor_info(Path(converted.path).parent / TENSOR_INFO_FILE))


def _saved_tensor_info(path: Path) -> Optional[Dict[str, tuple]]:
    """The entry's saved ``tensor_info``; None (inferred again by the run) when the file is not
    there, e.g. a converted model handed in from elsewhere."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise BackendError(f"{path}: cannot read the emulator's tensor_info file "
                           f"({type(exc).__name__}: {exc})") from None
    try:
        return tensor_info_from_json(json.loads(text))
    except ValueError as exc:
        raise BackendError(f"{path}: not a tensor_info file of the emulator ({exc}); delete "
                           f"the cache entry {path.parent} to rebuild it") from None


def _fresh_leaf(root: Path, model_name: str) -> Path:
    """The run's step directory: a later run into the same dump path in the same second takes
    the next step number (as a device does for repeated inferences), never mixing files."""
    from datetime import datetime

    from ...dump.layout import run_dir

    when = datetime.now()
    step = 0
    while True:  # mkdir is atomic: two processes sharing a dump path never get the same leaf
        leaf = run_dir(root, model_name=model_name, step=step, when=when)
        leaf.parent.mkdir(parents=True, exist_ok=True)
        try:
            leaf.mkdir()
            return leaf
        except FileExistsError:
            step += 1


#: a converted model bigger than this keeps its weights in ``model.onnx.data`` (ONNX external
#: data: protobuf cannot serialise 2 GB)
EXTERNAL_DATA_BYTES = 1 << 30


def _save_model(proto, path: Path) -> None:
    weights = sum(len(t.raw_data) for t in proto.graph.initializer)
    if weights > EXTERNAL_DATA_BYTES:
        import onnx

        onnx.save_model(proto, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                        location=path.name + ".data", size_threshold=1024)
        return
    data = proto.SerializeToString()
    path.write_bytes(data)


def _safe_name(name: str) -> str:
    out = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)
    return out or "model"
