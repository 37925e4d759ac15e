"""A crop without ``crop_size`` crops the model input's size, not to the image's edge (H105 #1).

The ATC guide's typical scenario (CANN 9.0 atlasatc_16_0029; mirror-cann/ge
docs/zh/user_guides/atc_tools/AIPP/typical_scenario_examples.md): RGB888_U8 images 250 x 250,
the model input 240 x 240, ``crop: true`` at (0, 0) with no ``crop_size_w/h``: "此时抠图大小
(crop_size[W|H])的宽和高取值来自模型转换时--input_shape参数中的宽和高, 将从(0, 0)点开始选取
240*240区域的数据". ascend-opp ``aipp_comm.py`` does the same (``if crop_size_h == 0:
crop_size_h = H``, H the output's). The emulator refused that file at conversion (its crop read
as 250 - 0), and step 5 failed it, offering a ``crop_size`` "fix". The fixture below has the
example's structure, built here.
"""
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from pytest_ascend_accuracy import cli
from pytest_ascend_accuracy.aipp import apply_aipp, check_preprocessing, parse_aipp_config
from pytest_ascend_accuracy.aipp.emulation import conversion_aipp
from pytest_ascend_accuracy.errors import ConfigError


def _scenario(src=250, pos=(0, 0)):
    return "\n".join([
        "aipp_op {", "    aipp_mode: static", "    input_format: RGB888_U8",
        "    csc_switch: false", "    related_input_rank: 0", f"    src_image_size_w: {src}",
        f"    src_image_size_h: {src}", "    crop: true", f"    load_start_pos_w: {pos[1]}",
        f"    load_start_pos_h: {pos[0]}", "    # a BGR model would set rbuv_swap_switch: true",
        "    rbuv_swap_switch: false", "}"]) + "\n"


def _model(h=240, w=240):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, h, w])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, h, w])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _images(n=2, size=250):
    return np.random.default_rng(7).integers(0, 256, (n, size, size, 3), dtype=np.uint8)


def reference(image):  # the scenario: the 240 x 240 window at (0, 0), RGB, no normalisation
    return image[:240, :240].transpose(2, 0, 1).astype(np.float32)


def test_the_guide_scenario_converts_and_the_emulator_crops_the_model_size(tmp_path):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    cfg = tmp_path / "aipp.cfg"
    cfg.write_text(_scenario())
    assert conversion_aipp({"insert_op_conf": str(cfg)}, _model()) is not None
    model = tmp_path / "net.onnx"
    onnx.save(_model(), str(model))
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    om = backend.convert(model, atc_options={"insert_op_conf": str(cfg)})
    images = _images(1)
    out = backend.outputs(om, {"x": images})
    got = np.asarray(out[0] if isinstance(out, (list, tuple)) else next(iter(out.values())))
    np.testing.assert_array_equal(got[0], reference(images[0]))


def test_step5_passes_the_guide_scenario_with_nothing_to_correct(tmp_path, capsys):
    result = check_preprocessing(parse_aipp_config(_scenario(), "aipp.cfg"), _images(), reference)
    assert result.passed and not result.fixes, result.report()
    # and from the shell, as `diagnose --aipp` runs it
    (tmp_path / "images").mkdir()
    for i, img in enumerate(_images()):
        np.save(tmp_path / "images" / f"frame{i}.npy", img)
    (tmp_path / "prep.py").write_text("def preprocess(image):\n"
                                      "    return image[:240, :240].transpose(2, 0, 1) * 1.0\n")
    (tmp_path / "aipp.cfg").write_text(_scenario())
    argv = ["diagnose", "--aipp", str(tmp_path / "aipp.cfg"), "--images",
            str(tmp_path / "images"), "--reference", f"{tmp_path / 'prep.py'}:preprocess"]
    assert cli.main(argv) == 0, capsys.readouterr()
    assert "pre-processing check passed" in capsys.readouterr().out
    assert not (tmp_path / "aipp.corrected.cfg").exists()


def test_a_model_sized_window_past_the_source_is_refused_with_a_pasteable_offset(tmp_path):
    """250 x 250 images, a 240 x 240 model, the crop from (0, 20): ATC refuses it
    ("load_start_pos_w + crop_size_w should be less than or equal to src_image_size_w")."""
    text = _scenario(pos=(0, 20))
    cfg = tmp_path / "aipp.cfg"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as info:
        conversion_aipp({"insert_op_conf": str(cfg)}, _model())
    msg = str(info.value)
    line = text.splitlines().index("    load_start_pos_w: 20") + 1
    assert msg.startswith(f"{cfg}:{line}: load_start_pos_w: 20, and crop_size_w 0 crops the "
                          f"model input's width"), msg
    fix = re.search(r"load_start_pos_w: \d+", msg.split("the fix is", 1)[1]).group(0)
    cfg.write_text(text.replace("load_start_pos_w: 20", fix))
    assert conversion_aipp({"insert_op_conf": str(cfg)}, _model()) is not None


def test_without_the_model_a_crop_size_of_0_is_named_not_guessed():
    op = parse_aipp_config(_scenario(), "aipp.cfg").ops[0]
    with pytest.raises(ConfigError) as info:
        apply_aipp(op, _images(1))
    line = _scenario().splitlines().index("    crop: true") + 1
    assert str(info.value).startswith(f"aipp.cfg:{line}: crop: crop_size_h is left out: the crop "
                                      f"then takes the model input's height"), str(info.value)
    out = apply_aipp(op.with_model_hw((240, 232)), _images(1))
    assert out.shape == (1, 3, 240, 232)


def test_one_size_given_and_the_other_from_the_reference():
    text = _scenario().replace("    crop: true\n", "    crop: true\n    crop_size_w: 200\n")

    def narrow(image):
        return image[:240, 10:210].transpose(2, 0, 1).astype(np.float32)

    result = check_preprocessing(parse_aipp_config(text, "aipp.cfg"), _images(), narrow)
    assert {f.key: f.new for f in result.fixes} == {"load_start_pos_w": 10}, result.report()
    fixed = parse_aipp_config(result.corrected_text(), "aipp.cfg")
    assert check_preprocessing(fixed, _images(), narrow).passed
