"""Which CANN parser takes a Resize depends on the model's ai.onnx opset (resize_parsers): the
Resize warnings compare the device only against the parsers that take that opset, and name
them, the opset, and where the CANN version decides (audit 35 F4: every conversion of an
opset-15 ISNet warned of its 39 linear half_pixel Resizes under canndev's ResizeBilinearV2,
a parser that registers opsets 10-13 only; the 2025 one, the only one found for opset 15,
keeps Resize with its coordinate mode, as the emulator computes it)."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T, helper as h, numpy_helper as nh

from pytest_ascend_accuracy.backends.emulator.atc_resize import (SAFE, resize_rows,
                                                                 resize_warning, safe_pairs)
from pytest_ascend_accuracy.backends.emulator.resize_parsers import parsers_for
from pytest_ascend_accuracy.graph.onnx_graph import tensor_info


def _model(opset, mode, n=4, scale=2.0, count=1, sizes_known=True, **attrs):
    """``count`` Resizes in a chain, each by ``scale`` on the last two axes (opset 10: scales is
    input 1; 11-12: an empty roi; 13+: no roi)."""
    nodes, inits, name, size = [], [], "x", n
    for k in range(count):
        out = f"y{k}"
        inputs = ([name, "sc"] if opset < 11 else
                  [name, "roi", "sc"] if opset < 13 else [name, "", "sc"])
        nodes.append(h.make_node("Resize", inputs, [out], name=f"/stage{k}/Resize", mode=mode,
                                 **attrs))
        name, size = out, int(size * scale)
    inits.append(nh.from_array(np.array([1, 1, scale, scale], np.float32), "sc"))
    if 11 <= opset < 13:
        inits.append(nh.from_array(np.zeros(0, np.float32), "roi"))
    out_shape = [1, 1, size, size] if sizes_known else None
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, n, n])],
                     [h.make_tensor_value_info(name, T.FLOAT, out_shape)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _rows(m, sizes=True):
    return resize_rows(m, m.graph.node, tensor_info(m) if sizes else None)


@pytest.mark.parametrize("opset", [14, 15, 16, 17, 18])
def test_a_linear_half_pixel_resize_at_opset_14_on_is_not_warned_of(opset):
    """ISNet's: linear, half_pixel, 4 -> 8. Only the 2025 parser takes these opsets, and it
    keeps Resize with the coordinate mode: the device reads what ONNX reads."""
    assert [p.key for p in parsers_for(opset)] == ["ops-cv"]
    assert _rows(_model(opset, "linear", coordinate_transformation_mode="half_pixel")) == []


@pytest.mark.parametrize("opset", [11, 12, 13])
def test_a_linear_half_pixel_resize_at_opsets_11_to_13_is_warned_of_under_canndev(opset):
    (row,) = _rows(_model(opset, "linear", coordinate_transformation_mode="half_pixel"))
    assert row[4:] == ["canndev", opset]
    assert ("ONNX reads source coordinates [0.0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3.0] and "
            "the device (as canndev's parser builds it) [0.0, 0.5, 1.0, 1.5") in row[3]


def test_the_warning_names_the_opset_both_parsers_and_that_the_cann_version_decides():
    m = _model(13, "linear", coordinate_transformation_mode="half_pixel")
    text = resize_warning("isnet", _rows(m))
    assert text.startswith("model 'isnet' (ONNX opset 13): linear Resize '/stage0/Resize' "
                           "(coordinate_transformation_mode='half_pixel'): resizing axis 2")
    assert ("two CANN ONNX parsers take a Resize at opset 13 and build it differently: the 2025 "
            "parser (hicann/ops-cv resize_onnx_plugin.cpp, opsets 10-18) builds Resize keeping "
            "the model's coordinate mode, which takes the same source pixels as the emulator; "
            "canndev's parser (resize_plugin.cc, opsets 10-13) builds ResizeBilinearV2 with "
            "neither flag, which takes other source pixels than the emulator here; the emulator "
            "does not know which one your CANN has (the 2025 parser converts a Resize at opsets "
            "14-18 too, canndev's refuses it there), so under canndev's parser a pass on the "
            "emulator proves nothing for this op") in text


def test_thirty_nine_resizes_are_one_warning_with_the_rest_counted():
    many = [[f"/s{k}/Resize", "half_pixel", "linear", "resizing axis 2 ...", "canndev", 13]
            for k in range(39)]
    text = resize_warning("isnet", many)
    assert text.count("model 'isnet'") == 1 and text.count("; and 31 more: ") == 1


def test_a_nearest_resize_at_opset_15_is_compared_under_the_2025_parser_only():
    """half_pixel with round_prefer_ceil, 6 -> 9: the 2025 parser's half_pixel_centers reads
    what ONNX reads; canndev's (neither flag) does not, but takes no opset-15 model."""
    attrs = dict(coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil")
    (row,) = _rows(_model(13, "nearest", n=6, scale=1.5, **attrs))
    assert row[4:] == ["canndev", 13]
    assert _rows(_model(15, "nearest", n=6, scale=1.5, **attrs)) == []


def test_at_opset_10_the_2025_parsers_linear_resize_is_half_pixel():
    """The 2025 parser gives an opset-10 linear Resize no coordinate mode: the IR's default,
    half_pixel, where ONNX's opset-10 Resize is asymmetric (canndev's ResizeBilinearV2 with
    neither flag reads what ONNX reads at 4 -> 8)."""
    m = _model(10, "linear")
    (row,) = _rows(m)
    assert row[1:3] == ["", "linear"] and row[4:] == ["ops-cv", 10]
    text = resize_warning("m", [row])
    assert ("the 2025 parser (hicann/ops-cv resize_onnx_plugin.cpp, opsets 10-18) builds Resize "
            "without a coordinate mode, so the IR's default, half_pixel, which takes other "
            "source pixels than the emulator here") in text
    x = np.arange(4, dtype=np.float32)[None, None, :, None] * np.ones((1, 1, 1, 4), np.float32)
    y = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x})[0][0, 0, :, 0]
    np.testing.assert_allclose(y, np.minimum(np.arange(8) / 2, 3))  # asymmetric in ONNX


