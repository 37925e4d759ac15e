"""The vocabulary of an ATC ``--insert_op_conf`` file: key names, value types, defaults.

Key names and types follow CANN's ``insert_op.proto`` (message ``AippOpParams``, the parser ATC
uses for this file) and the "Configuration File Template" of the ATC guide
(hiascend.com ... devaids/atc/atlasatc_16_0025.html); defaults are the template's and those of
the AIPP operator implementation (ascend-opp ``impl/aipp_comm.py``: ``DEFAULT_MATRIX_*``,
``DEFAULT_*_BIAS_*``, ``DEFAULT_VAR_RECI_CHN = 1.0``).

The standard colour-space conversion matrices (YUV -> RGB, rows R, G, B; the integers are
coefficients x 256, the device shifts the product right by 8) are the ATC guide's "CSC
Configuration" tables (atlasatc_16_0021.html): JPEG = BT.601 full ("wide") range, BT.601
narrow, BT.709 narrow. BT.709 full range is not in those tables; its row is derived from the
BT.709 coefficients (R = Y + 1.5748 V, G = Y - 0.1873 U - 0.4681 V, B = Y + 1.8556 U) x 256.
"""
from __future__ import annotations

import difflib
from typing import Dict, Tuple

#: key -> value kind: "bool", "int", "float", "enum:<name>", "str"
KEY_KINDS: Dict[str, str] = {
    "aipp_mode": "enum:aipp_mode",
    "related_input_rank": "int",
    "related_input_name": "str",
    "input_edge_idx": "int",
    "max_src_image_size": "int",
    "support_rotation": "bool",
    "input_format": "enum:input_format",
    "src_image_size_w": "int",
    "src_image_size_h": "int",
    "crop": "bool",
    "load_start_pos_w": "int",
    "load_start_pos_h": "int",
    "crop_size_w": "int",
    "crop_size_h": "int",
    "resize": "bool",
    "resize_output_w": "int",
    "resize_output_h": "int",
    "padding": "bool",
    "left_padding_size": "int",
    "right_padding_size": "int",
    "top_padding_size": "int",
    "bottom_padding_size": "int",
    "padding_value": "float",
    "cpadding_value": "float",
    "csc_switch": "bool",
    "rbuv_swap_switch": "bool",
    "ax_swap_switch": "bool",
    "single_line_mode": "bool",
    "raw_rgbir_to_f16_n": "int",
}
for _i in range(3):
    for _j in range(3):
        KEY_KINDS[f"matrix_r{_i}c{_j}"] = "int"
    KEY_KINDS[f"output_bias_{_i}"] = "int"
    KEY_KINDS[f"input_bias_{_i}"] = "int"
for _i in range(4):
    KEY_KINDS[f"mean_chn_{_i}"] = "int"
    KEY_KINDS[f"min_chn_{_i}"] = "float"
    KEY_KINDS[f"var_reci_chn_{_i}"] = "float"

#: the uint32 fields of ``AippOpParams`` (every other integer key is int32): TextFormat refuses a
#: value outside the field's range, a negative one here
UINT32_KEYS = frozenset({"related_input_rank", "input_edge_idx", "max_src_image_size",
                         "raw_rgbir_to_f16_n"})
#: the ``repeated`` fields: TextFormat takes them twice (or as ``[v, ...]``); GE's
#: ``AippOp::ValidateParams`` then refuses more than one value of each ("can not be configed
#: repeatedly"); ``input_edge_idx`` may list several edges
REPEATED_KEYS = frozenset({"input_edge_idx"} | {f"var_reci_chn_{i}" for i in range(4)}
                          | {f"matrix_r{r}c{c}" for r in range(3) for c in range(3)}
                          | {f"{kind}_bias_{i}" for kind in ("input", "output") for i in range(3)})

#: enum names in the proto's number order from 1 (``insert_op.proto``: ``AippMode`` static = 1,
#: dynamic = 2; ``InputFormat`` YUV420SP_U8 = 1 ... RGB24_IR = 20; 0 is ``undefined``), so a
#: file may give the number, as protobuf's TextFormat parser allows. Checked against graphengine's
#: ``metadef/graph/proto/insert_op.proto`` (docs/formats.md, ATC section;
#: ``tests/aipp/test_aipp_textformat.py`` holds the field list)
ENUMS: Dict[str, Tuple[str, ...]] = {
    "aipp_mode": ("static", "dynamic"),
    "input_format": ("YUV420SP_U8", "XRGB8888_U8", "RGB888_U8", "YUV400_U8", "NC1HWC0DI_FP16",
                     "NC1HWC0DI_S8", "ARGB8888_U8", "YUYV_U8", "YUV422SP_U8", "AYUV444_U8",
                     "RAW10", "RAW12", "RAW16", "RAW24", "RGB16", "RGB20", "RGB24", "RGB8_IR",
                     "RGB16_IR", "RGB24_IR"),
}

