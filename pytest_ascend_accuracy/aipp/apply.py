"""Apply a static AIPP block to raw images, as the device's AIPP unit does.

Semantics, order and storage, from CANN's documentation and operator code:

- Order (ATC guide, "Configuration File Template", atlasatc_16_0025.html: "Restricted by hardware
  processing logic, AIPP functions will be processed in the following sequence: channel swap
  (rbuv_swap_switch) -> cropping -> CSC -> mean subtraction/normalization -> padding").
- Input layouts (AIPP overview, atlasmcg_05_c30_0007): YUV420SP_U8 is NV12 (a Y plane of H rows,
  then H/2 rows of interleaved U, V; ``rbuv_swap_switch`` true reads NV21); chroma is brought to
  YUV444 by repeating each U, V sample over its 2x2 block; RGB888_U8 is R, G, B bytes
  (``rbuv_swap_switch`` true reads B, G, R); XRGB8888_U8 is four bytes a pixel, the X byte
  first with ``ax_swap_switch`` true (X, R, G, B) and last without it (R, G, B, X), as the
  guide's configurations set it (CSC_config.md "XRGB8888_U8转RGB": ``ax_swap_switch : true``,
  "RGBX8888_U8转GRAY": false; config_file_template.md table 2: XRGB package true, RGBX false;
  the template's "RGBA->ARGB" wording does not say which way), the X byte is dropped;
  YUV400_U8 is one Y plane (one output channel).
- Crop (atlasatc_16_0029, config_file_template.md): ``crop_size_w/h`` 0 (or left out) crops the
  model input's width/height (``--input_shape``) from ``load_start_pos``, not to the image's
  edge (ascend-opp ``aipp_comm.py``: ``if crop_size_h == 0: crop_size_h = H``, H the output's).
- CSC (CSC Configuration, atlasatc_16_0021.html): YUV input: ``out = (M x (in - input_bias)) >>
  8``; RGB input: ``out = ((M x in) >> 8) + output_bias``; integer matrix and biases, result
  saturated to 0..255. Matrix rows produce output channels 0, 1, 2 in order (the same table
  gives YUV->RGB and YUV->BGR by swapping rows).
- Normalisation (Normalization Configuration, atlasatc_16_0022.html):
  ``pixel_out_chx(i) = [pixel_in_chx(i) - mean_chn_i - min_chn_i] * var_reci_chn_i``, with
  the device's storage: ``mean_chn`` an int16 register, ``min_chn`` and ``var_reci_chn``
  float16 (aclAippInfo; ascend-opp ``aipp_comm.py`` loads the DTC mean as int16 and min/var
  as 16-bit float bits); the output is float16 ("uint8->fp16" data type conversion).
- Padding comes last and writes ``padding_value`` into the border.

The result is float16 NCHW (one channel for YUV400_U8, else three).
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from ..errors import ConfigError
from .config import AippOp
from .keys import matrix_keys


def apply_aipp(op: AippOp, raw: np.ndarray, *, name: Optional[str] = None) -> np.ndarray:
    """Apply ``op`` to a batch of raw images (NHWC uint8; NV12 rows for YUV420SP_U8): float16
    NCHW. A single image (without the batch dimension) is accepted too. ``name``: the model
    input the images are for, as errors name it (None: not known, none named)."""
    raw = np.asarray(raw)
    if raw.dtype != np.uint8:
        raise ConfigError(op.where("input_format"),
                          f"input_format: {_images(name)} must be raw uint8 bytes for AIPP, got "
                          f"{raw.dtype}")
    if _is_single_image(op, raw):
        raw = raw[None]
    return np.stack([apply_aipp_image(op, img, name=name) for img in raw])


def _is_single_image(op: AippOp, raw: np.ndarray) -> bool:
    if op.input_format in ("RGB888_U8", "XRGB8888_U8"):
        return raw.ndim == 3
    return raw.ndim == 2 or (raw.ndim == 3 and raw.shape[-1] == 1)  # YUV planes: rows x W [x 1]


def apply_aipp_image(op: AippOp, image: np.ndarray, *, name: Optional[str] = None) -> np.ndarray:
    """Apply ``op`` to one raw image: float16 CHW."""
    pixels = pixels_before_normalisation(op, image, name=name)
    return pad(op, normalise(op, pixels))


def pixels_before_normalisation(op: AippOp, image: np.ndarray, *, name: Optional[str] = None,
                                exact: bool = False) -> np.ndarray:
    """Swap, crop and CSC: the 0..255 integer pixels (int32 HWC) the normaliser receives
    (``exact``: the CSC in float, without the device's ``>> 8`` truncation)."""
    px = decode(op, image, name=name)
    px = crop(op, px)
    return csc(op, px, exact=exact)


def csc_truncation(op: AippOp, image: np.ndarray) -> Optional[np.ndarray]:
    """What the device's integer CSC adds to an exact conversion with the same matrix, per
    element (CHW pixel levels, in -1..0 before saturation); None without CSC."""
    if not op.get("csc_switch"):
        return None
    px = crop(op, decode(op, image))
    return np.moveaxis(csc(op, px) - csc(op, px, exact=True), -1, 0)


def decode(op: AippOp, image: np.ndarray, *, name: Optional[str] = None) -> np.ndarray:
    """Raw bytes -> int32 HWC channels after the R/B (U/V) and A/X swaps; checks the size."""
    fmt = op.input_format
    img = np.asarray(image)
    if fmt in ("YUV420SP_U8", "YUV400_U8") and img.ndim == 3 and img.shape[-1] == 1:
        img = img[..., 0]
    if fmt == "RGB888_U8":
        _expect(op, img.ndim == 3 and img.shape[-1] == 3, name, img, "H x W x 3 bytes (R, G, B)")
        px = img.astype(np.int32)
    elif fmt == "XRGB8888_U8":
        order = "X, R, G, B" if op.get("ax_swap_switch") else "R, G, B, X"
        _expect(op, img.ndim == 3 and img.shape[-1] == 4, name, img, f"H x W x 4 bytes ({order})")
        px = img[..., 1:4] if op.get("ax_swap_switch") else img[..., 0:3]
        px = px.astype(np.int32)
    elif fmt == "YUV420SP_U8":
        _expect(op, img.ndim == 2 and img.shape[0] % 3 == 0
                and (img.shape[0] * 2 // 3) % 2 == 0 and img.shape[1] % 2 == 0, name, img, "NV12 rows: (H * 3/2) x W with H, W even")
        h = img.shape[0] * 2 // 3
        y = img[:h].astype(np.int32)
        uv = img[h:].reshape(h // 2, img.shape[1] // 2, 2).astype(np.int32)
        uv = uv.repeat(2, axis=0).repeat(2, axis=1)
        px = np.stack([y, uv[..., 0], uv[..., 1]], axis=-1)
    elif fmt == "YUV400_U8":
        _expect(op, img.ndim == 2, name, img, "H x W bytes (one Y plane)")
        px = img.astype(np.int32)[..., None]
    else:  # parse_aipp_config rejects other formats already
        raise op.error("input_format", f"{fmt} is not supported")
    if op.get("rbuv_swap_switch") and px.shape[-1] == 3:  # R<->B, or U<->V for YUV
        px = px[..., [0, 2, 1]] if fmt == "YUV420SP_U8" else px[..., ::-1]
    _check_src_size(op, px.shape[0], px.shape[1], name)
    return np.ascontiguousarray(px)


def _images(name: Optional[str]) -> str:
    """The images of model input ``name`` as messages say it (no name: none made up)."""
    return f"the images of {name!r}" if name else "the images"


def _expect(op: AippOp, ok: bool, name: Optional[str], img: np.ndarray, what: str) -> None:
    if ok:
        return
    problem = (f"input_format: {op.input_format} expects {what} per image; {_images(name)} "
               f"include one of shape {tuple(img.shape)}")
    channels = {"RGB888_U8": 3, "XRGB8888_U8": 4}.get(op.input_format)
    if channels and img.ndim == 3 and img.shape[0] == channels:  # C x H x W (a tensor's)
        problem += (f": that is C x H x W; AIPP reads raw bytes H x W x C: transpose the "
                    f"images, e.g. images.transpose(0, 2, 3, 1) for a batch (image.transpose("
                    f"1, 2, 0) for one)")
    raise ConfigError(op.where("input_format"), problem)


def _check_src_size(op: AippOp, h: int, w: int, name: Optional[str]) -> None:
    for key, got in (("src_image_size_h", h), ("src_image_size_w", w)):
        want = op.get(key)
        if want and want != got:
            raise op.error(key, f"{want}, but {_images(name)} are {w} wide and {h} high")


def crop(op: AippOp, px: np.ndarray) -> np.ndarray:
    """The crop window (``load_start_pos_*``, ``crop_size_*``); a size of 0 is the model
    input's (``op.model_hw``; ATC guide: "抠图大小 ... 取值来自模型转换时--input_shape参数中的宽和高")."""
    if not op.get("crop"):
        return px
    h, w = px.shape[:2]
    y0, x0 = op.get("load_start_pos_h"), op.get("load_start_pos_w")
    ch, cw = crop_hw(op)
    if y0 + ch > h or x0 + cw > w:
        axis = "w" if x0 + cw > w else "h"
        raise op.error(f"crop_size_{axis}", f"crop window {cw}x{ch}{_model_sized(op)} at "
                                            f"({x0}, {y0}) does not fit a {w}x{h} image")
    return px[y0:y0 + ch, x0:x0 + cw]


def crop_hw(op: AippOp) -> Tuple[int, int]:
    """The crop's height and width; a size of 0 without the model input's size known is an
    error naming the key (the crop takes the model input's size, and this check has no model)."""
    sizes = []
    for axis, dim in (("h", "height"), ("w", "width")):
        size = op.crop_size(axis)
        if size is None:
            key = f"crop_size_{axis}"
            where, what = (key, "0") if key in op.values else ("crop", f"{key} is left out")
            raise op.error(where, f"{what}: the crop then takes the model input's {dim} (ATC: "
                                  f"from --input_shape), which is not known here: set {key}")
        sizes.append(size)
    return sizes[0], sizes[1]


def _model_sized(op: AippOp) -> str:
    """How a crop window sized by the model input says so ('' when the file sizes it)."""
    zero = [f"crop_size_{axis} 0" for axis in ("w", "h") if not op.get(f"crop_size_{axis}")]
    return f" ({' and '.join(zero)}: the model input's size)" if zero else ""


def csc_matrix(op: AippOp) -> np.ndarray:
    """The 3x3 integer CSC matrix of ``op`` (rows = output channels)."""
    return np.array([op.get(k) for k in matrix_keys()], dtype=np.int64).reshape(3, 3)


def csc(op: AippOp, px: np.ndarray, *, exact: bool = False) -> np.ndarray:
    """Colour-space conversion with the file's integer matrix and biases, saturated to 0..255
    (``exact``: float64, ``/ 256`` instead of the ``>> 8`` truncation)."""
    if not op.get("csc_switch"):
        return px
    if px.shape[-1] != 3:
        raise op.error("csc_switch", f"{op.input_format} has one channel; colour-space conversion "
                                     f"needs three")
    m = csc_matrix(op)
    flat = px.reshape(-1, 3).astype(np.int64)
    yuv = op.input_format in ("YUV420SP_U8", "YUV400_U8")
    bias = np.array([op.get(f"{'input' if yuv else 'output'}_bias_{i}") for i in range(3)],
                    dtype=np.int64)
    if exact:
        out = ((flat - bias) @ m.T) / 256.0 if yuv else (flat @ m.T) / 256.0 + bias
        return np.clip(out, 0.0, 255.0).reshape(px.shape)
    out = ((flat - bias) @ m.T) >> 8 if yuv else ((flat @ m.T) >> 8) + bias
    return np.clip(out, 0, 255).astype(np.int32).reshape(px.shape)


def device_params(op: AippOp, channels: int):
    """(mean int, min float16, var_reci float16) per channel, as the device stores them."""
    mean = np.array([int(op.get(f"mean_chn_{c}")) for c in range(channels)], dtype=np.int32)
    mins = np.array([op.get(f"min_chn_{c}") for c in range(channels)], dtype=np.float16)
    var = np.array([op.get(f"var_reci_chn_{c}") for c in range(channels)], dtype=np.float16)
    return mean, mins, var


def normalise(op: AippOp, px: np.ndarray) -> np.ndarray:
    """``(pixel - mean_chn - min_chn) * var_reci_chn`` in float16 steps: HWC int -> CHW float16."""
    c = px.shape[-1]
    mean, mins, var = device_params(op, c)
    chw = np.moveaxis(px, -1, 0).astype(np.int32)
    with np.errstate(over="ignore"):  # out of float16's range is inf, as on the device
        centred = (chw - mean[:, None, None]).astype(np.float16)  # small integers: exact
        shifted = (centred.astype(np.float32)
                   - mins.astype(np.float32)[:, None, None]).astype(np.float16)
        out = (shifted.astype(np.float32) * var.astype(np.float32)[:, None, None]).astype(np.float16)
    return out


def pad(op: AippOp, chw: np.ndarray) -> np.ndarray:
    """Border padding with ``padding_value`` (after normalisation, as the order says)."""
    if not op.get("padding"):
        return chw
    t, b = op.get("top_padding_size"), op.get("bottom_padding_size")
    left, r = op.get("left_padding_size"), op.get("right_padding_size")
    value = np.float16(op.get("padding_value"))
    return np.pad(chw, ((0, 0), (t, b), (left, r)), constant_values=value)


def output_hw(op: AippOp, src_hw: Tuple[int, int]) -> Tuple[int, int]:
    """Height and width of the AIPP output for a source image of ``src_hw`` (a crop size of 0:
    the model input's, ``op.model_hw``; an error where that is not known)."""
    h, w = src_hw
    if op.get("crop"):
        h, w = crop_hw(op)
    if op.get("padding"):
        h += op.get("top_padding_size") + op.get("bottom_padding_size")
        w += op.get("left_padding_size") + op.get("right_padding_size")
    return h, w
