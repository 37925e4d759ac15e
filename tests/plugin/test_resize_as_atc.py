"""A nearest Resize through the plugin: keep_dtype takes the type ATC's parser gives it
(``OpType::ResizeNearestNeighborV2``, not ``OpType::Resize``), and a nearest Resize whose
settings ATC computes otherwise passes on the emulator only with a warning naming it; the
settings the warning gives, pasted into the model, silence it."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T, helper as h, numpy_helper as nh

TEST = '''
import pytest
from pytest_ascend_accuracy import accuracy, keep_dtype


@pytest.mark.parametrize("entry", {entries!r})
@accuracy(threshold=0.99)
def test_resize(entry, ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    m = "models/rs.onnx"
    inputs = accuracy_inputs(m, seed=0)
    om = ascend_model(m, keep_dtype=[entry] if entry else [])
    check_accuracy(om.run(inputs), golden_dump(m, inputs))
'''


def _save(pytester, opset=13, **attrs):
    g = h.make_graph([h.make_node("Resize", ["x", "", "scales"], ["y"], name="up", **attrs)],
                     "rs", [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 6, 6])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 2, 9, 9])],
                     [nh.from_array(np.array([1, 1, 1.5, 1.5], np.float32), "scales")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    folder = pytester.path / "models"
    folder.mkdir(exist_ok=True)
    onnx.save(m, str(folder / "rs.onnx"))


def test_keep_dtype_names_a_nearest_resize_by_atcs_type(pytester):
    _save(pytester, mode="nearest", coordinate_transformation_mode="asymmetric",
          nearest_mode="floor")
    pytester.makepyfile(TEST.format(entries=["OpType::ResizeNearestNeighborV2",
                                             "OpType::Resize", "up"]))
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    # older canndev parsers named a nearest Resize Resize (a review): the op's name, which the
    # error offers, keeps it in every version, and is accepted (the 'up' case passes)
    result.stdout.fnmatch_lines([
        "*keep_dtype entry 'OpType::Resize'*: no op of type 'Resize' in model 'rs';"
        " closest: 'OpType::ResizeNearestNeighborV2'*; CANN versions differ here (an older "
        "canndev parser named these nodes Resize): naming the op, e.g. 'up', keeps it in every "
        "version*"])


@pytest.mark.parametrize("attrs, warned", [
    ({"mode": "nearest"}, "coordinate_transformation_mode='half_pixel', "
                          "nearest_mode='round_prefer_floor'"),
    ({"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "ceil"},
     "coordinate_transformation_mode='asymmetric', nearest_mode='ceil'"),
    # the settings the warning gives, pasted: no warning
    ({"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
     None),
    ({"mode": "nearest", "coordinate_transformation_mode": "pytorch_half_pixel",
      "nearest_mode": "round_prefer_ceil"}, None),
    ({"mode": "linear", "coordinate_transformation_mode": "asymmetric"}, None)])
def test_a_nearest_resize_atc_computes_otherwise_passes_only_with_a_warning(
        pytester, attrs, warned):
    _save(pytester, **attrs)
    pytester.makepyfile(TEST.format(entries=[""]))
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, warnings=1 if warned else 0)
    if warned:
        result.stdout.fnmatch_lines([
            # at the test's own line (its ascend_model call), not a line of the plugin's
            f"*test_a_nearest_resize*.py:10: AtcResizeWarning: model 'rs' (ONNX opset 13): "
            f"nearest Resize 'up' ({warned}): resizing axis 2 from 6 to 9, ONNX reads positions "
            "* and the device (as * builds it) [[]*: * CANN ONNX parser* * opset 13 *, so *a "
            "pass on the emulator proves nothing for this op"])
    else:
        result.stdout.no_fnmatch_line("*AtcResizeWarning*")


def test_a_yaml_suites_warning_under_python_m_pytest_fails_nothing(pytester):
    """A review: the warning, issued at the first frame outside the package, found
    ``pytest/__main__``'s frame for a YAML item under ``python -m pytest``, and Python, asked
    for that module's source, raised ImportError: the check failed. Run as a user runs it."""
    _save(pytester, mode="nearest")
    pytester.makefile(".yaml", accuracy_rs="models:\n  - model: models/rs.onnx\n"
                                           "    threshold: 0.99\n    inputs: {seed: 0}\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(
        ["*AtcResizeWarning: model 'rs' (ONNX opset 13): nearest Resize 'up'*"])


