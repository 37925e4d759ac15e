"""Our AIPP parser decides as protobuf's TextFormat does, on insert_op.proto's real fields.

ATC reads ``--insert_op_conf`` into ``domi.InsertNewOps`` with protobuf's TextFormat. The
message is built here from ``AippOpParams`` as CANN's ``insert_op.proto`` declares it (field
types, numbers, ``repeated``, enum values: transcribed from mindspore-ai/graphengine
``metadef/graph/proto/insert_op.proto``, commit 5b11020e, the same in ``ge/proto``,
``src/proto`` and Huawei-Ascend/tensorflow ``inc/common/proto``; the current CANN proto,
mirror-cann/ge ``graph_metadef/proto/insert_op.proto`` commit fcbeb6f2, adds ``float
padding_value = 72``, the one field those older copies lack), and every case is parsed by
python ``google.protobuf.text_format`` and by ours. Where TextFormat takes a file ours refuses,
the case names why: GE's own checks after parsing (``AippOp::ValidateParams``), what the
emulator does not do, or a spelling protobuf's C++ parser (the one ATC links) refuses though
python's takes it (``text_format.cc``: ``ConsumeSignedInteger`` / ``ConsumeDouble`` accept a
leading ``-`` only).
"""
import math
import re

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format

from pytest_ascend_accuracy.aipp import parse_aipp_config
from pytest_ascend_accuracy.aipp.keys import ENUMS, KEY_KINDS, REPEATED_KEYS, UINT32_KEYS
from pytest_ascend_accuracy.errors import ConfigError

INPUT_FORMATS = """UNDEFINED = 0; YUV420SP_U8 = 1; XRGB8888_U8 = 2; RGB888_U8 = 3; YUV400_U8 = 4;
NC1HWC0DI_FP16 = 5; NC1HWC0DI_S8 = 6; ARGB8888_U8 = 7; YUYV_U8 = 8; YUV422SP_U8 = 9;
AYUV444_U8 = 10; RAW10 = 11; RAW12 = 12; RAW16 = 13; RAW24 = 14; RGB16 = 15; RGB20 = 16;
RGB24 = 17; RGB8_IR = 18; RGB16_IR = 19; RGB24_IR = 20;"""
AIPP_MODES = "undefined = 0; static = 1; dynamic = 2;"
FIELDS = """AippMode aipp_mode = 1; uint32 related_input_rank = 2; string related_input_name = 6;
repeated uint32 input_edge_idx = 3; uint32 max_src_image_size = 4; bool support_rotation = 5;
InputFormat input_format = 51; bool csc_switch = 52; float cpadding_value = 53;
bool rbuv_swap_switch = 54; bool ax_swap_switch = 55; bool single_line_mode = 56;
int32 src_image_size_w = 57; int32 src_image_size_h = 58; bool crop = 59;
int32 load_start_pos_w = 60; int32 load_start_pos_h = 61; int32 crop_size_w = 62;
int32 crop_size_h = 63; bool resize = 64; int32 resize_output_w = 65; int32 resize_output_h = 66;
bool padding = 67; int32 left_padding_size = 68; int32 right_padding_size = 69;
int32 top_padding_size = 70; int32 bottom_padding_size = 71; float padding_value = 72;
int32 mean_chn_0 = 10; int32 mean_chn_1 = 11; int32 mean_chn_2 = 12; int32 mean_chn_3 = 19;
float min_chn_0 = 13; float min_chn_1 = 14; float min_chn_2 = 15; float min_chn_3 = 20;
repeated float var_reci_chn_0 = 16; repeated float var_reci_chn_1 = 17;
repeated float var_reci_chn_2 = 18; repeated float var_reci_chn_3 = 21;
repeated int32 matrix_r0c0 = 30; repeated int32 matrix_r0c1 = 31; repeated int32 matrix_r0c2 = 32;
repeated int32 matrix_r1c0 = 33; repeated int32 matrix_r1c1 = 34; repeated int32 matrix_r1c2 = 35;
repeated int32 matrix_r2c0 = 36; repeated int32 matrix_r2c1 = 37; repeated int32 matrix_r2c2 = 38;
repeated int32 output_bias_0 = 39; repeated int32 output_bias_1 = 40;
repeated int32 output_bias_2 = 41; repeated int32 input_bias_0 = 42;
repeated int32 input_bias_1 = 43; repeated int32 input_bias_2 = 44;
uint32 raw_rgbir_to_f16_n = 45;"""
#: keys we read that the proto lacks: none (``padding_value`` is field 72 of the current proto)
NOT_IN_PROTO: set = set()

