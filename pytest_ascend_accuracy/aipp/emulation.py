"""What the emulator backend needs to run a model converted with an AIPP file.

ATC with ``--insert_op_conf`` puts an ``Aipp`` operator in front of each configured input: the
``.om`` then takes raw uint8 images (NHWC; NV12 rows for YUV420SP_U8) and the operator turns
them into the network's float16 NCHW input. The emulator does the same around its onnxruntime
session: the file's content (not its path) goes into the conversion cache key and is stored in
the cache entry; the om json lists one NPU-only ``Aipp`` op per configured input, named
``aipp_<input>`` and run first; each run applies the file (:mod:`.apply`) to the raw inputs,
feeds the result to the model and dumps the ``Aipp`` op (raw bytes in, float16 NCHW out), as a
device dump shows it.

The image after AIPP must be what the model is fed (ATC guide, atlasatc_16_0023: its size is
the model input's, ``--input_shape``): given the model, :func:`conversion_aipp` refuses a block
whose output channels, height or width (from ``src_image_size``, the crop and the padding)
differ from its input's, naming the file, line and key. A block that leaves the output size to
the images (no ``src_image_size_w/h``) is checked at each run instead: images that AIPP makes
another size than the model input are an error naming the file and the keys to add. Errors while
running name the file the model was converted with (``source``: the backend keeps it per
converted model, since two files of one content share a cache entry), else the entry's copy.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..errors import ConfigError
from .apply import apply_aipp
from .config import AippOp, parse_aipp_config, read_aipp_config
from .image_size import check_output_size

#: the AIPP file as stored in a converted model's cache entry
AIPP_FILE = "aipp.cfg"
OPTION = "insert_op_conf"


def aipp_op_name(input_name: str) -> str:
    """The dumped ``Aipp`` operator in front of graph input ``input_name``."""
    return f"aipp_{input_name}"


def conversion_aipp(options: Mapping[str, str], model=None,
                    input_shape: Optional[Mapping[str, Sequence[int]]] = None
                    ) -> Optional[Tuple[str, str]]:
    """``(text, sha256)`` of the AIPP file named by the ``insert_op_conf`` ATC option, parsed
    (a bad file is a ConfigError now, not at run time); None without the option. With the
    ``model`` (path or ModelProto; ``input_shape`` overrides its dims, as ATC's does) each
    block's output size is checked against its input's."""
    path = options.get(OPTION)
    if not path:
        return None
    cfg = read_aipp_config(path)
    if model is not None:
        check_model_inputs(cfg.ops, _declared_inputs(model, input_shape))
    return cfg.text, hashlib.sha256(cfg.text.encode("utf-8")).hexdigest()


def _declared_inputs(model, input_shape) -> List[Tuple[str, Optional[Tuple[Optional[int], ...]]]]:
    """``[(name, dims)]`` of the model's inputs in order (a dynamic dim is None; dims None: no
    declared shape)."""
    import onnx

    from ..graph.onnx_graph import declared_shape, graph_inputs, load_model

    proto = model if isinstance(model, onnx.ModelProto) else load_model(model, weights=False)
    given = dict(input_shape or {})
    # an input with no declared shape at all: None (its rank unknown, checked at run time)
    return [(i.name, tuple(given[i.name]) if i.name in given else
             declared_shape(i) if i.type.tensor_type.HasField("shape") else None)
            for i in graph_inputs(proto)]


def check_model_inputs(ops: Sequence[AippOp], inputs: Sequence[Tuple[str, Sequence]]) -> None:
    """Each block against the model input at its ``related_input_rank`` (``inputs``: names and
    dims in order): that input exists, is N x C x H x W, and where the file fixes them, its C,
    H and W are the AIPP output's."""
    for op in ops:
        if op.rank >= len(inputs):
            names = ", ".join(n for n, _ in inputs)
            raise op.error("related_input_rank", f"input {op.rank} does not exist: the model has "
                                                 f"{len(inputs)} input(s) ({names})")
        name, dims = inputs[op.rank]
        if dims is None:  # no declared shape: nothing to hold the file against before a run
            continue
        shown = "x".join("?" if d is None else str(d) for d in dims)
        if len(dims) != 4:
            raise op.error("related_input_rank", f"model input {name!r} is {shown or 'a scalar'}; "
                                                 f"AIPP feeds an N x C x H x W input")
        channels = op.channels
        if dims[1] is not None and dims[1] != channels:
            raise op.error("input_format", f"{op.input_format} gives {channels} channel(s) after "
                                           f"AIPP, but model input {name!r} is {shown} "
                                           f"(N x C x H x W: C = {dims[1]})")
        _check_model_sized_crop(op, name, shown, dims)
        out = {axis: _output_size(op, axis) for axis in ("h", "w")}
        for axis, dim in (("h", dims[2]), ("w", dims[3])):
            size, key, how = out[axis]
            if size is None or dim is None or size == dim:
                continue
            sized = "the model input" if op.get("crop") else "the images"
            wide = f"{out['w'][0]} wide" if out["w"][0] is not None else f"as wide as {sized}"
            high = f"{out['h'][0]} high" if out["h"][0] is not None else f"as high as {sized}"
            raise op.error(key, f"the image after AIPP is {wide} and {high} ({how}), but model "
                                f"input {name!r} is {shown} (N x C x H x W: {dims[3]} wide, "
                                f"{dims[2]} high); the image after AIPP must be the size the model "
                                f"is fed (--input_shape): change the crop/padding or the model "
                                f"input")


