"""A nearest Resize as ATC's ONNX parser builds it (core.ascend_optypes.MODE_TYPES,
backends.emulator.atc_resize): its type for keep_dtype and dumps, and the settings whose result
the emulator cannot vouch for."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T, helper as h, numpy_helper as nh

from pytest_ascend_accuracy import keep_dtype
from pytest_ascend_accuracy.backends.emulator.atc_resize import SAFE, resize_rows
from pytest_ascend_accuracy.backends.emulator.rewrite import emulate_graph
from pytest_ascend_accuracy.core.ascend_optypes import node_ascend_type, node_parser_type
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph.op_catalogue import check_mode


def _resize(n_in=6, scale=1.5, opset=13, **attrs):
    n_out = int(n_in * scale)
    g = h.make_graph([h.make_node("Resize", ["x", "", "scales"], ["y"], name="resize", **attrs)],
                     "rs", [h.make_tensor_value_info("x", T.FLOAT, [1, 2, n_in, n_in])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 2, n_out, n_out])],
                     [nh.from_array(np.array([1, 1, scale, scale], np.float32), "scales")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _tf_nearest(x, n_out, *, align_corners=False, half_pixel_centers=False):
    """TensorFlow's ResizeNearestNeighbor (the op ATC builds) on the last two axes."""
    n_in = x.shape[-1]
    o = np.arange(n_out)
    if align_corners:
        idx = np.floor(o * ((n_in - 1) / (n_out - 1)) + 0.5)  # roundf of a non-negative
    elif half_pixel_centers:
        idx = np.floor((o + 0.5) * (n_in / n_out))
    else:
        idx = np.floor(o * (n_in / n_out))
    idx = np.clip(idx.astype(int), 0, n_in - 1)
    return x[..., idx, :][..., idx]


#: the flags every CANN parser found sets for a coordinate mode (atc_resize's docstring)
_FLAGS = {"asymmetric": {}, "align_corners": {"align_corners": True},
          "pytorch_half_pixel": {"half_pixel_centers": True}}


@pytest.mark.parametrize("ctm, nm", sorted(SAFE))
@pytest.mark.parametrize("n_in, scale", [(6, 1.5), (4, 2.0), (8, 0.5)])
def test_the_safe_settings_are_what_tensorflows_op_computes(ctm, nm, n_in, scale):
    m = _resize(n_in, scale, mode="nearest", coordinate_transformation_mode=ctm, nearest_mode=nm)
    x = np.random.default_rng(0).random((1, 2, n_in, n_in)).astype(np.float32)
    y = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_array_equal(_tf_nearest(x, y.shape[-1], **_FLAGS[ctm]), y)
    assert resize_rows(m, m.graph.node) == []


@pytest.mark.parametrize("attrs, flags", [
    ({}, {"half_pixel_centers": True}),  # ONNX's defaults, as the 2025 plugin maps them
    ({"coordinate_transformation_mode": "asymmetric", "nearest_mode": "ceil"}, {}),
    ({"coordinate_transformation_mode": "tf_half_pixel_for_nn", "nearest_mode": "floor"}, {})])
def test_other_settings_differ_on_the_device_and_are_reported(attrs, flags):
    m = _resize(mode="nearest", **attrs)
    x = np.random.default_rng(0).random((1, 2, 6, 6)).astype(np.float32)
    y = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x})[0]
    assert (_tf_nearest(x, 9, **flags) != y).any()
    ctm = attrs.get("coordinate_transformation_mode", "half_pixel")
    nm = attrs.get("nearest_mode", "round_prefer_floor")
    # (no sizes known: by its settings, at opset 13, which both parsers found take)
    assert resize_rows(m, m.graph.node) == [["resize", ctm, nm, "", "ops-cv,canndev", 13]]


def test_the_parsers_disagree_on_onnxs_defaults():
    """half_pixel: the 2025 plugin sets half_pixel_centers (other pixels than ONNX's at 1.5x,
    above), canndev's did not (the same pixels here): what the device computes depends on
    the CANN version, so the emulator reports the op instead of computing one of them."""
    m = _resize(mode="nearest")
    x = np.random.default_rng(0).random((1, 2, 6, 6)).astype(np.float32)
    y = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_array_equal(_tf_nearest(x, 9), y)
    assert (_tf_nearest(x, 9, half_pixel_centers=True) != y).any()


