"""Checks of the FAKE ATC (``fake_atc``) that follow GE's own code for three option groups:
dynamic profiles, ``--out_nodes`` and ``--host_env_os``/``--host_env_cpu``. Tests only; the
messages are GE's error-registry texts (hicann/ge ``base/common/error_registry/error_registry.cc``)
so a test of the plugin's advice sees what a real ATC prints.

* dynamic profiles (GE ``CheckDynamicInputParamValid``, mindspore-ai/graphengine
  ``ge/ir_build/atc_ir_common.cc``): at most one of ``--dynamic_batch_size``,
  ``--dynamic_image_size``, ``--dynamic_dims`` (E10009); ``--input_shape`` required (E10004);
  an ``--input_shape`` with no -1 is refused (E10031 for a batch profile, E10019 for an image
  size profile, E10001 "at least one dim should be -1 when set dynamic_dims"). A *valid* profile
  is refused too, saying so: the fake builds no multi-profile model.
* dynamic shapes (GE ``CheckAndTransferInputShapeToRange``, run before the profile checks):
  ``--input_shape_range`` prints GE's two screen warnings (deprecated; overrides
  ``--input_shape``) and with a profile option is E10009; ``'~'`` in ``--input_shape`` with a
  profile option is E10040. A shape range (``--input_shape_range``, or ``-1``/``n1~n2`` in
  ``--input_shape`` with no profile option) is a dynamic-shape build in real ATC: the fake
  refuses it in its own words ("the FAKE atc builds no dynamic-shape model"), never by
  building the static model. ``--display_model_info`` takes only 0 or 1 (E10006, main.cc).
* ``--out_nodes`` (GE ``ParseOutNodes``/``SetOutputNodeInfo``, hicann/ge ``parser`` omg code; CANN
  ATC page ``--out_nodes``, canncommercial 900 atlasatcparam_16_0042: "如果不指定输出节点，则模型
  的输出默认为最后一层的算子信息，如果指定，则以指定的为准"): ``node:index`` entries or, for ONNX,
  model output names, not mixed (E10001); an unknown node is E10016, an index past the node's
  outputs E10003. The named outputs become the model's outputs; nodes that no longer feed an
  output are pruned (GE's ``PrunePass``, mindspore-ai/graphengine
  ``ge/graph/passes/prune_pass.cc``).
* ``--host_env_os``/``--host_env_cpu`` (GE ``SetDefaultHostEnvOsAndHostEnvCpu`` and
  ``CheckHostEnvOsAndHostEnvCpuValid``, hicann/ge ``api/aclgrph/option_utils.cc``): a missing one
  defaults to the toolkit's own (``opp/scene.info``: ``linux`` and this machine's CPU); each must
  be one the toolkit's opp supports (CANN pages canncommercial/63RC2 atctool_000063/000064: OS
  ``linux``, CPU ``aarch64``/``x86_64``), else E10001 with GE's reason. The om is then written as
  ``<output>_<os>_<cpu>.om`` (GE ``ModelHelper``: ``"_" + host_env_os + "_" + host_env_cpu``
  inserted before ``.om``; the CANN page's example ``xxx_linux_x86_64.om``). Newer GE names it so
  only when the om carries host-specific .so files and otherwise prints "This model is irrelevant
  to the host platform, parameters about host os and host cpu are ignored."
  (``FileSaver::PrintModelSaveLog``); ``FAKE_ATC_HOST_PLATFORM_IRRELEVANT=1`` plays that case.
* an empty ``--input_shape`` entry (``sr:``, a scalar input): a toolkit before 8.0 refuses it as
  GE ``ParseInputShape`` does (mindspore-ai/graphengine ``ge/ir_build/atc_ir_common.cc``:
  E10002, reason ``kEmptyError`` "can not be empty", sample ``kInputShapeSample1``; the message
  is CANN 6.0.1's E10002 page, troubleshooting_01_0003); CANN 6.0.1's --input_shape page
  (atctool_0052) has a scalar input given no entry. From 8.0.RC2 the pages (atlasatc_16_0050,
  atlasatcparam_16_0016) take ``name:`` for a scalar (``check_scalar_entries``).
* ``--input_format`` beside ``--insert_op_conf``: NCHW or NHWC only (the --input_format page,
  atlasatcparam_16_0015), refused otherwise in the fake's words (``check_aipp_input_format``).
"""
from __future__ import annotations

import os
import platform
from typing import Dict, List, Optional, Tuple

from .fake_atc_errors import AtcFailure, invalid

DYNAMIC_OPTIONS = ("dynamic_batch_size", "dynamic_image_size", "dynamic_dims")
#: GE error-registry texts (hicann/ge base/common/error_registry/error_registry.cc)
E10009 = ("--dynamic_batch_size, --dynamic_image_size, --input_shape_range, and --dynamic_dims "
          "are mutually exclusive.")