def test_one_warning_per_line_however_often_it_runs(pytester):
    """Python's once-per-location rule: five conversions at one line of a test warned five
    times (a review: no warning registry was passed)."""
    _save(pytester, mode="nearest")
    pytester.makepyfile("""
        def test_loop(ascend_model):
            for _ in range(5):
                ascend_model("models/rs.onnx")
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, warnings=1)


def test_a_linear_resize_canndev_builds_otherwise_is_warned_of(pytester):
    """A segmentation trial: a bilinear Resize with ONNX's default half_pixel (tf2onnx's) is
    ResizeBilinearV2 without half_pixel_centers under canndev's parser; 33 -> 65 took other
    source coordinates there (4.8% of pixels changed class) and passed without a word."""
    _save(pytester, mode="linear")
    pytester.makepyfile(TEST.format(entries=[""]))
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines([
        "*AtcResizeWarning: model 'rs' (ONNX opset 13): linear Resize 'up' ("
        "coordinate_transformation_mode='half_pixel'): resizing axis 2 from 6 to 9, ONNX reads "
        "source coordinates * and the device (as canndev's parser builds it) *: two CANN ONNX "
        "parsers take a Resize at opset 13 and build it differently: *canndev's parser "
        "(resize_plugin.cc, opsets 10-13) builds ResizeBilinearV2 with neither flag, which takes "
        "other source pixels than the emulator here; the emulator does not know which one your "
        "CANN has *, so under canndev's parser a pass on the emulator proves nothing for this "
        "op"])


def _save_chain(pytester, opset):
    """ISNet's shape (audit 35 F4): 39 linear half_pixel Resizes, here up 4 -> 8 and down
    8 -> 4 in turn, in a model of ``opset``."""
    nodes, inits, name = [], [], "x"
    for k in range(39):
        nodes.append(h.make_node("Resize", [name, "", "up" if k % 2 == 0 else "down"],
                                 [f"y{k}"], name=f"/stage{k}/Resize", mode="linear"))
        name = f"y{k}"
    inits = [nh.from_array(np.array([1, 1, 2, 2], np.float32), "up"),
             nh.from_array(np.array([1, 1, 0.5, 0.5], np.float32), "down")]
    g = h.make_graph(nodes, "isnet", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 4, 4])],
                     [h.make_tensor_value_info(name, T.FLOAT, [1, 1, 8, 8])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    (pytester.path / "models").mkdir(exist_ok=True)
    onnx.save(m, str(pytester.path / "models" / "rs.onnx"))


@pytest.mark.parametrize("opset, warned", [(15, False), (13, True)])
def test_isnets_linear_resizes_are_warned_of_only_at_an_opset_canndevs_parser_takes(
        pytester, opset, warned):
    """Audit 35 F4: at opset 15 only the 2025 parser takes a Resize, and it keeps a linear one
    as Resize with its coordinate mode: nothing to warn of. At opset 13 canndev's parser takes
    it too, as ResizeBilinearV2 without half_pixel_centers: one warning for the model, its 39
    ops shown 8 and 31 counted, naming the opset, both parsers and the CANN question."""
    _save_chain(pytester, opset)
    pytester.makepyfile(TEST.format(entries=[""]))
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, warnings=1 if warned else 0)
    if not warned:
        result.stdout.no_fnmatch_line("*AtcResizeWarning*")
        return
    result.stdout.fnmatch_lines([
        "*AtcResizeWarning: model 'rs' (ONNX opset 13): linear Resize '/stage0/Resize' *; and "
        "31 more: two CANN ONNX parsers take a Resize at opset 13 and build it differently: * so "
        "under canndev's parser a pass on the emulator proves nothing for these ops"])


@pytest.mark.parametrize("opset", [13, 15])
def test_a_cubic_resize_with_tensorflows_coefficients_is_warned_of_and_defaults_are_not(
        pytester, opset):
    """tf2onnx's bicubic: the 2025 parser drops cubic_coeff_a and exclude_outside (the device
    computes -0.75 and 0); exported with ONNX's defaults, as the warning says, it is silent."""
    _save(pytester, opset=opset, mode="cubic", coordinate_transformation_mode="half_pixel",
          cubic_coeff_a=-0.5, exclude_outside=1)
    pytester.makepyfile(TEST.format(entries=[""]))
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines([
        f"*.py:10: AtcResizeWarning: model 'rs' (ONNX opset {opset}): Resize 'up' (cubic, "
        "coordinate_transformation_mode='half_pixel'): the device computes it with CANN's "
        "cubic_coeff_a=-0.75, exclude_outside=0 where the model says cubic_coeff_a=-0.5, "
        "exclude_outside=1: the 2025 parser * proves nothing for this op (a model exported "
        "with ONNX's defaults, cubic_coeff_a=-0.75, exclude_outside=0, extrapolation_value=0, "
        "loses nothing there)"])
    _save(pytester, opset=opset, mode="cubic", coordinate_transformation_mode="half_pixel")
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, warnings=0)