def test_no_parser_found_takes_opset_19_so_no_claim_is_made():
    assert parsers_for(19) == []
    assert _rows(_model(19, "nearest", n=6, scale=1.5), sizes=False) == []


def _tf_nearest(n_in, n_out, half_pixel_centers):
    o = np.arange(n_out)
    idx = np.floor((o + 0.5) * (n_in / n_out)) if half_pixel_centers else np.floor(
        o * (n_in / n_out))
    return np.clip(idx.astype(int), 0, n_in - 1)


def test_half_pixel_with_round_prefer_ceil_is_safe_at_opsets_14_to_18_where_sizes_allow():
    """What the settings-alone warning offers at opset 15: warned exactly where the 2025
    parser's op (half_pixel_centers) takes other pixels than onnxruntime."""
    assert ("half_pixel", "round_prefer_ceil") in safe_pairs(15) - SAFE
    assert safe_pairs(13) == SAFE
    wrong = []
    for n_in in (1, 2, 3, 4, 5, 7, 10, 13):
        for scale in (0.25, 0.35, 0.5, 0.6, 1.3, 1.5, 2.0, 2.5):
            if int(n_in * scale) < 1:
                continue
            m = _model(15, "nearest", n=n_in, scale=scale,
                       coordinate_transformation_mode="half_pixel",
                       nearest_mode="round_prefer_ceil")
            x = np.arange(n_in, dtype=np.float32)[None, None, :, None] * np.ones(
                (1, 1, 1, n_in), np.float32)
            y = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x})[0]
            if y.shape[-2] != int(n_in * scale):
                continue
            same = np.array_equal(y[0, 0, :, 0].astype(int),
                                  _tf_nearest(n_in, y.shape[-2], True))
            if bool(_rows(m)) == same:
                wrong.append((n_in, scale, same))
    assert not wrong