E10031 = ("--dynamic_batch_size is included, but none of the nodes specified in --input_shape has "
          "a batch size equaling -1.")
E10019 = ("When --dynamic_image_size is included, only the height and width axes can be -1 in "
          "--input_shape.")
E10016 = ("Opname {name} specified in --out_nodes is not found in the model. Confirm whether this "
          "node name exists, or the node is not split with the specified delimiter ';'.")
E10040 = ("As the --dynamic_batch_size, --dynamic_image_size, or --dynamic_dims argument is "
          "included, the corresponding nodes specified in --input_shape must have -1 axes and "
          "cannot have '~'.")
E10006 = "Value {value} for parameter --{parameter} is invalid. The value must be either 1 or 0."
#: GE CheckAndTransferInputShapeToRange's SCREEN_LOG lines (two literals joined, no space)
RANGE_DEPRECATED = ("WARNING: Option input_shape_range is deprecated and will be removed in "
                    "future version,please use input_shape instead")
RANGE_OVERRIDES = ("WARNING: Option input_shape cannot use with option input_shape_range,it "
                   "will be override by input_shape_range")
#: the fake's own words where real ATC builds a dynamic-shape model (not ATC's text)
NO_DYNAMIC_SHAPE = ("the FAKE atc builds no dynamic-shape model (a real ATC builds one from a "
                    "shape range: --input_shape_range, or -1 or n1~n2 in --input_shape with no "
                    "--dynamic_* option); give a static --input_shape")
SOLUTIONS = {
    "E10040": "1. In static shape scenarios, remove the --dynamic_batch_size, "
              "--dynamic_image_size or --dynamic_dims option from your command line. \n 2. In "
              "dynamic multi-batch scenarios, set the corresponding axis of the dynamic-shape "
              "input in --input_shape to -1.\n 3. In dynamic shape scenarios, remove the "
              "--dynamic_batch_size, --dynamic_image_size or --dynamic_dims option from your "
              "command line and set --input_shape to -1 or n1~n2.",
    "E10006": "Set a valid parameter value. The parameter value can only be 1 or 0.",
    "E10009": "1. In dynamic shape scenarios, include only one of these options in your "
              "command line.  2. In static shape scenarios, remove these options from your "
              "command line.",
    "E10031": "1. In static shape scenarios, remove the --dynamic_batch_size option from your "
              "command line. 2. In dynamic shape scenarios, set the corresponding axis of the "
              "dynamic-shape input in --input_shape to -1.",
    "E10019": "Try again with a valid --input_shape argument. Make sure that axes other than "
              "height and width are not -1.",
    "E10004": "Set a valid parameter value.",
    "E10016": "Specify the name of an existing node in the graph.",
}
#: what the fake toolkit's opp supports (CANN --host_env_os/--host_env_cpu pages)
SUPPORTED_HOST_ENV = {"linux": ("aarch64", "x86_64")}
IRRELEVANT_LINE = ("This model is irrelevant to the host platform, parameters about host os and "
                   "host cpu are ignored.")


# -- dynamic shapes and profiles -----------------------------------------------------------------
def check_display_model_info(opts: Dict[str, str]) -> None:
    """GE main.cc: ``--display_model_info`` must be "0" or "1" (E10006)."""
    value = opts.get("display_model_info")
    if value is not None and value not in ("0", "1"):
        raise AtcFailure("E10006", E10006.format(value=value, parameter="display_model_info"))


def shape_range_warnings(opts: Dict[str, str]) -> List[str]:
    """The screen lines GE ``CheckAndTransferInputShapeToRange`` prints for
    ``--input_shape_range`` (printed at once, whether the run then fails or not)."""
    if not opts.get("input_shape_range"):
        return []
    return [RANGE_DEPRECATED] + ([RANGE_OVERRIDES] if opts.get("input_shape") else [])


def check_shape_range(opts: Dict[str, str]) -> None:
    """GE ``CheckAndTransferInputShapeToRange`` and ``CheckDynamicInputParamValid``'s E10009 for
    a range: a range beside a profile option is E10009 (the range overrides --input_shape); a
    ``'~'`` in --input_shape beside one is E10040; a shape range without one is a real ATC's
    dynamic-shape build, refused in the fake's words (``NO_DYNAMIC_SHAPE``)."""
    shape, shape_range = opts.get("input_shape", ""), opts.get("input_shape_range", "")
    profiles = [name for name in DYNAMIC_OPTIONS if opts.get(name)]
    if shape_range:
        if profiles:
            raise AtcFailure("E10009", E10009)
        raise invalid("input_shape_range", shape_range, NO_DYNAMIC_SHAPE)
    if profiles:
        if "~" in shape:
            raise AtcFailure("E10040", E10040)
        return
    if "~" in shape or "-1" in shape:  # GE's own test: either makes it a shape range
        raise invalid("input_shape", shape, NO_DYNAMIC_SHAPE)


