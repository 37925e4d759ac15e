"""A FAKE ``atc`` for tests: validates arguments like ATC and writes a fake artefact.

Run it as ``python -m pytest_ascend_accuracy.testing.fake_atc --model=... ...`` or through the
shim that ``fake_toolkit.install_fake_toolkit(dir)`` writes (``<dir>/bin/atc`` plus the install record
``<arch>-linux/ascend_toolkit_install.info``, so toolkit discovery works exactly as on a real
installation). The shim is a client of a persistent interpreter (``fake_atc_server``) that has
onnx imported already, so a call costs a fork, not a Python start. It is named a fake
everywhere and produces no Ascend offline model: see ``fake_om`` for what it writes.

What it checks, following the documented option set (GE ``main.cc`` flag definitions, docs/formats.md
§5): every ``--name=value``/``--name value`` option must be a known ATC option; enumerated
options must have a documented value (``--framework``, ``--mode``, ``--precision_mode``,
``--precision_mode_v2``, ``--buffer_optimize``, ``--log``, ``--op_select_implmode``,
``--input_format``); ``--precision_mode`` and ``--precision_mode_v2`` cannot be combined;
``--precision_mode`` must be one of the values the faked CANN version accepts
(``backends.ascend.precision_modes``: a 6.0 toolkit refuses ``cube_fp16in_fp32out``, the
``*_fp16``/``*_bf16`` spellings); ``--model``/``--output``/``--soc_version`` are required for
``--mode=0``; the model must be an ONNX file; ``--input_shape`` must name model inputs and
leave no dynamic dim; keep_dtype, fusion switch and AIPP files must exist and parse, their
resolved paths holding only the characters GE's CheckInputPathValid allows (``check_input_path``);
the folders of ``--output`` are created as GE's CheckOutputPathValid creates them
(``check_output_path``); ``--soc_version`` must be a chip of the toolkit's
``data/platform_config/*.ini`` (``check_soc_version``, GE's ``EE1001``). Dynamic profiles,
``--out_nodes`` (the named outputs become the om's) and ``--host_env_os``/``--host_env_cpu``
(the om named ``<output>_<os>_<cpu>.om``) follow GE's code in ``fake_atc_checks``.

Failures print what real ATC prints (the layout of the real ATC console logs that msit keeps as
test data: start line, ``ATC run failed, ...``, then ``E10001: Value [..] for parameter [--x]
is invalid. Reason: ...``, an indented ``Solution:`` line where GE's error registry has one and
``TraceBack (most recent call last):``) and exit 255; success prints ``ATC run success, welcome
to the next use.``. ``--mode=1 --om=X.om --json=Y.json`` writes the om json through
``dump.om_json.write_om_json``, with ``attr_model_out_nodes_name`` in om output order and a
``Const`` for each folded tensor an op that runs reads (``fake_om_folding``). Every run appends
to a plog file under ``$ASCEND_PROCESS_LOG_PATH/debug/plog/``.

Environment knobs for tests:
  FAKE_ATC_FAIL=<code>     fail with that error code (E19010, EZ3003, E19999, ...) after validation
  FAKE_ATC_HANG=<seconds>  sleep that long after the start line (timeout tests)
  FAKE_ATC_REJECT=<names>  comma list of ``option`` or ``option=value`` this "old toolkit" rejects
  FAKE_ATC_CALLS=<file>    append one JSON line per invocation: {"argv": [...], "cwd": ..., "pid": ...}
  FAKE_ATC_SERVER=0        run each call in a fresh interpreter instead of the persistent one
  FAKE_ATC_TRACEBACK=<n>   print n TraceBack lines after a failure, as real ATC prints one line
                           per failing op or call level (msit's E19010 log: 6; a model with many
                           unparsed ops: one each)
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from .fake_atc_errors import AtcFailure, invalid
from .fake_toolkit import FakeToolkit, install_fake_toolkit  # noqa: F401 (the toolkit tree)

START_LINE = "ATC start working now, please wait for a moment."
SUCCESS_LINE = "ATC run success, welcome to the next use."
FAILED_LINE = "ATC run failed, Please check the detail log, Try 'atc --help' for more information"
EXIT_FAILED = 255  # main_impl returns -1 (GE FAILED) -> exit status 255

#: options ATC defines (GE main.cc DEFINE_* list); the fake accepts exactly these names.
KNOWN_OPTIONS = frozenset("""
mode model weight om json framework output soc_version input_shape input_shape_range input_hint_shape
input_format dynamic_batch_size dynamic_image_size dynamic_dims singleop out_nodes input_fp16_nodes
insert_op_conf op_name_map is_input_adjust_hw_layout is_output_adjust_hw_layout output_type
precision_mode precision_mode_v2 modify_mixlist keep_dtype customize_dtypes op_precision_mode
op_select_implmode optypelist_for_implmode allow_hf32 buffer_optimize fusion_switch_file
enable_scope_fusion_passes enable_single_stream enable_small_channel enable_compress_weight
compress_weight_conf compression_optimize_conf disable_reuse_memory log dump_mode debug_dir
op_compiler_cache_dir op_compiler_cache_mode op_debug_level op_debug_config status_check
display_model_info deterministic external_weight virtual_type core_type aicore_num sparsity
host_env_os host_env_cpu
atomic_clean_policy shape_generalized_build_mode mdl_bank_path op_bank_path save_original_model
check_report oo_level cal_conf target auto_tune_mode help h
""".split())
#: enumerated options and their values (``--precision_mode``: per version, ``_allowed_values``).
ENUMS: Dict[str, Tuple[str, ...]] = {
    "framework": ("0", "1", "3", "5"),
    "mode": ("0", "1", "3", "5", "6", "30"),
    "precision_mode_v2": ("fp16", "origin", "cube_fp16in_fp32out", "mixed_float16", "mixed_bfloat16",
                          "cube_hif8", "mixed_hif8"),
    "buffer_optimize": ("l2_optimize", "l1_optimize", "off_optimize"),
    "log": ("debug", "info", "warning", "error", "null", "default"),  # GE main.cc init()
    "op_select_implmode": ("high_precision", "high_performance", "high_precision_for_all",
                           "high_performance_for_all"),
    "input_format": ("NCHW", "ND", "NCDHW"),
}
#: GE error registry "Solution" texts for the codes the fake prints (E10001: "Try again with a
#: valid argument."; the parser/kernel codes: the text in msit's real ATC logs).
SOLUTIONS = {
    "E10001": "Try again with a valid argument.",
    "E19010": "Check the version of the installation package and reinstall the package. For "
              "details, see the operator specifications.",
    "EZ3003": "Check the version of the installation package and reinstall the package. For "
              "details, see the operator specifications.",
}
CANNED_ERRORS = {
    "E19010": "No parser is registered for Op [{op}, optype [ai.onnx::17::{type}]].",
    "EZ3003": "No supported Ops kernel and engine are found for [{op}], optype [{type}].",
    "E19999": "Inner Error!",
    "E10007": "[--framework] is required. The value must be [0(Caffe) or 1(MindSpore) or 3(TensorFlow) "
              "or 5(Onnx)].",
}


# -- command line -------------------------------------------------------------------------------
def parse_args(argv: Sequence[str]) -> Dict[str, str]:
    """``--k=v`` and ``--k v`` forms into a dict; unknown or repeated names are E10001 errors."""
    opts: Dict[str, str] = {}
    rejected = _rejected()
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-"):
            raise invalid("<positional>", arg, "ATC takes only --name=value options")
        name, sep, value = arg.lstrip("-").partition("=")
        if not sep:
            if name in ("help", "h"):
                value = "true"
            elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                i += 1
                value = argv[i]
        if name not in KNOWN_OPTIONS or name in rejected:
            raise invalid(name, value, "The parameter is not supported by this ATC")
        if f"{name}={value}" in rejected:
            raise invalid(name, value, "The value is not supported by this ATC")
        if name in opts:
            raise invalid(name, value, "The parameter is given more than once")
        allowed = _allowed_values(name)
        if name == "log" and value not in allowed:  # GE main.cc init(), before anything else
            raise AtcFailure("E10010", f"invalid value for --log:{value}, only support debug, "
                                       "info, warning, error, null")
        if allowed is not None and value not in allowed:
            raise invalid(name, value, "The current value is not within the valid range. Valid "
                                       f"values are: {', '.join(allowed)}.")
        opts[name] = value
        i += 1
    if "precision_mode" in opts and "precision_mode_v2" in opts:
        raise invalid("precision_mode_v2", opts["precision_mode_v2"],
                      "--precision_mode and --precision_mode_v2 cannot be used together")
    return opts


def convert(opts: Dict[str, str], argv: Sequence[str]) -> List[str]:
    """``--mode=0``: check the model and config files, write ``{output}.om``. Returns notes."""
    import onnx

    from .fake_om import parse_fusion_switch, static_input_shapes, write_fake_om

    for required in ("model", "output", "soc_version"):
        if not opts.get(required):
            raise AtcFailure("E10054", f"The requied parameter [--{required}] for ATC is empty. Another "
                                       "possible reason is that the value of some parameter is not "
                                       "enclosed by quotation marks (\"\").")
    if "framework" not in opts:
        raise AtcFailure("E10007", CANNED_ERRORS["E10007"])
    if opts["framework"] != "5":
        raise invalid("framework", opts["framework"], "the fake atc converts ONNX models only (5)")
    from .fake_atc_checks import (apply_out_nodes, check_aipp_input_format,
                                  check_display_model_info, check_dynamic_profile,
                                  check_scalar_entries, check_shape_range, host_env, om_path,
                                  shape_range_warnings)

    # GE CheckAndTransferInputShapeToRange, CheckDynamicInputParamValid and
    # CheckHostEnvOsAndHostEnvCpuValid: flag checks, before the model is read (fake_atc_checks)
    check_display_model_info(opts)
    for line in shape_range_warnings(opts):  # SCREEN_LOG: shown even where the run fails
        print(line, flush=True)
    check_shape_range(opts)
    check_scalar_entries(opts, os.environ.get("FAKE_ATC_VERSION"))  # GE ParseInputShape
    check_aipp_input_format(opts)
    check_dynamic_profile(opts, _parse_input_shape(opts.get("input_shape", "")))
    out, lines = om_path(opts["output"], host_env(opts))
    check_input_path(opts["model"], "model")  # GE main.cc, before the model is read
    check_output_path(out, "output")  # main_impl CheckOutputPathWithSuffix
    check_soc_version(opts["soc_version"])  # GELib::Initialize, before the model is parsed
    model_path = Path(opts["model"])
    try:
        raw = model_path.read_bytes()
        model = onnx.load_model_from_string(raw)
    except OSError:
        raise invalid("model", opts["model"], "The file does not exist or cannot be read") from None
    except Exception as exc:  # onnx raises several types for a bad file
        raise invalid("model", opts["model"], f"The file is not a valid ONNX model ({exc})") from None
    try:
        if any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer):
            # like ATC: external data is read from beside the model, and the .om holds the weights
            from onnx.external_data_helper import load_external_data_for_model

            load_external_data_for_model(model, str(model_path.parent))
            raw = model.SerializeToString()
        onnx.checker.check_model(model)
    except OSError as exc:
        raise invalid("model", opts["model"], f"Its external data cannot be read ({exc})") from None
    except Exception as exc:  # onnx raises several types for a bad file
        raise invalid("model", opts["model"], f"The file is not a valid ONNX model ({exc})") from None
    _refuse_unparsed_ops(model)
    if opts.get("out_nodes"):  # GE SetOutputNodeInfo, on the parsed graph (ATC's node names)
        from ..graph.names import normalize_node_names

        normalize_node_names(model.graph)
        apply_out_nodes(model, opts["out_nodes"])
        raw = model.SerializeToString()
    try:
        shapes = static_input_shapes(model, _parse_input_shape(opts.get("input_shape", "")))
    except ValueError as exc:
        raise invalid("input_shape", opts.get("input_shape", ""), str(exc)) from None
    notes = []
    keep = []
    if "keep_dtype" in opts:
        from ..core.ascend_optypes import node_parser_type

        keep = _read_lines(opts["keep_dtype"], "keep_dtype")
        names = {n.name for n in model.graph.node}
        parsed = {node_parser_type(n) for n in model.graph.node}  # what ATC matches types on
        for entry in keep:
            if entry.startswith("OpType::"):
                typ = entry[len("OpType::"):]
                if not typ[:1].isupper():  # GE attr_options.cc: E10003, the conversion stops
                    raise AtcFailure("E10003", f"Value [{opts['keep_dtype']}] for parameter "
                                               f"[keep_dtype] is invalid. Reason: The operator "
                                               f"type [{typ}] in the config file is invalid. It "
                                               f"must be in PascalCase.")
                if typ not in parsed:
                    notes.append(f"[WARNING] keep_dtype op type [{typ}] matches no node of the "
                                 f"model")
            elif entry not in names:
                notes.append(f"[WARNING] keep_dtype entry [{entry}] matches no node of the model")
    switch = None
    if "fusion_switch_file" in opts:
        text = "\n".join(_read_lines(opts["fusion_switch_file"], "fusion_switch_file"))
        try:
            switch = parse_fusion_switch(text)
        except ValueError as exc:
            raise invalid("fusion_switch_file", opts["fusion_switch_file"], str(exc)) from None
    if "insert_op_conf" in opts:
        aipp = "\n".join(_read_lines(opts["insert_op_conf"], "insert_op_conf"))
        if "aipp_op" not in aipp:
            raise invalid("insert_op_conf", opts["insert_op_conf"], "no aipp_op section in the file")
    _maybe_fail(model)
    prec_name = "precision_mode_v2" if "precision_mode_v2" in opts else "precision_mode"
    meta = {
        "model_name": Path(opts["output"]).name,
        "soc_version": opts["soc_version"],
        "precision_option": prec_name,
        "precision_value": opts.get(prec_name, "force_fp16" if prec_name == "precision_mode" else "fp16"),
        "keep_dtype": keep,
        "fusion_switch": switch,
        "buffer_optimize": opts.get("buffer_optimize", "l2_optimize"),
        "input_shapes": {k: list(v) for k, v in shapes.items()},
        "insert_op_conf": opts.get("insert_op_conf"),
        "out_nodes": opts.get("out_nodes"),
        "host_env": list(host_env(opts) or ()) or None,
        "atc_cmdline": " ".join(["atc", *argv]),
        "atc_version": os.environ.get("FAKE_ATC_VERSION", "unknown"),
    }
    write_fake_om(Path(out), raw, meta)
    (Path.cwd() / "fusion_result.json").write_text(json.dumps({"fake_atc": True, "fusion_switch": switch}))
    return lines + notes


def om_to_json(opts: Dict[str, str]) -> None:
    """``--mode=1 --om=X.om --json=Y.json``: the om json of a fake .om."""
    from ..dump.om_json import OmOp, write_om_json
    from .fake_om import graph_input_names, read_fake_om
    from .fake_om_folding import folded_consts

    for required in ("om", "json"):
        if not opts.get(required):
            raise AtcFailure("E10004", f"Input parameter[--{required}]'s value is empty")
    try:
        fake = read_fake_om(opts["om"])
    except ValueError as exc:
        raise invalid("om", opts["om"], str(exc)) from None
    _maybe_fail(fake.model)
    producer: Dict[str, str] = {}
    ops = []
    for k, name in enumerate(graph_input_names(fake.model)):
        ops.append(OmOp(name=name, type="Data", id=k, original_names=(name,), output_origins=((name, 0),)))
        producer[name] = f"{name}:0"
    for op in fake.plan():
        for j, out in enumerate(op.outputs):
            producer[out] = f"{op.name}:{j}"
    ops += folded_consts(fake, producer, len(ops))  # what the conversion folded, as real ATC
    for op in fake.plan():
        ops.append(OmOp(name=op.name, type=op.type, id=len(ops), original_names=op.members,
                        output_origins=op.output_origins,
                        inputs=tuple(producer[i] for i in op.inputs if i in producer)))
    attrs = {"atc_cmdline": fake.meta.get("atc_cmdline", ""), "soc_version": fake.meta.get("soc_version", ""),
             "atc_version": fake.meta.get("atc_version", ""),
             "attr_model_out_nodes_name": [f"{op}:{j}:{name}" for op, j, name in fake.output_nodes()]}
    write_om_json(opts["json"], fake.model_name, ops, attrs)


def preload() -> None:
    """Import what a conversion needs (for the persistent interpreter, before it forks)."""
    import onnx  # noqa: F401
    import onnx.checker  # noqa: F401

    from ..dump import om_json  # noqa: F401
    from . import fake_atc_checks, fake_om  # noqa: F401


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _record_call(argv)
    print(START_LINE, flush=True)
    hang = os.environ.get("FAKE_ATC_HANG")
    if hang:
        time.sleep(float(hang))
    notes: List[str] = []
    try:
        opts = parse_args(argv)
        if "help" in opts or "h" in opts:
            print("usage: atc <args>  (FAKE atc for pytest-ascend-accuracy tests)")
            return 0
        mode = opts.get("mode", "0")
        if mode == "0":
            notes = convert(opts, argv)
        elif mode == "1":
            om_to_json(opts)
        else:
            raise invalid("mode", mode, "the fake atc supports --mode=0 and --mode=1 only")
    except AtcFailure as failure:
        _plog("ERROR", f"{failure.code}: {failure.message}")
        print(FAILED_LINE)
        print(f"{failure.code}: {failure.message}")
        from .fake_atc_checks import SOLUTIONS as CHECK_SOLUTIONS

        solution = SOLUTIONS.get(failure.code) or CHECK_SOLUTIONS.get(failure.code)
        if solution:
            print(f"        Solution: {solution}")
        print("        TraceBack (most recent call last):", flush=True)
        for n in range(int(os.environ.get("FAKE_ATC_TRACEBACK") or 0)):
            print(f"        Call failed.[FUNC:Level{n}][FILE:fake_atc.py][LINE:{n}]")
        return EXIT_FAILED
    for note in notes:
        print(note)
        _plog("WARNING", note)
    _plog("INFO", "ATC run success")
    print("...")
    print(SUCCESS_LINE, flush=True)
    return 0


# -- internals ----------------------------------------------------------------------------------
def _maybe_fail(model) -> None:
    code = os.environ.get("FAKE_ATC_FAIL")
    if not code:
        return
    node = model.graph.node[0] if len(model.graph.node) else None
    template = CANNED_ERRORS.get(code, "Failure requested through FAKE_ATC_FAIL.")
    raise AtcFailure(code, template.format(op=node.name if node else "?", type=node.op_type if node else "?"))


def _refuse_unparsed_ops(model) -> None:
    """E19010 for a Loop or Scan, a quantisation op or an op of another domain than ai.onnx
    (ATC's ONNX parser registers no parser for them: ai.onnx.ml's, onnxruntime's com.microsoft
    contrib ops), E11010 for an ArgMax/ArgMin with select_last_index=1 (its plugin refuses it):
    ``graph.parser_refusals``."""
    from ..graph.parser_refusals import atc_parse_error

    found = atc_parse_error(model)
    if found:
        raise AtcFailure(*found)


def _parse_input_shape(text: str) -> Dict[str, List[int]]:
    shapes: Dict[str, List[int]] = {}
    for part in filter(None, text.split(";")):
        name, sep, dims = part.rpartition(":")
        if not sep or not name:
            raise invalid("input_shape", text, "expected \"name:d1,d2;name2:d1\"")
        try:
            shapes[name.strip()] = [int(d) for d in dims.split(",") if d.strip()]
        except ValueError:
            raise invalid("input_shape", text, f"dims of {name!r} must be integers") from None
    return shapes


def _read_lines(path: str, option: str) -> List[str]:
    check_input_path(path, option)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError:
        raise invalid(option, path, "The file does not exist or cannot be read") from None
    return [line.strip() for line in text.splitlines() if line.strip()]


#: GE's reason for a config-file path with a character CheckInputPathValid refuses (hicann/ge
#: base/common/util.cc, ``kPathValidReason``; older GE releases end "and chinese character")
PATH_CHARS_REASON = ("The path can only contain 'a-z' 'A-Z' '0-9' '-' '.' '_' and Chinese "
                     "characters.")


def check_input_path(path: str, option: str) -> None:
    """GE ``CheckInputPathValid(path, "--<option>")`` on a config file ATC reads (``--keep_dtype``
    through CheckKeepTypeParamValid, ``--insert_op_conf`` through CheckInsertOpConfParamValid,
    ``--fusion_switch_file``, whose CANN page documents the same set): the *resolved* path (its
    realpath, so the working directory's own characters count too) may hold only ASCII letters,
    digits, ``.``, ``/``, ``_``, ``-`` and the CJK code points U+4E00-U+9FA5 (``IsPathCharsValid``;
    the same set as a regex in older releases); else E10001 naming the path as given. A path that
    does not resolve is left to the read's own error."""
    real = os.path.realpath(path)
    if not os.path.exists(real):
        return
    from ..core.atc_paths import allowed

    if not all(allowed(ch) for ch in real):
        raise invalid(option, path, PATH_CHARS_REASON)


def check_output_path(path: str, option: str) -> None:
    """GE ``CheckOutputPathValid(<--output>.om, "--output")`` (hicann/ge base/common/util.cc): a
    path holding a character outside GE's set is refused; an existing file must be writable;
    otherwise the folders before the file name are created ("Determine whether the specified
    path is valid by creating the path"), and a folder that cannot be made is E10001 naming the
    path (reason: GE's errno text; older GE releases: ``Can not create directory``)."""
    from ..core.atc_paths import allowed

    if not all(allowed(ch) for ch in path):
        raise invalid(option, path, PATH_CHARS_REASON)
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            raise invalid(option, path, "Permission denied")
        return
    folder = os.path.dirname(path)
    if folder:
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise invalid(option, path, f"Can not create directory ({exc.strerror})") from None


#: GE's refusal of a chip name it has no platform config for (a real ATC 7.0 console, hiascend
#: forum thread-0268129296585963027: ``EE1001: The argument is invalid.Reason: Soc version
#: [Ascend310B4] is invalid`` then ``Call rtSetSocVersion(...) fail, ret: 0x1A1F8
#: [FUNC:SetRTSocVersion][FILE:gelib.cc]``)
SOC_REFUSED = "The argument is invalid.Reason: Soc version [{soc}] is invalid"


def check_soc_version(soc: str) -> None:
    """The chips this fake toolkit knows are its ``data/platform_config/*.ini`` names
    (``FAKE_ATC_HOME``, written by the shim), else ``fake_toolkit.SOC_VERSIONS``."""
    if soc not in known_soc_versions():
        raise AtcFailure("EE1001", SOC_REFUSED.format(soc=soc))


def known_soc_versions() -> Tuple[str, ...]:
    import platform

    from .fake_toolkit import PLATFORM_CONFIG, SOC_VERSIONS

    home = os.environ.get("FAKE_ATC_HOME")
    if not home:
        return SOC_VERSIONS
    folder = Path(home) / f"{platform.machine() or 'x86_64'}-linux" / PLATFORM_CONFIG
    return tuple(sorted(p.stem for p in folder.glob("*.ini")))


def _allowed_values(option: str) -> Optional[Tuple[str, ...]]:
    """The values this (faked) ATC version accepts for an enumerated option, else None."""
    if option == "precision_mode":
        from ..backends.ascend.precision_modes import accepted_precision_modes

        return accepted_precision_modes(os.environ.get("FAKE_ATC_VERSION"))
    return ENUMS.get(option)


def _rejected() -> set:
    return {r.strip() for r in os.environ.get("FAKE_ATC_REJECT", "").split(",") if r.strip()}


def _record_call(argv: Sequence[str]) -> None:
    path = os.environ.get("FAKE_ATC_CALLS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"argv": list(argv), "cwd": os.getcwd(), "pid": os.getpid()}) + "\n")


def _plog(level: str, text: str) -> None:
    root = os.environ.get("ASCEND_PROCESS_LOG_PATH")
    if not root:
        return
    now = time.time()
    stamp = time.strftime("%Y-%m-%d-%H:%M:%S", time.localtime(now)) + f".{int(now * 1000) % 1000:03d}.000"
    plog = Path(root) / "debug" / "plog"
    try:
        plog.mkdir(parents=True, exist_ok=True)
        with open(plog / f"plog-{os.getpid()}_{time.strftime('%Y%m%d%H%M%S')}.log", "a") as f:
            f.write(f"[{level}] GE({os.getpid()},atc.bin):{stamp} [fake_atc.py:0]{text}\n")
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main())
