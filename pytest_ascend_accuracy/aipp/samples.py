"""Reference pre-processing functions and AIPP file text for tests, examples and demos.

``imagenet_reference`` is what a PyTorch/torchvision network's own pre-processing does to an
RGB uint8 image (``(x - mean) / std`` per channel, ImageNet statistics on the 0..255 scale,
CHW float32); ``nv12_reference`` decodes NV12 bytes with the BT.601 narrow-range formula in
float first. ``imagenet_aipp`` writes the AIPP block that matches them, split as the device
stores it (integer ``mean_chn``, fractional ``min_chn``, ``var_reci_chn = 1/std``).
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

import numpy as np

IMAGENET_MEAN = (123.675, 116.28, 103.53)
IMAGENET_STD = (58.395, 57.12, 57.375)
#: BT.601 narrow range YUV -> RGB in float (rows R, G, B)
BT601_NARROW = np.array([[1.164, 0.0, 1.596], [1.164, -0.392, -0.813], [1.164, 2.017, 0.0]])


def imagenet_reference(image: np.ndarray, *, bgr: bool = False,
                       crop: Optional[Tuple[int, int, int, int]] = None) -> np.ndarray:
    """``(rgb - mean) / std`` of an HxWx3 uint8 RGB image as float32 CHW (``crop`` = y, x, h, w;
    ``bgr`` gives the channels in B, G, R order with the statistics to match)."""
    rgb = np.asarray(image, dtype=np.float64)
    return _normalise(rgb, bgr=bgr, crop=crop)


def nv12_reference(image: np.ndarray, *, crop: Optional[Tuple[int, int, int, int]] = None) -> np.ndarray:
    """NV12 bytes ((H*3/2) x W) -> BT.601 narrow-range RGB in float -> ImageNet normalisation."""
    img = np.asarray(image)
    if img.ndim == 3:
        img = img[..., 0]
    h = img.shape[0] * 2 // 3
    y = img[:h].astype(np.float64)
    uv = img[h:].reshape(h // 2, img.shape[1] // 2, 2).repeat(2, 0).repeat(2, 1).astype(np.float64)
    yuv = np.stack([y - 16.0, uv[..., 0] - 128.0, uv[..., 1] - 128.0], axis=-1)
    rgb = np.clip(yuv @ BT601_NARROW.T, 0.0, 255.0)
    return _normalise(rgb, bgr=False, crop=crop)


def _normalise(rgb: np.ndarray, *, bgr: bool, crop) -> np.ndarray:
    if crop is not None:
        y0, x0, h, w = crop
        rgb = rgb[y0:y0 + h, x0:x0 + w]
    mean, std = np.array(IMAGENET_MEAN), np.array(IMAGENET_STD)
    out = (rgb - mean) / std
    if bgr:
        out = out[..., ::-1]
    return np.ascontiguousarray(out.transpose(2, 0, 1)).astype(np.float32)


def random_rgb(n: int, h: int, w: int, seed: int = 0) -> np.ndarray:
    """``n`` random RGB888 images (N x H x W x 3 uint8)."""
    return np.random.default_rng(seed).integers(0, 256, (n, h, w, 3), dtype=np.uint8)


def random_nv12(n: int, h: int, w: int, seed: int = 0) -> np.ndarray:
    """``n`` random NV12 images (N x (H*3/2) x W uint8) in the narrow range."""
    rng = np.random.default_rng(seed)
    y = rng.integers(16, 236, (n, h, w), dtype=np.uint8)
    uv = rng.integers(16, 241, (n, h // 2, w), dtype=np.uint8)
    return np.concatenate([y, uv], axis=1)


def imagenet_aipp(input_format: str = "RGB888_U8", *, src_hw: Optional[Sequence[int]] = None,
                  crop: Optional[Tuple[int, int, int, int]] = None, csc: bool = False,
                  rank: Optional[int] = None, extra: str = "") -> str:
    """The AIPP block that matches :func:`imagenet_reference` / :func:`nv12_reference`."""
    lines = ["aipp_op {", "    aipp_mode: static"]
    if rank is not None:
        lines.append(f"    related_input_rank: {rank}")
    lines.append(f"    input_format: {input_format}")
    if src_hw:
        lines += [f"    src_image_size_w: {src_hw[1]}", f"    src_image_size_h: {src_hw[0]}"]
    if crop:
        y0, x0, h, w = crop
        lines += ["    crop: true", f"    load_start_pos_w: {x0}", f"    load_start_pos_h: {y0}",
                  f"    crop_size_w: {w}", f"    crop_size_h: {h}"]
    if csc:
        lines += ["    csc_switch: true", "    # BT.601 narrow range YUV -> RGB"]
        m = ((298, 0, 409), (298, -100, -208), (298, 516, 0))
        lines += [f"    matrix_r{i}c{j}: {m[i][j]}" for i in range(3) for j in range(3)]
        lines += [f"    input_bias_{i}: {b}" for i, b in enumerate((16, 128, 128))]
    for c, (mean, std) in enumerate(zip(IMAGENET_MEAN, IMAGENET_STD)):
        whole = int(mean)
        lines += [f"    mean_chn_{c}: {whole}", f"    min_chn_{c}: {round(mean - whole, 3)}",
                  f"    var_reci_chn_{c}: {1.0 / std:.7f}"]
    if extra:
        lines.append(extra)
    lines.append("}")
    return "\n".join(lines) + "\n"