def check_dynamic_profile(opts: Dict[str, str], shapes: Dict[str, List[int]]) -> None:
    """GE ``CheckDynamicInputParamValid`` on the parsed ``--input_shape``; returns when no dynamic
    option is given, raises AtcFailure otherwise (a valid profile: the fake does not build one)."""
    given = [name for name in DYNAMIC_OPTIONS if opts.get(name)]
    if not given:
        return
    if len(given) > 1:
        raise AtcFailure("E10009", E10009)
    if not opts.get("input_shape"):
        raise AtcFailure("E10004", "Value for --input_shape is empty.")
    name = given[0]
    if name == "dynamic_batch_size":
        _batch_profile(shapes)
    elif name == "dynamic_image_size":
        _image_profile(shapes)
    else:
        _dims_profile(shapes, opts.get("input_format", ""))
    raise invalid(name, opts[name], "the FAKE atc builds no dynamic-profile model (a real ATC "
                                    "builds one model per profile); give a static --input_shape")


def _batch_profile(shapes: Dict[str, List[int]]) -> None:
    """CheckDynamicBatchSizeInputShapeValid: an input with no dims is E10012; at least one input
    must have -1 as its batch (first) dim, else E10031."""
    if any(not dims for dims in shapes.values()):
        raise AtcFailure("E10012", "--dynamic_batch_size is included, but the dimension count of "
                                   "the dynamic-shape input configured in --input_shape is less "
                                   "than 1.")
    if not any(dims[0] == -1 and dims.count(-1) == 1 for dims in shapes.values()):
        raise AtcFailure("E10031", E10031)


def _image_profile(shapes: Dict[str, List[int]]) -> None:
    """CheckDynamicImagesizeInputShapeValid: only 4-D inputs may hold -1, and one must."""
    dynamic = [dims for dims in shapes.values() if -1 in dims]
    if not dynamic or any(len(dims) != 4 for dims in dynamic):
        raise AtcFailure("E10019", E10019)


def _dims_profile(shapes: Dict[str, List[int]], input_format: str) -> None:
    """CheckDynamicDimsInputShapeValid: ``--input_format=ND``, 1 to 4 dims per input, and at
    least one -1 over all inputs (each an E10001 with GE's parameter and reason texts)."""
    if input_format != "ND":
        raise invalid("input_format", input_format, "input_format must be ND when set dynamic_dims")
    for dims in shapes.values():
        if not 1 <= len(dims) <= 4:
            raise invalid("input_shape's dim", str(len(dims)),
                          "Dim num must within [1, 4] when set dynamic_dims")
    if not any(-1 in dims for dims in shapes.values()):
        raise invalid("input_shape's dynamic dim num", "0",
                      "at least one dim should be -1 when set dynamic_dims")


# -- --out_nodes ----------------------------------------------------------------------------------
def apply_out_nodes(model, text: str) -> List[str]:
    """Make the ``--out_nodes`` outputs the model's outputs, in place (pruning nodes that feed
    none); returns the output tensor names. ``model`` is an onnx ModelProto whose node names are
    normalised as ATC's ONNX parser names them (``graph.names.normalize_node_names``)."""
    from onnx import ValueInfoProto

    graph = model.graph
    entries = [e for e in text.split(";") if e]
    pairs, names = [], []
    for entry in entries:
        parts = entry.split(":")
        if len(parts) == 1:
            names.append(entry)
        elif len(parts) == 2:
            if not parts[1].strip().isdigit():
                raise invalid("out_nodes", text, "The index is not a positive integer.")
            pairs.append((parts[0], int(parts[1])))
        else:
            raise invalid("out_nodes", entry, "The parameter format is invalid. Valid format: "
                                              "\"node_name1:0;node_name1:1;node_name2:0\".")
    if pairs and names:
        raise invalid("out_nodes", text, "Only one of index, top_name and output_name can be used.")
    nodes = {n.name: n for n in graph.node}
    outputs: List[str] = []
    for node_name, index in pairs:
        node = nodes.get(node_name)
        if node is None:
            raise AtcFailure("E10016", E10016.format(name=node_name))
        if index >= len(node.output):
            raise AtcFailure("E10003", f"Value {node_name} for parameter --out_nodes is invalid. "
                                       f"Reason: Output index:\"{index}\" must be smaller than "
                                       f"output size:{len(node.output)} and cannot be negative.")
        outputs.append(node.output[index])
    graph_outputs = {o.name: o for o in graph.output}
    for name in names:  # ONNX only: "output必须是网络模型的输出"
        if name not in graph_outputs:
            raise invalid("out_nodes", name, "FAKE atc: no output of the model has this name (the "
                                             "fake does not know real ATC's text for this case)")
        outputs.append(name)
    known = {vi.name: vi for vi in list(graph.value_info) + list(graph.output)}
    chosen = []
    for name in outputs:
        vi = ValueInfoProto(name=name)
        if name in known:
            vi.CopyFrom(known[name])
        chosen.append(vi)
    del graph.output[:]
    graph.output.extend(chosen)
    _prune(graph, set(outputs))
    return outputs


