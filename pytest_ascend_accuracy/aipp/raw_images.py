"""Seeded raw images for the inputs an AIPP file feeds: what ``inputs: {seed: N}`` means for a
YAML model converted with ``aipp:``.

A model converted with an AIPP file takes raw uint8 images (``apply.decode``'s layouts), not the
float32 tensors ``make_inputs`` makes from the ONNX inputs; those went to the AIPP input and
were refused ("must be raw uint8 bytes"). Each AIPP input gets random images of its
``input_format`` at the source size: ``src_image_size_h``/``_w``, or where the file leaves them
0, the size that the crop and padding turn into the model input's height and width.
"""
from __future__ import annotations

from typing import Dict, Mapping, Sequence, Tuple

import numpy as np

from .config import AippConfig, AippOp
from ..core.yaml_text import yaml_flow_map
from ..errors import ConfigError


def seeded_raw_images(config: AippConfig, model_inputs: Mapping[str, np.ndarray],
                      names: Sequence[str], seed: int) -> Dict[str, np.ndarray]:
    """``model_inputs`` (``make_inputs``'s arrays, by input name) with each AIPP input
    (``names[rank]``) replaced by ``N`` raw images, ``N`` the model input's batch."""
    out = dict(model_inputs)
    rng = np.random.default_rng(seed)
    for op in config.ops:
        name = names[op.rank] if op.rank < len(names) else None
        if name is None or name not in out:
            raise ConfigError(op.where("related_input_rank"),
                              f"input {op.rank} of the model has no input to make images for")
        shape = np.shape(out[name])
        if len(shape) != 4:
            raise ConfigError(op.where(), f"input {name!r} has shape {tuple(shape)}: an AIPP "
                                          f"input is N x C x H x W; give its images as a .npy file "
                                          f"(inputs: {yaml_flow_map({name: 'frames.npy'})})")
        h, w = source_size(op, int(shape[2]), int(shape[3]))
        out[name] = _images(op.input_format, int(shape[0]), h, w, rng)
    return out


def source_size(op: AippOp, out_h: int, out_w: int) -> Tuple[int, int]:
    """The raw image size: the file's ``src_image_size_*``, else what crop and padding make the
    model input's ``out_h`` x ``out_w`` from."""
    sizes = []
    for axis, out, pads in (("h", out_h, ("top", "bottom")), ("w", out_w, ("left", "right"))):
        given = op.get(f"src_image_size_{axis}")
        if given:
            sizes.append(int(given))
            continue
        size = out - (sum(op.get(f"{p}_padding_size") for p in pads) if op.get("padding") else 0)
        if op.get("crop"):
            size = op.get(f"load_start_pos_{axis}") + (op.get(f"crop_size_{axis}") or size)
        sizes.append(size)
    return sizes[0], sizes[1]


def _images(input_format: str, n: int, h: int, w: int, rng) -> np.ndarray:
    if input_format == "RGB888_U8":
        return rng.integers(0, 256, (n, h, w, 3), dtype=np.uint8)
    if input_format == "XRGB8888_U8":
        return rng.integers(0, 256, (n, h, w, 4), dtype=np.uint8)
    if input_format == "YUV400_U8":
        return rng.integers(16, 236, (n, h, w), dtype=np.uint8)
    # YUV420SP_U8: NV12 rows, Y then interleaved UV, in the narrow range
    y = rng.integers(16, 236, (n, h, w), dtype=np.uint8)
    uv = rng.integers(16, 241, (n, h // 2, w), dtype=np.uint8)
    return np.concatenate([y, uv], axis=1)


__all__ = ["seeded_raw_images", "source_size"]