def test_linear_and_opset_10_resizes_are_not_reported():
    linear = _resize(mode="linear")
    assert resize_rows(linear, linear.graph.node) == []
    old = _resize(opset=10)
    assert resize_rows(old, old.graph.node) == []


def test_a_nearest_resize_has_the_parsers_type_a_linear_one_keeps_resize():
    nearest, linear, default = (_resize(mode="nearest").graph.node[0],
                                _resize(mode="linear").graph.node[0], _resize().graph.node[0])
    assert [node_parser_type(n) for n in (nearest, linear, default)] == [
        "ResizeNearestNeighborV2", "Resize", "ResizeNearestNeighborV2"]
    assert node_ascend_type(nearest) == "ResizeNearestNeighborV2"


def test_keep_dtype_takes_the_parsers_type_of_a_nearest_resize(tmp_path):
    path = tmp_path / "rs.onnx"
    onnx.save(_resize(mode="nearest"), path)
    check_mode(keep_dtype(["OpType::ResizeNearestNeighborV2"]), path, "t")
    with pytest.raises(ConfigError) as info:
        check_mode(keep_dtype(["OpType::Resize"]), path, "t")
    assert "closest: 'OpType::ResizeNearestNeighborV2'" in str(info.value)
    linear = tmp_path / "lin.onnx"
    onnx.save(_resize(mode="linear"), linear)
    check_mode(keep_dtype(["OpType::Resize"]), linear, "t")


def test_the_emulator_types_and_keeps_a_nearest_resize_as_atc(tmp_path):
    path = tmp_path / "rs.onnx"
    onnx.save(_resize(mode="nearest"), path)
    _, plan = emulate_graph(str(path), keep_dtype(["OpType::ResizeNearestNeighborV2"]))
    (op,) = plan.ops
    assert (op.op_type, op.precision) == ("ResizeNearestNeighborV2", "fp32")
    _, plan = emulate_graph(str(path), keep_dtype([]))
    assert plan.ops[0].precision == "fp16"
    ((name, ctm, nm, why, parsers, opset),) = plan.info["atc_resize"]
    assert (name, ctm, nm, parsers, opset) == ("resize", "half_pixel", "round_prefer_floor",
                                               "ops-cv", 13)
    assert why.startswith("resizing axis 2 from 6 to 9, ONNX reads positions")


def _tf_nearest_any(x, n_out, *, align_corners=False, half_pixel_centers=False):
    """``_tf_nearest`` with TensorFlow's scale for an output of 1 (CalculateResizeScale:
    ``(align_corners and out > 1) ? (in - 1) / (out - 1) : in / out``)."""
    if n_out == 1 and align_corners:
        return x[..., :1, :][..., :1]
    return _tf_nearest(x, n_out, align_corners=align_corners,
                       half_pixel_centers=half_pixel_centers)


@pytest.mark.parametrize("ctm, nm", sorted(SAFE))
def test_safe_settings_are_reported_exactly_where_the_device_takes_other_pixels(ctm, nm):
    """Two reviews: a SAFE pair agrees with the device only at some sizes (rows 0, 2, 5 in
    ONNX against 0, 3, 6 on the device passed without a word), and then a fractional scale was
    taken for a difference: 186 of 417 cases computed alike were warned of. Now onnxruntime's
    source pixels are compared with TensorFlow's op's: warned exactly where they differ."""
    from pytest_ascend_accuracy.graph.onnx_graph import tensor_info

    wrong = []
    for n_in in (1, 2, 3, 4, 5, 7, 10, 13):
        for scale in (0.25, 0.35, 0.5, 0.6, 1.3, 1.5, 2.0, 2.5):
            if int(n_in * scale) < 1:
                continue
            m = _resize(n_in, scale, mode="nearest", coordinate_transformation_mode=ctm,
                        nearest_mode=nm)
            x = np.arange(n_in * n_in * 2, dtype=np.float32).reshape(1, 2, n_in, n_in)
            y = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x})[0]
            if y.shape[-1] != int(n_in * scale):
                continue  # (the declared output size is off by float rounding)
            same = np.array_equal(_tf_nearest_any(x, y.shape[-1], **_FLAGS[ctm]), y)
            rows = resize_rows(m, m.graph.node, tensor_info(m))
            if bool(rows) == same:
                wrong.append((n_in, scale, same, rows))
    assert not wrong