def _check_model_sized_crop(op: AippOp, name: str, shown: str, dims) -> None:
    """A crop size of 0 takes the model input's size: that window, from ``load_start_pos``,
    must fit ``src_image_size`` (ATC: "load_start_pos_h + crop_size_h should be less than or
    equal to src_image_size_h")."""
    if not op.get("crop"):
        return
    for axis, dim, what in (("w", dims[3], "width"), ("h", dims[2], "height")):
        src, pos = int(op.get(f"src_image_size_{axis}")), int(op.get(f"load_start_pos_{axis}"))
        if op.get(f"crop_size_{axis}") or dim is None or not src or pos + dim <= src:
            continue
        fix = [f"load_start_pos_{axis}: {src - dim} (or less)"] if src >= dim else []
        fix.append(f"a model input {what} (--input_shape) of at most {src - pos}")
        fix = " or ".join(fix)
        raise op.error(f"load_start_pos_{axis}", (
            f"{pos}, and crop_size_{axis} 0 crops the model input's {what}: model input {name!r} "
            f"is {shown} (N x C x H x W), so the window reaches {pos} + {dim} = {pos + dim}, "
            f"past src_image_size_{axis} {src}; without padding the crop is the model input's "
            f"size, so the fix is {fix}"))


def _output_size(op: AippOp, axis: str) -> Tuple[Optional[int], str, str]:
    """``(size, the key that sets it, how)`` of the AIPP output along ``axis`` ('h' or 'w');
    size None when only the images (no ``src_image_size``, no crop), or the model input (a crop
    size of 0), fix it."""
    src = int(op.get(f"src_image_size_{axis}"))
    crop = int(op.get(f"crop_size_{axis}"))
    if op.get("crop") and crop:
        size, key, how = crop, f"crop_size_{axis}", [f"crop_size_{axis} {crop}"]
    elif op.get("crop"):  # the model input's size (ATC refuses it with padding)
        return None, f"crop_size_{axis}", f"crop_size_{axis} 0: the model input's"
    elif src:
        size, key, how = src, f"src_image_size_{axis}", [f"src_image_size_{axis} {src}, no crop"]
    else:
        return None, f"src_image_size_{axis}", ""
    if op.get("padding"):
        sides = ("top", "bottom") if axis == "h" else ("left", "right")
        pads = [int(op.get(f"{side}_padding_size")) for side in sides]
        size += sum(pads)
        how += [f"{side}_padding_size {n}" for side, n in zip(sides, pads)]
    return size, key, " + ".join(how)