_F = descriptor_pb2.FieldDescriptorProto
_TYPES = {"bool": _F.TYPE_BOOL, "int32": _F.TYPE_INT32, "uint32": _F.TYPE_UINT32,
          "float": _F.TYPE_FLOAT, "string": _F.TYPE_STRING}


def _enum_values(text):
    return [(n, int(v)) for n, v in re.findall(r"(\w+)\s*=\s*(\d+);", text)]


def _fields():
    return [(bool(rep), typ, name, int(num)) for rep, typ, name, num in
            re.findall(r"(repeated )?(\w+) (\w+) = (\d+);", FIELDS)]


def _message_class():
    fd = descriptor_pb2.FileDescriptorProto(name="insert_op_test.proto", package="domi",
                                            syntax="proto3")
    m = fd.message_type.add(name="AippOpParams")
    for enum_name, values in (("InputFormat", INPUT_FORMATS), ("AippMode", AIPP_MODES)):
        e = m.enum_type.add(name=enum_name)
        for name, number in _enum_values(values):
            e.value.add(name=name, number=number)
    for repeated, typ, name, number in _fields():
        f = m.field.add(name=name, number=number,
                        label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
        if typ in _TYPES:
            f.type = _TYPES[typ]
        else:
            f.type, f.type_name = _F.TYPE_ENUM, f".domi.AippOpParams.{typ}"
    top = fd.message_type.add(name="InsertNewOps")
    top.field.add(name="aipp_op", number=1, type=_F.TYPE_MESSAGE, label=_F.LABEL_REPEATED,
                  type_name=".domi.AippOpParams")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("domi.InsertNewOps"))


InsertNewOps = _message_class()


def textformat(text):
    """The InsertNewOps message TextFormat reads, or its ParseError."""
    msg = InsertNewOps()
    try:
        text_format.Parse(text, msg)
    except text_format.ParseError as exc:
        return exc
    return msg


def ours(text):
    try:
        return parse_aipp_config(text, "cam.cfg")
    except ConfigError as exc:
        return exc


def test_keys_agree_with_insert_op_proto():
    """Our key kinds, enum numbers, uint32 and repeated keys are the proto's."""
    fields = {name: (rep, typ) for rep, typ, name, _ in _fields()}
    assert set(KEY_KINDS) - set(fields) == NOT_IN_PROTO
    for key, kind in KEY_KINDS.items():
        if key in NOT_IN_PROTO:
            continue
        rep, typ = fields[key]
        want = {"int32": "int", "uint32": "int", "bool": "bool", "float": "float", "string": "str",
                "AippMode": "enum:aipp_mode", "InputFormat": "enum:input_format"}[typ]
        assert (key, kind) == (key, want)
        assert (key, key in UINT32_KEYS) == (key, typ == "uint32")
        assert (key, key in REPEATED_KEYS) == (key, rep)
    for name, text in (("input_format", INPUT_FORMATS), ("aipp_mode", AIPP_MODES)):
        assert [(n, k) for n, k in _enum_values(text) if k] == \
            [(n, k) for k, n in enumerate(ENUMS[name], 1)]