def test_the_settings_the_opset_15_warning_offers_pasted_silence_it():
    """By settings alone (sizes unknown): ONNX's defaults at opset 15 are warned of, naming the
    only parser found for that opset; the offered 'half_pixel' with 'round_prefer_ceil',
    pasted, is not. At opset 13 it is not offered, and stays warned of (canndev's differs)."""
    default = _model(15, "nearest", n=6, scale=1.5, sizes_known=False)
    text = resize_warning("m", _rows(default, sizes=False))
    assert ("at opset 15 the only parser found that takes it is the 2025 parser (hicann/ops-cv "
            "resize_onnx_plugin.cpp, opsets 10-18), which sets half_pixel_centers") in text
    assert "'half_pixel' with 'round_prefer_ceil'" in text
    pasted = dict(coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil")
    assert _rows(_model(15, "nearest", sizes_known=False, **pasted), sizes=False) == []
    old = _rows(_model(13, "nearest", sizes_known=False, **pasted), sizes=False)
    assert old and "'half_pixel' with 'round_prefer_ceil'" not in resize_warning("m", old)


TF_BICUBIC = dict(coordinate_transformation_mode="half_pixel", cubic_coeff_a=-0.5,
                  exclude_outside=1)


@pytest.mark.parametrize("opset", [11, 13, 15, 18])
def test_a_cubic_resize_with_tensorflows_coefficients_is_warned_of(opset):
    """The 2025 parser sets only mode and coordinate mode on the Resize it builds
    (``ParseParamsResize``), so tf2onnx's bicubic (-0.5, exclude_outside 1) runs with CANN's
    defaults (-0.75, 0) on the device, while the emulator computes the model's (review RA2 of
    audit 35). At 11-13 canndev's parser refuses cubic outright."""
    (row,) = _rows(_model(opset, "cubic", **TF_BICUBIC))
    assert row[2:] == ["cubic", "the device computes it with CANN's cubic_coeff_a=-0.75, "
                       "exclude_outside=0 where the model says cubic_coeff_a=-0.5, "
                       "exclude_outside=1", "ops-cv", opset]
    text = resize_warning("m", [row])
    assert text.startswith(f"model 'm' (ONNX opset {opset}): Resize '/stage0/Resize' (cubic, "
                           "coordinate_transformation_mode='half_pixel'): the device computes")
    assert "the 2025 parser (hicann/ops-cv resize_onnx_plugin.cpp, opsets 10-18) builds Resize "\
           "keeping only the model's mode and coordinate_transformation_mode" in text
    assert "proves nothing for this op" in text
    assert ("canndev's parser, which also takes opset" in text) == (opset <= 13)


@pytest.mark.parametrize("mode, attrs", [
    ("cubic", dict(coordinate_transformation_mode="half_pixel")),  # ONNX's defaults
    ("cubic", dict(coordinate_transformation_mode="half_pixel", cubic_coeff_a=-0.75,
                   exclude_outside=0)),
    ("linear", dict(coordinate_transformation_mode="half_pixel", cubic_coeff_a=-0.5)),  # unread
    ("cubic", dict(coordinate_transformation_mode="half_pixel", extrapolation_value=3.0))])
def test_settings_the_parser_keeps_or_the_op_does_not_read_are_not_warned_of(mode, attrs):
    """The warning's advice, ONNX's defaults, pasted: nothing dropped, no row; a linear op does
    not read cubic_coeff_a, nor any op outside tf_crop_and_resize extrapolation_value."""
    assert _rows(_model(15, mode, **attrs)) == []


def test_extrapolation_value_is_dropped_under_tf_crop_and_resize():
    m = _model(15, "linear", coordinate_transformation_mode="tf_crop_and_resize",
               extrapolation_value=1.0, sizes_known=False)
    (row,) = _rows(m, sizes=False)
    assert row[3] == ("the device computes it with CANN's extrapolation_value=0 where the model "
                      "says extrapolation_value=1")