def key_options(options: Mapping[str, str], aipp: Optional[Tuple[str, str]]) -> Dict[str, str]:
    """The ATC options as the cache key sees them: the AIPP file by content, not by path."""
    out = dict(options)
    if aipp is not None:
        out[OPTION] = f"sha256:{aipp[1]}"
    return out


def _blocks(text: str, model_inputs: Sequence[str], where: str) -> Dict[str, AippOp]:
    cfg = parse_aipp_config(text, where)
    out: Dict[str, AippOp] = {}
    for op in cfg.ops:
        if op.rank >= len(model_inputs):
            raise op.error("related_input_rank", f"input {op.rank} does not exist: the model has "
                                                 f"{len(model_inputs)} input(s) ({', '.join(model_inputs)})")
        out[model_inputs[op.rank]] = op
    return out


def aipp_om_ops(text: str, model_inputs: Sequence[str], where: str = AIPP_FILE) -> list:
    """One NPU-only ``Aipp`` OmOp per configured input (ids 0..n-1: they run first)."""
    from ..dump.om_json import OmOp

    blocks = _blocks(text, model_inputs, where)
    return [OmOp(name=aipp_op_name(name), type="Aipp", id=k, inputs=(f"{name}:0",), npu_only=True)
            for k, name in enumerate(blocks)]


@dataclass
class AippInputs:
    """The AIPP blocks of a converted model, by input name, and the model inputs' declared dims
    (what the AIPP output must be; None: not declared)."""

    blocks: Dict[str, AippOp]
    declared: Dict[str, Optional[Tuple[Optional[int], ...]]] = field(default_factory=dict)

    @staticmethod
    def load(entry: Path, model_inputs: Sequence[str], source: Optional[str] = None,
             declared=None) -> Optional["AippInputs"]:
        """The stored AIPP file of a cache entry (None when the model has none); its errors
        name ``source``, else the entry's copy. ``declared``: the model (a ModelProto whose
        graph inputs give the dims the AIPP output is held to)."""
        path = Path(entry) / AIPP_FILE
        if not path.is_file():
            return None
        text = path.read_text(encoding="utf-8")
        dims = {}
        if declared is not None:
            from ..graph.onnx_graph import declared_shape, graph_inputs

            dims = {i.name: declared_shape(i) if i.type.tensor_type.HasField("shape") else None
                    for i in graph_inputs(declared)}
        return AippInputs(_blocks(text, model_inputs, source or str(path)), dims)

    def preprocess(self, inputs: Mapping[str, np.ndarray], source: Optional[str] = None):
        """``(model inputs, [(op name, raw, aipp output)])``: each configured raw input replaced
        by its AIPP output (float16 values, as float32 for the float network). Errors name
        ``source`` (the file the model was converted with) when given."""
        out = dict(inputs)
        records: List[Tuple[str, np.ndarray, np.ndarray]] = []
        for name, op in self.blocks.items():
            if name not in inputs:
                continue  # check_inputs reports the missing input
            if source:
                op = replace(op, path=str(source))
            dims = self.declared.get(name)
            if dims is not None and len(dims) == 4:  # what a crop size of 0 takes
                op = op.with_model_hw((dims[2], dims[3]))
            raw = np.asarray(inputs[name])
            if raw.dtype != np.uint8:
                raise ConfigError(f"inputs of the AIPP model ({op.shown})",
                                  f"{name!r} must be raw uint8 images ({op.input_format}, NHWC) because "
                                  f"the AIPP file pre-processes it; got {raw.dtype} {tuple(raw.shape)}")
            result = apply_aipp(op, raw, name=name)
            check_output_size(op, name, raw, result, self.declared.get(name))
            out[name] = result.astype(np.float32)
            records.append((aipp_op_name(name), raw, result))
        return out, records


def preprocess(aipp: Optional[AippInputs], inputs: Mapping[str, np.ndarray],
               source: Optional[str] = None):
    """``AippInputs.preprocess`` when the model has AIPP, else the inputs unchanged."""
    if aipp is None:
        return inputs, []
    return aipp.preprocess(inputs, source)