def test_rows_of_an_entry_an_earlier_format_wrote_still_warn():
    """A review: rows cached by a4ec2ca's entries hold three items; reading them raised
    IndexError and failed the check (the format is bumped too, 10)."""
    from pytest_ascend_accuracy.backends.emulator.atc_resize import resize_warning

    text = resize_warning("m", [["up", "half_pixel", "round_prefer_floor"]])
    assert "nearest Resize 'up' (coordinate_transformation_mode='half_pixel'" in text


def _model_of(shape, scales, opset, axes=None, **attrs):
    """A nearest Resize of an input of ``shape`` by ``scales`` (for ``axes`` where given)."""
    out = list(shape)
    for k, a in enumerate(axes if axes is not None else range(len(shape))):
        out[a] = int(shape[a] * scales[k])
    inputs = ["x", "scales"] if opset < 11 else ["x", "", "scales"]
    if axes is not None:
        attrs["axes"] = axes
    attrs = {"mode": "nearest", **attrs}
    g = h.make_graph([h.make_node("Resize", inputs, ["y"], name="rs", **attrs)],
                     "rs", [h.make_tensor_value_info("x", T.FLOAT, list(shape))],
                     [h.make_tensor_value_info("y", T.FLOAT, out)],
                     [nh.from_array(np.array(scales, np.float32), "scales")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("shape, scales, opset, axes, attrs, warned", [
    # a review (H26): other cases than NCHW fell back on a scale rule that warned falsely
    # (align_corners never differs) or missed; opset 18's axes and opset 10 were never looked at
    ([1, 4, 100], [1, 1, 0.3], 13, None,
     {"coordinate_transformation_mode": "align_corners", "nearest_mode": "round_prefer_ceil"},
     False),
    ([1, 4, 10], [1, 1, 0.35], 13, None,
     {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}, True),
    ([1, 1, 10, 10], [0.35, 0.35], 18, [2, 3],
     {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}, True),
    ([1, 1, 7, 7], [1, 1, 0.75, 0.75], 10, None, {}, True),
    ([1, 1, 10, 10], [1, 1, 0.5, 0.5], 10, None, {}, False),
    ([1, 1, 4096, 4096], [1, 1, 0.3, 0.3], 13, None,
     {"coordinate_transformation_mode": "align_corners", "nearest_mode": "round_prefer_ceil"},
     False),
])
def test_resizes_of_any_rank_opset_and_size_are_judged_by_their_pixels(shape, scales, opset,
                                                                       axes, attrs, warned):
    from pytest_ascend_accuracy.graph.onnx_graph import tensor_info

    m = _model_of(shape, scales, opset, axes, **attrs)
    rows = resize_rows(m, m.graph.node, tensor_info(m))
    assert bool(rows) == warned, rows
    if warned:
        assert "ONNX reads positions" in rows[0][3]


def _scaled_model(opset, scales=(1, 1, 0.35, 0.35), n=10, **attrs):
    inputs = ["x", "roi", "scales"] if opset < 13 else ["x", "", "scales"]
    inits = [nh.from_array(np.array(scales, np.float32), "scales")]
    if opset < 13:
        inits.append(nh.from_array(np.zeros(0, np.float32), "roi"))
    out = [1, 1, int(n * scales[2]), int(n * scales[3])]
    attrs = {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor", **attrs}
    g = h.make_graph([h.make_node("Resize", inputs, ["y"], name="rs", mode="nearest", **attrs)],
                     "rs", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, n, n])],
                     [h.make_tensor_value_info("y", T.FLOAT, out)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("opset", [11, 12, 13])
def test_torch_export_opsets_are_compared_too(opset):
    """A review: at opsets 11 and 12 (torch.onnx's usual) the probe's empty roi was refused by
    onnxruntime and no claim was made: rows 0, 2, 5 against 0, 3, 6 passed silently."""
    from pytest_ascend_accuracy.graph.onnx_graph import tensor_info

    m = _scaled_model(opset)
    rows = resize_rows(m, m.graph.node, tensor_info(m))
    assert rows and ("ONNX reads positions [0, 2, 5] and the device (as the 2025 parser "
                     "builds it) [0, 3, 6]") in rows[0][3] and rows[0][4] == "ops-cv,canndev"


@pytest.mark.parametrize("mode", ["default", "high_precision"])
def test_every_mode_compares_the_sizes(tmp_path, mode):
    """A review: the rows were computed after the emitter renamed the constants (scales ->
    scales__fp16), so the default mode never compared the sizes; only force_fp32 warned."""
    from pytest_ascend_accuracy.core.modes import resolve_mode

    proto, plan = emulate_graph(_scaled_model(13), resolve_mode(mode))
    assert plan.info["atc_resize"] and plan.info["atc_resize"][0][3]


def test_a_resize_inside_an_if_branch_is_reported():
    """A review: only top-level nodes were looked at."""
    branch = h.make_graph(
        [h.make_node("Resize", ["x", "", "sc"], ["yt"], name="rs_then", mode="nearest")],
        "then", [], [h.make_tensor_value_info("yt", T.FLOAT, None)],
        [nh.from_array(np.array([1, 1, 2, 2], np.float32), "sc")])
    other = h.make_graph([h.make_node("Identity", ["x"], ["ye"], name="id_else")], "else", [],
                         [h.make_tensor_value_info("ye", T.FLOAT, None)])
    g = h.make_graph([h.make_node("If", ["c"], ["y"], name="if", then_branch=branch,
                                  else_branch=other)],
                     "m", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 4, 4]),
                           h.make_tensor_value_info("c", T.BOOL, [])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    assert [r[0] for r in resize_rows(m, m.graph.node)] == ["rs_then"]


def test_keep_aspect_ratio_policy_gets_no_claim():
    """A review: with keep_aspect_ratio_policy (opset 18) one scale serves every axis; probed
    axis by axis, the warning named the wrong axis and missed the one that differed."""
    from pytest_ascend_accuracy.graph.onnx_graph import tensor_info

    g = h.make_graph([h.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="rs",
                                  mode="nearest", coordinate_transformation_mode="asymmetric",
                                  nearest_mode="floor", axes=[2, 3],
                                  keep_aspect_ratio_policy="not_larger")],
                     "rs", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 10, 20])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 1, 4, 7])],
                     [nh.from_array(np.array([10, 7], np.int64), "sizes")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    m.ir_version = 8
    assert resize_rows(m, m.graph.node, tensor_info(m)) == []


def test_onnx_defaults_doubling_an_image_are_not_warned_of():
    """A trial: 129 warnings for sizes where neither CANN parser takes other pixels (ONNX's
    defaults doubling an image among them); every nearest Resize is compared now, under both
    parsers' flags, and warned of where one differs (32 -> 65: the 2025 parser's does)."""
    from pytest_ascend_accuracy.graph.onnx_graph import tensor_info

    doubled = _scaled_model(13, scales=(1, 1, 2.0, 2.0), n=16,
                            coordinate_transformation_mode="half_pixel",
                            nearest_mode="round_prefer_floor")
    assert resize_rows(doubled, doubled.graph.node, tensor_info(doubled)) == []


def test_the_output_size_is_onnxruntimes_not_shape_inferences():
    """A trial: 10 x 0.7 is 6 to ONNX shape inference, 7 to onnxruntime and to ATC's float32
    product; the warning said 'to 6' and listed 7 positions, where both take the same."""
    from pytest_ascend_accuracy.graph.onnx_graph import tensor_info

    m = _scaled_model(13, scales=(1, 1, 0.7, 0.7), n=10)
    assert resize_rows(m, m.graph.node, tensor_info(m)) == []


def _tf_bilinear_coordinates(n_in, n_out, *, align_corners=False, half_pixel_centers=False):
    """TensorFlow's ResizeBilinear source coordinate of each output position (float64, as
    written in its definition), clamped as interpolation of 0..n_in-1 clamps it."""
    scale = (n_in - 1) / (n_out - 1) if align_corners and n_out > 1 else n_in / n_out
    o = np.arange(n_out, dtype=np.float64)
    x = (o + 0.5) * scale - 0.5 if half_pixel_centers else o * scale
    return np.clip(x, 0, n_in - 1)


_CANNDEV_LINEAR = {"pytorch_half_pixel": {"half_pixel_centers": True},
                   "align_corners": {"align_corners": True}}


@pytest.mark.parametrize("ctm", ["half_pixel", "pytorch_half_pixel", "align_corners",
                                 "asymmetric"])
def test_a_linear_resize_is_warned_of_exactly_where_canndevs_op_differs(ctm):
    """A segmentation trial (880 settings): 101 linear ones canndev's ResizeBilinearV2 computes
    otherwise went unwarned. Compared now: warned exactly where onnxruntime's source
    coordinates and TensorFlow's op's (canndev's flags) differ."""
    from pytest_ascend_accuracy.graph.onnx_graph import tensor_info

    wrong = []
    for n_in in (3, 5, 10, 33):
        for scale in (0.5, 0.6, 1.5, 2.0, 1.97):
            m = _resize(n_in, scale, mode="linear", coordinate_transformation_mode=ctm)
            x = np.arange(n_in, dtype=np.float32)[None, None, :, None] * np.ones(
                (1, 2, 1, n_in), np.float32)  # (_resize's input: [1, 2, n_in, n_in])
            y = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x})[0]
            if y.shape[-2] != int(n_in * scale):
                continue
            dev = _tf_bilinear_coordinates(n_in, y.shape[-2], **_CANNDEV_LINEAR.get(ctm, {}))
            same = np.allclose(y[0, 0, :, 0], dev, atol=1e-3)
            if bool(resize_rows(m, m.graph.node, tensor_info(m))) == same:
                wrong.append((n_in, scale, same))
    assert not wrong