def _prune(graph, needed: set) -> None:
    """Drop the nodes none of whose outputs reaches a model output (GE's PrunePass)."""
    keep = []
    for node in reversed(list(graph.node)):
        if any(out in needed for out in node.output):
            keep.append(node)
            needed.update(i for i in node.input if i)
    kept = list(reversed(keep))
    del graph.node[:]
    graph.node.extend(kept)


# -- --host_env_os / --host_env_cpu ---------------------------------------------------------------
def host_env(opts: Dict[str, str]) -> Optional[Tuple[str, str]]:
    """``(os, cpu)`` the om is built for when either option is given (the other defaulted as GE
    does), else None; E10001 with GE's reason for a value the opp does not support."""
    if not opts.get("host_env_os") and not opts.get("host_env_cpu"):
        return None
    os_name = opts.get("host_env_os") or "linux"
    cpu = opts.get("host_env_cpu") or (platform.machine() or "x86_64")
    if os_name not in SUPPORTED_HOST_ENV:
        listed = "".join(f"{name} / " for name in SUPPORTED_HOST_ENV)
        raise invalid("host_env_os", os_name, f"The OS {os_name} is not within the support list "
                                              f"of {{{listed}}}, and the OS type must be "
                                              f"consistent with that of the opp.")
    if cpu not in SUPPORTED_HOST_ENV[os_name]:
        listed = "".join(f"{name} / " for name in SUPPORTED_HOST_ENV[os_name])
        raise invalid("host_env_cpu", cpu, f"The CPU {cpu} is not within the support list of "
                                           f"{{{listed}}}, and the CPU type must be consistent "
                                           f"with that of the opp.")
    return os_name, cpu


def om_path(output: str, env: Optional[Tuple[str, str]]) -> Tuple[str, List[str]]:
    """The om file ATC writes for ``--output`` and the console lines it adds."""
    if env is None:
        return output + ".om", []
    if os.environ.get("FAKE_ATC_HOST_PLATFORM_IRRELEVANT") == "1":
        return output + ".om", [IRRELEVANT_LINE]
    return f"{output}_{env[0]}_{env[1]}.om", []


# -- --input_shape's scalar entries, --input_format with AIPP ---------------------------------
#: GE's E10002 (CANN 6.0.1 error page) with ParseInputShape's reason and sample
E10002 = "Value [{shape}] for parameter [--input_shape] is invalid. Reason: {reason}. The value " \
         "must be formatted as [{sample}]."
SOLUTIONS["E10002"] = ("The valid format is [input_name1:n1,c1,h1,w1;input_name2:n2,c2,h2,w2]. "
                       "Replace [input_name#] with node names. Ensure that the shape values are "
                       "integers.")
#: the first release whose --input_shape page takes ``name:`` for a scalar input (8.0.RC2's
#: atlasatc_16_0050; 8.0.RC1's pages are not known here, so 8.0 counts as taking it)
SCALAR_ENTRY_SINCE = (8, 0)


def check_scalar_entries(opts: Dict[str, str], version: Optional[str]) -> None:
    """E10002 for an ``--input_shape`` entry with no dims (``sr:``) on a toolkit before 8.0
    (``version``: the faked CANN version; an unknown one is taken as new)."""
    from ..core.versions import version_numbers

    numbers = version_numbers(version or "")
    if not numbers or tuple(numbers[:2]) >= SCALAR_ENTRY_SINCE:
        return
    for entry in filter(None, opts.get("input_shape", "").split(";")):
        name, sep, dims = entry.rpartition(":")
        if sep and not dims.strip():
            raise AtcFailure("E10002", E10002.format(shape=entry, reason="can not be empty",
                                                     sample='"input_name1:n1,c1,h1,w1"'))


def check_aipp_input_format(opts: Dict[str, str]) -> None:
    """``--input_format`` other than NCHW/NHWC beside ``--insert_op_conf`` (the --input_format
    page's constraint); E10001 in the fake's own words (real GE's text is not known here)."""
    value = opts.get("input_format")
    if opts.get("insert_op_conf") and value and value not in ("NCHW", "NHWC"):
        raise invalid("input_format", value, "FAKE atc: with --insert_op_conf, --input_format "
                                             "takes NCHW or NHWC only (the CANN --input_format "
                                             "page; the fake does not know real ATC's text)")