BLOCK = "aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n %s\n}\n"
SAME = None  # ours takes the file exactly when TextFormat does
#: (case, the line added to a valid block or a whole file, why ours refuses what TextFormat takes)
CASES = [
    # quoted values: strings only
    ("quoted enum", 'input_format: "RGB888_U8"', SAME),
    ("single-quoted enum", "aipp_mode: 'static'", SAME),
    ("quoted enum number", 'input_format: "3"', SAME),
    ("quoted bool", 'csc_switch: "true"', SAME),
    ("quoted int", 'src_image_size_w: "224"', SAME),
    ("quoted float", 'var_reci_chn_0: "0.5"', SAME),
    ("unquoted string", "related_input_name: data", SAME),
    ("quoted string", 'related_input_name: "data"', "Caffe models only"),
    # key: value
    ("no colon", "src_image_size_w 224", SAME),
    ("no space around colon", "src_image_size_w:224", SAME),
    ("space before colon", "src_image_size_w :224", SAME),
    ("value on the next line", "src_image_size_w:\n 224", SAME),
    ("two values", "src_image_size_w: 224 225", SAME),
    ("missing value", "src_image_size_w: }\naipp_op {", SAME),
    ("semicolon", "src_image_size_w: 224;", SAME),
    ("comma", "src_image_size_w: 224,", SAME),
    ("two semicolons", "src_image_size_w: 224;;", SAME),
    ("comment", "src_image_size_w: 224 # 224 wide", SAME),
    ("// comment", "src_image_size_w: 224 // 224 wide", SAME),
    ("unknown key", "src_image_size: 224", SAME),
    ("key case", "Src_image_size_w: 224", SAME),
    # integers (int32 / uint32)
    ("negative int", "mean_chn_0: -5", "outside 0..255"),
    ("octal int", "src_image_size_w: 010", SAME),
    ("not octal", "src_image_size_w: 08", SAME),
    ("hex int", "src_image_size_w: 0x10", SAME),
    ("negative hex", "matrix_r0c0: -0x10", SAME),
    ("exponent int", "src_image_size_w: 1e2", SAME),
    ("float for int", "src_image_size_w: 224.0", SAME),
    ("int32 max", "src_image_size_w: 2147483647", SAME),
    ("int32 min", "mean_chn_0: -2147483648", "outside 0..255"),
    ("over int32", "src_image_size_w: 2147483648", SAME),
    ("under int32", "mean_chn_0: -2147483649", SAME),
    ("negative uint32", "related_input_rank: -1", SAME),
    ("suffix", "src_image_size_w: 224u", SAME),
    ("plus int", "src_image_size_w: +224", "cpp"),
    ("underscore int", "src_image_size_w: 2_24", "cpp"),
    # floats
    ("int for float", "var_reci_chn_0: 1", SAME),
    ("exponent float", "var_reci_chn_0: 3.9e-3", SAME),
    ("f suffix", "var_reci_chn_0: 0.5f", SAME),
    ("leading dot", "var_reci_chn_0: .5", SAME),
    ("trailing dot", "var_reci_chn_0: 5.", SAME),
    ("negative float", "min_chn_0: -0.5", "outside 0..255"),
    ("octal float", "var_reci_chn_0: 010", SAME),
    ("hex float", "var_reci_chn_0: 0x10", SAME),
    ("half exponent", "var_reci_chn_0: 1e", SAME),
    ("inf", "min_chn_0: inf", "finite"),
    ("nan", "min_chn_0: nan", "finite"),
    ("plus float", "min_chn_0: +0.5", "cpp"),
    # bools
    *[(f"bool {w}", f"rbuv_swap_switch: {w}", SAME)
      for w in ("true", "True", "t", "1", "false", "False", "f", "0", "TRUE", "yes", "2", "0x1")],
    # enums
    ("enum name", "aipp_op { aipp_mode: static input_format: YUV400_U8 }", SAME),
    ("enum number", "aipp_op { aipp_mode: 1 input_format: 4 }", SAME),
    ("enum hex number", "aipp_op { aipp_mode: 0x1 input_format: 4 }", SAME),
    ("enum case", "aipp_op { aipp_mode: Static input_format: 4 }", SAME),
    ("enum octal", "aipp_op { aipp_mode: 01 input_format: 4 }", SAME),
    ("enum unknown number", "aipp_op { aipp_mode: 1 input_format: 21 }", "is not one of"),
    ("enum not set", "aipp_op { aipp_mode: static input_format: 0 }", "GE refuses"),
    ("enum not set by name", "aipp_op { aipp_mode: static input_format: UNDEFINED }", "GE refuses"),
    ("dynamic", "aipp_op { aipp_mode: dynamic max_src_image_size: 752640 }", "not supported"),
    # repeated and non-repeated keys
    ("non-repeated twice", "crop: true\n crop: true", SAME),
    ("non-repeated default, then set", "rbuv_swap_switch: false\n rbuv_swap_switch: true", SAME),
    ("non-repeated set, then default", "crop: true\n crop: false", SAME),
    ("non-repeated -0.0 is set", "min_chn_0: -0.0\n min_chn_0: 1", SAME),
    ("non-repeated 0 is not set", "min_chn_0: 0\n min_chn_0: 1", SAME),
    ("repeated twice", "var_reci_chn_0: 0.5\n var_reci_chn_0: 0.5", "configed repeatedly"),
    ("repeated as list", "var_reci_chn_0: [0.5]", SAME),
    ("repeated empty list", "matrix_r0c0: []", SAME),
    ("repeated list of two", "matrix_r0c0: [256, 256]", "configed repeatedly"),
    ("repeated list, trailing comma", "matrix_r0c0: [256,]", SAME),
    ("non-repeated as list", "src_image_size_w: [224]", SAME),
    # whole files
    ("colon before block", "aipp_op: { aipp_mode: static input_format: RGB888_U8 }", SAME),
    ("angle brackets", "aipp_op < aipp_mode: static input_format: RGB888_U8 >", SAME),
    ("list of blocks", "aipp_op: [{ aipp_mode: static input_format: RGB888_U8 },\n"
                       "<aipp_mode: static input_format: RGB888_U8 related_input_rank: 1>]", SAME),
    ("block then ;", "aipp_op { aipp_mode: static input_format: RGB888_U8 };", SAME),
    ("no space before brace", "aipp_op{aipp_mode:static input_format:RGB888_U8}", SAME),
    ("extra brace", "aipp_op { aipp_mode: static input_format: RGB888_U8 }}", SAME),
    ("unclosed block", "aipp_op { aipp_mode: static input_format: RGB888_U8", SAME),
    ("nested block", "aipp_op { aipp_op { aipp_mode: static } }", SAME),
    ("unclosed string", "aipp_op { aipp_mode: static input_format: RGB888_U8\n"
                        " related_input_name: 'data\n}", SAME),
]