def test_linear_resizes_at_opset_10_and_with_a_roi_are_judged_too():
    """A review: canndev built an opset 10 linear Resize as ResizeBilinearV2 with both flags off
    (ONNX: x / scale; the device: x * in / out), never compared; a tf_crop_and_resize's probe
    left the roi out and quoted coordinates ONNX never reads (canndev takes no roi at all):
    the probe reads the roi's window now."""
    from pytest_ascend_accuracy.graph.onnx_graph import tensor_info

    m = _model_of([1, 1, 10, 10], [1, 1, 0.35, 0.35], 10, None, mode="linear")
    rows = resize_rows(m, m.graph.node, tensor_info(m))
    assert rows and rows[0][2] == "linear" and "source coordinates [0.0, 2.857" in rows[0][3]
    roi = nh.from_array(np.array([0, 0, 0.25, 0.25, 1, 1, 0.75, 0.75], np.float32), "roi")
    g = h.make_graph([h.make_node("Resize", ["x", "roi", "scales"], ["y"], name="crop",
                                  mode="linear",
                                  coordinate_transformation_mode="tf_crop_and_resize")],
                     "c", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 8, 8])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 1, 6, 6])],
                     [roi, nh.from_array(np.array([1, 1, 0.75, 0.75], np.float32), "scales")])
    crop = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    crop.ir_version = 8
    (row,) = resize_rows(crop, crop.graph.node, tensor_info(crop))  # ONNX reads the window
    assert "ONNX reads source coordinates [1.75, " in row[3], row  # (x 0.25..0.75 of 8)


