"""``AscendBackend``: ATC conversion into the cache, runs on an Ascend device with dumps.

convert(model, mode)
    Reads the ONNX inputs (names, static shapes), builds the ATC argv (``atc_command``), and
    builds a cache entry in a private directory that the cache renames into place only when ATC
    succeeded. The cache key covers the sha256 of the model bytes, ``mode.key()``, the ATC
    arguments (minus paths) and the content of copied config files, the toolkit version (with
    none recorded, the ``atc`` executable's path, size and mtime) and the soc version. An entry holds ``{name}.om``, ``{name}.json`` (``atc --mode=1``, the fused-op
    mapping), the config files, ``atc.log``, ``plog/`` and ``atc_command.json`` (the exact argv of
    both ATC calls; paths in them are relative to the entry). Nothing is written to the cache
    when anything fails: bad names and shapes are refused before ATC runs, and a failed ATC run
    leaves only a copy of its log in a temporary directory named in the error.

outputs(converted, inputs)
    One run without dumps: ``{ONNX output name: array}``, om outputs named by the om json's
    ``attr_model_out_nodes_name`` (``output_names``). ``run(dump=False)`` returns the same.

run(converted, inputs, dump=True)
    Runs once on the device (opened once per backend, closed by ``close()``), with an acl.json
    dump configuration pointing at a new directory, finds this run's dump leaf and returns it as
    a DumpSet read by ``dump.loader.load_dump`` with the om json attached (fused-op names);
    its ``meta["folded_ops"]`` lists the golden ops the conversion folded (``atc_folded``),
    which the comparison counts "folded at conversion", not unmatched.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ...core.cache import Cache, make_key
from ...dump.model import DumpSet
from ...graph.content_digests import model_digest
from ...errors import BackendError, ConfigError, ConversionError
from ...core.modes import Mode, resolve_mode
from ..base import ConvertedModel
from ..option_guard import checked_options
from ..dump_modes import check_dump_mode
from .atc_command import AtcCommand, build_atc_command, om_to_json_command
from .atc_runner import parse_atc_errors, run_atc, stderr_progress
from .output_names import om_output_names
from .runtime import AscendRuntime
from .soc_names import is_soc_refusal, mismatch_advice, refused_soc_advice
from .toolkit import Toolkit, find_toolkit

NAMESPACE = "ascend-om"
#: 2: keyed by ``model_digest`` (the .onnx file and its external data files; 1 hashed the
#: .onnx alone), recorded in the entry's info as ``model_digest``
ENTRY_FORMAT = 2
RECORD = "atc_command.json"
_NAME_OK = re.compile(r"[A-Za-z0-9_-]+")


class AscendBackend:
    """The real Ascend backend (ATC + ACL). See the module docstring."""

    name = "ascend"

    def __init__(self, cache: Cache, *, device_id: int = 0, soc_version: Optional[str] = None,
                 atc: "str | os.PathLike[str] | None" = None, timeout: float = 3600,
                 runtime: Optional[str] = None, precision_policy: str = "auto",
                 dump_mode: str = "all", progress: Optional[Callable[[str], None]] = stderr_progress):
        self.cache = cache
        self.device_id = device_id
        self.timeout = float(timeout)
        self.precision_policy = precision_policy
        self.dump_mode = check_dump_mode(dump_mode, "AscendBackend dump_mode")
        self.progress = progress
        self._explicit_soc = soc_version
        self._explicit_atc = atc
        self._toolkit: Optional[Toolkit] = None
        self._soc: Optional[str] = soc_version
        self._runtime = AscendRuntime(device_id, runtime=runtime)
        self._runs_root: Optional[Path] = None
        self._run_count = 0
        self._output_names: Dict[str, List[str]] = {}
        self._folded: Dict[str, List[str]] = {}

    # -- environment -------------------------------------------------------------------------------
    @property
    def toolkit(self) -> Toolkit:
        if self._toolkit is None:
            self._toolkit = find_toolkit(self._explicit_atc)
        return self._toolkit

    @property
    def runtime(self) -> AscendRuntime:
        return self._runtime

    def soc_version(self) -> str:
        """The explicit soc version, else the one the runtime reports (``acl.get_soc_name()``)."""
        if self._soc is None:
            try:
                soc = self._runtime.soc_version()
            except BackendError as exc:
                if not self._device_may_exist():  # the device is what is wrong: no soc advice
                    raise  # ("Ascend device 5 does not exist: this machine has 2 device(s) ...")
                raise ConfigError("soc_version", f"not given and the runtime cannot report it ({exc}); "
                                                 "pass --soc-version=Ascend310P3 (or your chip)") from exc
            if not soc:
                raise ConfigError("soc_version", "not given and the runtime reports none; pass "
                                                 "--soc-version=Ascend310P3 (or your chip)")
            self._soc = soc
        return self._soc

    def _device_may_exist(self) -> bool:
        """False when the runtime counts fewer devices than ``device_id`` needs: a
        ``--soc-version`` would convert, and every run would still fail on the device."""
        from .device_count import runtime_device_count

        count = runtime_device_count()
        return count is None or 0 <= self.device_id < count

    def describe(self) -> str:
        try:
            tk = self.toolkit.describe()
        except ConversionError:
            tk = "ATC not found"
        return (f"ascend (device {self.device_id}, soc {self._soc or 'from runtime'}, {tk}, "
                f"runtime {self._runtime.runtime})")

    def close(self) -> None:
        """Close the device and delete the per-run dump directories this backend created."""
        self._runtime.close()
        root, self._runs_root = self._runs_root, None
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)

    def __enter__(self) -> "AscendBackend":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- convert -----------------------------------------------------------------------------------
    def convert(self, model: "str | os.PathLike[str]", mode: "Mode | str | None" = None, *,
                input_shape: Optional[Mapping[str, Sequence[int]]] = None,
                atc_options: Optional[Mapping[str, str]] = None) -> ConvertedModel:
        model = Path(model)
        mode = resolve_mode(mode)
        command, info = self._command(model, mode, input_shape, atc_options)
        toolkit = self.toolkit
        soc = self.soc_version()
        # the .onnx file and its external data files (ATC reads both): a model whose weights
        # changed in model.onnx.data alone is another model, never the cached .om of the old one
        digest = model_digest(model)
        # the toolkit's version, or with none recorded the atc executable itself (Toolkit.identity)
        key = make_key(backend=self.name, format=ENTRY_FORMAT, model=digest, mode=mode.key(),
                       atc=command.key_parts(), toolkit_version=toolkit.identity(), soc_version=soc)

        def build(tmp: Path) -> None:
            self._build_entry(tmp, command, model, mode, digest, toolkit, soc, info)

        entry = self.cache.get_or_build(NAMESPACE, key, build)
        return self._converted(entry, key, model, mode)

    def atc_command(self, model: "str | os.PathLike[str]", mode: "Mode | str | None" = None, *,
                    input_shape=None, atc_options: Optional[Mapping[str, str]] = None) -> AtcCommand:
        """The ATC command ``convert`` runs for ``model`` under ``mode``: the one builder, with
        this backend's toolkit version, soc version and precision policy (the diagnosis prints
        its options as the fix). ``input_shape``: ``{name: dims}`` or ATC's ``"x:1,16"``."""
        return self._command(Path(model), resolve_mode(mode), input_shape, atc_options)[0]

    def _command(self, model: Path, mode: Mode, input_shape, atc_options):
        """(AtcCommand, ``read_onnx_io`` of the model): what ``convert`` and ``atc_command`` share."""
        from ...graph.onnx_graph import parse_input_shape

        if not model.is_file():
            raise ConfigError(os.fspath(model), "model file does not exist")
        model_name = om_model_name(model)
        info = read_onnx_io(model)
        input_shape, atc_options = checked_options(mode, input_shape, atc_options,
                                                   emulated=False)
        if isinstance(input_shape, str):
            input_shape = parse_input_shape(input_shape)
        shapes = input_shapes_for_atc(model, info["inputs"], input_shape)
        toolkit = self.toolkit
        # NCHW with an AIPP file: ATC takes --input_format NCHW or NHWC beside --insert_op_conf
        # (atlasatcparam_16_0015), ND there is refused, and NCHW is ONNX's default for every input
        aipp = bool(atc_options.get("insert_op_conf"))
        input_format = "NCHW" if aipp or all(len(d) == 4 for d in shapes.values()) else "ND"
        return build_atc_command(
            toolkit.atc, model, mode, output_prefix=model_name, soc_version=self.soc_version(),
            input_shape=shapes if input_shape else None, input_format=input_format,
            atc_options=atc_options, toolkit_version=toolkit.version,
            precision_policy=self.precision_policy, toolkit_version_file=toolkit.version_file), info

    def _build_entry(self, tmp: Path, command: AtcCommand, model: Path, mode: Mode, digest: str,
                     toolkit: Toolkit, soc: str, info: Dict[str, List]) -> None:
        _check_paths(tmp, command, self.cache.root, model)
        for name, text in command.config_files.items():
            (tmp / name).write_text(text, encoding="utf-8")
        for name, src in command.copied_files.items():
            shutil.copyfile(src, tmp / name)
        what = f"{model.name} (mode {mode.name})"
        start = time.time()
        self._atc(command.argv, tmp, what, toolkit)
        om = tmp / command.om_name
        if not om.is_file():
            raise ConversionError(f"ATC reported success converting {what} but wrote no {om.name}",
                                  command=command.argv)
        json_name = command.output_prefix + ".json"
        json_argv = om_to_json_command(toolkit.atc, command.om_name, json_name)
        self._atc(json_argv, tmp, f"{command.om_name} to json (atc --mode=1)", toolkit, log="atc_json.log")
        if not (tmp / json_name).is_file():
            raise ConversionError(f"atc --mode=1 reported success but wrote no {json_name}", command=json_argv)
        for scratch in tmp.glob("kernel_meta*"):
            shutil.rmtree(scratch, ignore_errors=True)
        record = {
            "format": ENTRY_FORMAT,
            "model": os.fspath(model.resolve()), "model_digest": digest, "model_name": command.output_prefix,
            "mode": mode.key(), "mode_name": mode.name,
            "atc_command": list(command.argv), "om_json_command": list(json_argv),
            "cwd": "the cache entry directory (paths in the commands are relative to it)",
            "precision_option": command.precision_option,
            "toolkit_version": toolkit.version, "toolkit_home": os.fspath(toolkit.home) if toolkit.home else None,
            "soc_version": soc, "input_names": info["input_names"], "output_names": info["output_names"],
            "seconds": round(time.time() - start, 3),
        }
        (tmp / RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")

    def _atc(self, argv, cwd: Path, what: str, toolkit: Toolkit, log: str = "atc.log") -> None:
        try:
            run_atc(argv, cwd=cwd, timeout=self.timeout, what=what, progress=self.progress,
                    toolkit_version=toolkit.version, log_name=log)
        except ConversionError as exc:
            kept = _keep_failure_logs(cwd)
            note = f"\nfull ATC log kept at {kept}" if kept else ""
            text = str(exc)
            if self._soc and is_soc_refusal(exc.errors or parse_atc_errors(exc.log_tail)):
                head, sep, rest = text.partition("\ncommand: ")  # the advice before the logs
                device = self._device_soc()
                if device is None and self._explicit_soc is None:  # the chip came from it
                    device = (self.device_id, self._soc)
                advice = refused_soc_advice(self._soc, toolkit.home, device,
                                            given=self._explicit_soc is not None,
                                            toolkit=toolkit.describe())
                text = head + "\n" + advice + sep + rest
            raise ConversionError(text + note, command=exc.command, log_tail=exc.log_tail,
                                  code=exc.code, errors=exc.errors) from exc

    def _converted(self, entry: Path, key: str, model: Path, mode: Mode) -> ConvertedModel:
        record = json.loads((entry / RECORD).read_text(encoding="utf-8"))
        name = record["model_name"]
        info = dict(record)
        info["entry"] = os.fspath(entry)
        info["subgraph_names"] = _subgraph_names(entry / f"{name}.json")
        return ConvertedModel(backend=self.name, path=entry / f"{name}.om", source_model=model,
                              mode=mode, key=key, model_name=name, om_json=entry / f"{name}.json",
                              info=info)

    # -- run ---------------------------------------------------------------------------------------
    def outputs(self, converted: ConvertedModel, inputs: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
        """``om.outputs``: one run without dumps, ``{ONNX output name: array}``. Om output ``i``
        is named by the om json's ``attr_model_out_nodes_name`` (``output_names``), not by ONNX
        ``graph.output`` order, which ATC does not keep."""
        arrays, expected = self._inputs(converted, inputs)
        try:
            result = self._runtime.run(converted.path, arrays, model_name=converted.model_name,
                                       input_names=expected)
        except BackendError as exc:
            self._raise_soc_mismatch(exc, converted)
            raise
        names = self._output_names.get(converted.key)
        if names is None or len(names) != len(result.outputs):
            names = om_output_names(converted.om_json, converted.info.get("output_names") or (),
                                    len(result.outputs), converted.source_model)
            self._output_names[converted.key] = names
        return dict(zip(names, result.outputs))

    def run(self, converted: ConvertedModel, inputs: Mapping[str, np.ndarray], *, dump: bool = True,
            dump_dir: "str | os.PathLike[str] | None" = None, dump_mode: Optional[str] = None) -> DumpSet:
        mode = self.dump_mode if dump_mode is None else check_dump_mode(dump_mode, "run dump_mode")
        if not dump:
            ds = DumpSet.from_arrays({n: [a] for n, a in self.outputs(converted, inputs).items()},
                                     kind="ascend-outputs")
            ds.meta.update(self._meta(converted), dumped=False)
            return ds
        arrays, expected = self._inputs(converted, inputs)
        dump_path = Path(dump_dir) if dump_dir is not None else self._new_run_dir(converted.model_name)
        try:
            result = self._runtime.run(
                converted.path, arrays, model_name=converted.model_name, dump_path=dump_path,
                dump_mode=mode, input_names=expected,
                dump_model_names=converted.info.get("subgraph_names") or ())
        except BackendError as exc:
            self._raise_soc_mismatch(exc, converted)
            raise
        from ...dump.loader import load_dump

        ds = load_dump(result.dump.path, om_json=converted.om_json, model_name=converted.model_name)
        ds.meta.update(self._meta(converted))
        ds.meta.update(dump_dir=os.fspath(result.dump.path), acl_json=os.fspath(result.acl_json),
                       dump_mode=mode, folded_ops=list(self._folded_ops(converted)))
        return ds

    def _folded_ops(self, converted: ConvertedModel) -> List[str]:
        """The golden ops this conversion folded (``atc_folded``: its om json's ``Const``
        origins, the model's ``Constant`` nodes), read once per converted model."""
        folded = self._folded.get(converted.key)
        if folded is None:
            from .atc_folded import atc_folded_ops

            folded = self._folded[converted.key] = atc_folded_ops(converted.om_json,
                                                                  converted.source_model)
        return folded

    def _device_soc(self) -> Optional[Tuple[int, str]]:
        """(device id, the chip it reports), or None where the runtime cannot say."""
        try:
            soc = self._runtime.soc_version()
        except BackendError:
            return None
        return (self.device_id, soc) if soc else None

    def _raise_soc_mismatch(self, exc: BackendError, converted: ConvertedModel) -> None:
        """Raise ``exc`` with the cause named where the .om was converted for another chip than
        the one the device reports (``acl.get_soc_name()``); else return."""
        built_for = converted.info.get("soc_version")
        device_soc = (self._device_soc() or (None, None))[1]
        if built_for and device_soc and built_for != device_soc:
            advice = mismatch_advice(built_for, self.device_id, device_soc)
            raise BackendError(f"{exc}\n{advice}") from exc

    def _inputs(self, converted: ConvertedModel, inputs: Mapping[str, np.ndarray]):
        if converted.backend != self.name:
            raise BackendError(f"{converted.path} was converted by the {converted.backend} backend, "
                               f"not by ascend")
        expected = list(converted.info.get("input_names") or ())
        missing = [n for n in expected if n not in inputs]
        if missing:
            raise ConfigError("inputs", f"missing model input(s) {missing}; the model takes {expected}")
        return {n: np.asarray(inputs[n]) for n in expected}, expected

    def _meta(self, converted: ConvertedModel) -> Dict[str, object]:
        return {"backend": self.name, "device_id": self.device_id, "runtime": self._runtime.driver.name,
                "mode": converted.mode.name, "soc_version": converted.info.get("soc_version"),
                "toolkit_version": converted.info.get("toolkit_version"), "om": os.fspath(converted.path)}

    def _new_run_dir(self, model_name: str) -> Path:
        if self._runs_root is None:
            self._runs_root = Path(tempfile.mkdtemp(prefix="ascend-accuracy-runs-"))
        self._run_count += 1
        return self._runs_root / f"{self._run_count:04d}-{model_name}"


# -- helpers -----------------------------------------------------------------------------------
def om_model_name(model: Path) -> str:
    """The .om stem (= the model name in acl.json and in dump paths) for an ONNX file: the stem
    with ``.``, ``/``, ``\\`` and spaces made ``_`` (Ascend's rule); anything else outside
    ``[A-Za-z0-9_-]`` is refused, because ACL would write it into dump directory names."""
    stem = re.sub(r"[./\\ ]", "_", model.stem)
    if not stem or not _NAME_OK.fullmatch(stem):
        bad = sorted({c for c in stem if not _NAME_OK.fullmatch(c)})
        raise ConfigError(os.fspath(model), f"model name {model.stem!r} contains characters that are "
                                            f"invalid in Ascend dump paths ({' '.join(map(repr, bad)) or 'empty'}); "
                                            "rename the file using letters, digits, '_' or '-'")
    return stem


def read_onnx_io(model: Path) -> Dict[str, List]:
    """Input names with dims (-1 for dynamic) and output names, without loading weights."""
    import onnx

    try:
        proto = onnx.load(os.fspath(model), load_external_data=False)
    except Exception as exc:
        raise ConfigError(os.fspath(model), f"not a readable ONNX model ({exc})") from exc
    inits = {i.name for i in proto.graph.initializer}
    inputs: Dict[str, Tuple[int, ...]] = {}
    for inp in proto.graph.input:
        if inp.name in inits:
            continue
        inputs[inp.name] = tuple(d.dim_value if d.HasField("dim_value") else -1
                                 for d in inp.type.tensor_type.shape.dim)
    return {"inputs": inputs, "input_names": list(inputs), "output_names": [o.name for o in proto.graph.output]}


def input_shapes_for_atc(model: Path, inputs: Mapping[str, Tuple[int, ...]],
                         given: Optional[Mapping[str, Sequence[int]]]) -> Dict[str, Tuple[int, ...]]:
    """Static shape of every input: the model's, overridden by ``given``; dynamic ones must be given."""
    given = dict(given or {})
    unknown = sorted(set(given) - set(inputs))
    if unknown:
        raise ConfigError("input_shape", f"{unknown} are not inputs of {model.name} (inputs: {list(inputs)})")
    shapes = {name: tuple(int(d) for d in given.get(name, dims)) for name, dims in inputs.items()}
    left = [name for name, dims in shapes.items() if any(d < 0 for d in dims)]
    if left:  # the advice the library gives, a shape to paste (graph.shape_advice)
        from functools import partial

        from ...graph.onnx_graph import make_inputs, session_options
        from ...graph.shape_advice import dynamic_shape_error
        from ...graph.shape_trial import runner

        what = "; ".join(f"input {n!r} has dynamic dims {list(inputs[n])}" for n in left)
        raise dynamic_shape_error(os.fspath(model), what,
                                  {n: [(None if d < 0 else d, "") for d in shapes[n]] for n in left},
                                  {n: [(d, "") for d in shapes[n]] for n in given}, list(inputs),
                                  runner=partial(runner, os.fspath(model), 0, make_inputs,
                                                 session_options))  # (run when shown)
    return shapes


def _subgraph_names(om_json: Path) -> List[str]:
    """Names of the om json's sub-graphs for acl.json's dump_list, as the loader expects their
    dumps (``OmGraph.sub_graphs``: every graph after the first and every op's
    ``subgraph_name``, which msit's ``get_sub_graph_name`` lists): from ``graph[1:]`` alone, a
    branch an If names only by its op went undumped and its ops left the comparison (H107)."""
    from ...dump.om_json import read_om_json
    from ...errors import DumpFormatError

    try:
        return list(read_om_json(om_json).sub_graphs)
    except DumpFormatError:  # (the om json is read again, with its error, where it is used)
        return []


def _check_paths(tmp: Path, command: AtcCommand, cache_root, model: Path) -> None:
    """Refuse, before ATC runs, a conversion whose model, or whose config files
    (``--keep_dtype=keep_dtype.cfg``, the AIPP file's copy) read from their build folder under
    the cache, ATC would refuse by their path (``core.atc_paths``): a project under ``My
    Projects/`` got ATC's E10001 on ``keep_dtype.cfg`` with "this toolkit may not know that
    option or value: choose another mode" (a trial with the fake atc)."""
    from ...core.atc_paths import ATC_PATH_RULE, CHECKED_OPTIONS, refused_ascii

    bad = refused_ascii(model)
    if bad:
        raise ConfigError(os.fspath(model), (
            f"its resolved path {os.path.realpath(model)!r} holds "
            f"{', '.join(repr(c) for c in bad)}, and {ATC_PATH_RULE}: copy or move the model "
            f"(with its external data files, if any) to a folder whose path holds none of them "
            f"(a link does not help: ATC checks where it resolves)"))
    files = [*command.config_files, *command.copied_files]
    checked = [opt for opt in _options_naming(command, files) if opt in CHECKED_OPTIONS]
    bad = refused_ascii(tmp) if checked else ""
    if not bad:
        return
    real = os.path.realpath(os.fspath(cache_root))
    named = ", ".join(f"--{opt}={command.option(opt)}" for opt in checked)
    raise ConfigError("cache directory", (
        f"{real!r} holds {', '.join(repr(c) for c in bad)}; ATC runs in a build folder there "
        f"and reads this conversion's config files from it ({named}), and {ATC_PATH_RULE}: give "
        f"the cache a folder whose path holds none of them (pytest --accuracy-cache-dir=DIR or "
        f"ini ascend_accuracy_cache_dir; ascend-accuracy diagnose --cache-dir DIR)"))


def _options_naming(command: AtcCommand, files) -> List[str]:
    """The ATC options of ``command`` whose value is one of ``files``, in argv order."""
    return [a[2:].partition("=")[0] for a in command.argv[1:]
            if a.startswith("--") and a.partition("=")[2] in files]


def _keep_failure_logs(build_dir: Path) -> Optional[Path]:
    """Copy a failed conversion's logs out of the build dir (which the cache deletes)."""
    try:
        keep = Path(tempfile.mkdtemp(prefix="ascend-atc-failed-"))
        for name in ("atc.log", "atc_json.log", "plog"):
            src = build_dir / name
            if src.is_dir():
                shutil.copytree(src, keep / name)
            elif src.is_file():
                shutil.copy2(src, keep / name)
        return keep
    except OSError:
        return None