#: input formats the emulator applies (the four the AIPP guide's overview lists)
SUPPORTED_FORMATS = ("YUV420SP_U8", "RGB888_U8", "XRGB8888_U8", "YUV400_U8")
YUV_FORMATS = ("YUV420SP_U8", "YUV400_U8")

#: template / operator defaults. The CSC matrix left out of the file depends on the input
#: format (GE ``AippOp::SetCscDefaultValue``): YUV420SP_U8 gets the YUV -> BGR BT.601 narrow
#: matrix below, every other format the RGB -> YUV one (``RGB2YUV_DEFAULTS``)
DEFAULTS: Dict[str, object] = {
    "aipp_mode": None, "related_input_rank": 0, "input_format": None,
    "src_image_size_w": 0, "src_image_size_h": 0,
    "crop": False, "load_start_pos_w": 0, "load_start_pos_h": 0, "crop_size_w": 0, "crop_size_h": 0,
    "resize": False, "padding": False, "left_padding_size": 0, "right_padding_size": 0,
    "top_padding_size": 0, "bottom_padding_size": 0, "padding_value": 0.0,
    "csc_switch": False, "rbuv_swap_switch": False, "ax_swap_switch": False,
    "single_line_mode": False, "support_rotation": False,
    "matrix_r0c0": 298, "matrix_r0c1": 516, "matrix_r0c2": 0,
    "matrix_r1c0": 298, "matrix_r1c1": -100, "matrix_r1c2": -208,
    "matrix_r2c0": 298, "matrix_r2c1": 0, "matrix_r2c2": 409,
    "output_bias_0": 16, "output_bias_1": 128, "output_bias_2": 128,
    "input_bias_0": 16, "input_bias_1": 128, "input_bias_2": 128,
}
#: the CSC matrix GE fills in for an input format other than YUV420SP_U8 (``*_RGB2YUV``)
RGB2YUV_DEFAULTS: Dict[str, int] = {
    "matrix_r0c0": 66, "matrix_r0c1": 129, "matrix_r0c2": 25,
    "matrix_r1c0": -38, "matrix_r1c1": -74, "matrix_r1c2": 112,
    "matrix_r2c0": 112, "matrix_r2c1": -94, "matrix_r2c2": -18,
}
#: the device registers CSC values go into (ascend-opp ``aipp_comm.set_spr2_spr9``: biases
#: ``& 0xff``, matrix entries ``& 0xffff``): a value outside them is not what the device uses
REGISTER_RANGES: Dict[str, Tuple[int, int]] = {
    **{f"{kind}_bias_{i}": (0, 255) for kind in ("input", "output") for i in range(3)},
    **{f"matrix_r{r}c{c}": (-32768, 32767) for r in range(3) for c in range(3)},
}
for _i in range(4):
    DEFAULTS[f"mean_chn_{_i}"] = 0
    DEFAULTS[f"min_chn_{_i}"] = 0.0
    DEFAULTS[f"var_reci_chn_{_i}"] = 1.0

Matrix = Tuple[Tuple[int, int, int], Tuple[int, int, int], Tuple[int, int, int]]

#: name -> (YUV->RGB matrix rows R, G, B; input biases Y, U, V)
YUV2RGB_STANDARDS: Dict[str, Tuple[Matrix, Tuple[int, int, int]]] = {
    "BT.601 full range (JPEG)": (((256, 0, 359), (256, -88, -183), (256, 454, 0)), (0, 128, 128)),
    "BT.601 narrow range": (((298, 0, 409), (298, -100, -208), (298, 516, 0)), (16, 128, 128)),
    "BT.709 narrow range": (((298, 0, 459), (298, -55, -136), (298, 541, 0)), (16, 128, 128)),
    "BT.709 full range": (((256, 0, 403), (256, -48, -120), (256, 475, 0)), (0, 128, 128)),
}


def matrix_keys():
    """The nine ``matrix_rXcY`` keys in row order."""
    return [f"matrix_r{i}c{j}" for i in range(3) for j in range(3)]


#: characters typed for one another: letter O for zero, l or I for one
_LOOKALIKE = {"O": "0", "o": "0", "l": "1", "I": "1"}


def closest_names(name: str, names) -> str:
    """The closest real names, first those ``name`` spells with a look-alike character or
    another case: difflib alone scores ``mean_chn_O`` as close to ``mean_chn_1``, ``_2``
    and ``_3`` as to ``mean_chn_0`` and offered those three, not the key meant (a trial)."""
    alike = [n for n in names if len(n) == len(name) and n != name and all(
        a.lower() == b.lower() or _LOOKALIKE.get(a) == b for a, b in zip(name, n))]
    close = alike + [n for n in difflib.get_close_matches(name, list(names), n=3, cutoff=0.6)
                     if n not in alike]
    return f" (did you mean {', '.join(close[:3])}?)" if close else ""