def test_a_nearest_crop_and_an_antialias_upscale_are_compared_exactly():
    """A review (H33): a nearest tf_crop_and_resize with the whole image as its roi was warned
    of by its settings though the device takes the same rows; an antialias upscale (where the
    filter does nothing) was no longer compared at all."""
    from pytest_ascend_accuracy.graph.onnx_graph import tensor_info

    def crop(start, end, out):
        roi = nh.from_array(np.array([0, 0, start, 0, 1, 1, end, 1], np.float32), "roi")
        g = h.make_graph([h.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], name="crop",
                                      mode="nearest",
                                      coordinate_transformation_mode="tf_crop_and_resize")],
                         "c", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 8, 1])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1, 1, out, 1])],
                         [roi, nh.from_array(np.array([1, 1, out, 1], np.int64), "sizes")])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
        m.ir_version = 8
        return resize_rows(m, m.graph.node, tensor_info(m))

    assert crop(0.0, 1.0, 16) == []
    (row,) = crop(0.25, 0.75, 4)
    assert ("ONNX reads positions [2, 3, 4, 5] and the device (as the 2025 parser builds it) "
            "[0, 2, 4, 6]") in row[3]
    # opset 18 (antialias's): only the 2025 parser takes it, and keeps a linear Resize with its
    # coordinate mode; it drops antialias, which changes nothing upscaling (audit 35 F4: these
    # were compared with canndev's ResizeBilinearV2, which takes no opset-18 model)
    m = _model_of([1, 1, 33, 33], [1, 1, 1.97, 1.97], 18, None, mode="linear", antialias=1)
    assert resize_rows(m, m.graph.node, tensor_info(m)) == []
    m = _model_of([1, 1, 33, 33], [1, 1, 0.5, 0.5], 18, None, mode="linear", antialias=1)
    (row,) = resize_rows(m, m.graph.node, tensor_info(m))
    assert "antialias filter" in row[3] and row[4:] == ["ops-cv", 18]