def _text(line):
    return line if line.startswith("aipp_op") else BLOCK % line


@pytest.mark.parametrize("line, why", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_accepts_and_refuses_as_textformat_does(line, why):
    text = _text(line)
    theirs, mine = textformat(text), ours(text)
    taken = not isinstance(theirs, Exception)
    if why is None:
        assert isinstance(mine, Exception) is not taken, (theirs, mine)
    else:  # TextFormat takes it; ours refuses, saying why
        assert taken, theirs
        assert isinstance(mine, Exception), mine
        assert why == "cpp" and "expected" in str(mine) or why in str(mine), mine
    if isinstance(mine, Exception):
        assert str(mine).startswith("cam.cfg:"), mine  # the file and the line
        return
    for op, block in zip(mine.ops, theirs.aipp_op):  # and both read the same values
        for key, value in op.values.items():
            got = getattr(block, key)
            got = got[0] if key in REPEATED_KEYS else got
            if KEY_KINDS[key].startswith("enum:"):
                got = block.DESCRIPTOR.fields_by_name[key].enum_type.values_by_number[got].name
            if isinstance(value, float):
                assert math.isclose(value, got, rel_tol=1e-6), (key, value, got)
            else:
                assert value == got, (key, value, got)


QUOTED = ['input_format: "RGB888_U8"', "input_format: 'RGB888_U8'", 'input_format: "rgb888_u8"',
          'aipp_mode: "static"', 'csc_switch: "true"', 'src_image_size_w: "16"',
          'var_reci_chn_0: "0.5"']


@pytest.mark.parametrize("line", QUOTED)
def test_a_quoted_value_names_file_line_key_and_the_spelling_that_works(line):
    """An AIPP user wrote ``input_format: "RGB888_U8"``: ours took it, ATC refuses it. The error
    names the file, line and key, and the unquoted line it gives works pasted in its place."""
    text = "aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n csc_switch: false\n}\n"
    key = line.split(":")[0]
    bad = re.sub(rf"(?m)^ {key}: .*$", " " + line, text) if key in text else \
        text.replace("}", f" {line}\n}}")
    with pytest.raises(ConfigError) as info:
        parse_aipp_config(bad, "cam.cfg")
    msg = str(info.value)
    line_no = bad.splitlines().index(" " + line) + 1
    assert msg.startswith(f"cam.cfg:{line_no}: {key}: "), msg
    assert "quoted" in msg, msg
    fixed_line = msg.rsplit("without quotes: ", 1)[1]
    assert fixed_line.startswith(f"{key}: ") and '"' not in fixed_line and "'" not in fixed_line
    fixed = bad.replace(" " + line, " " + fixed_line)
    parse_aipp_config(fixed, "cam.cfg")
    assert not isinstance(textformat(fixed), Exception)
