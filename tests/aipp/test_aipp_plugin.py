"""AIPP through the plugin: ascend_model(aipp=...), check_preprocessing, the first-op hint."""
from pathlib import Path

import numpy as np
import pytest

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp, imagenet_reference, random_rgb
from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.errors import ConfigError

TESTS = '''
import numpy as np
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb

RAW = random_rgb(2, 16, 16, seed=3)

def golden_inputs(raw):
    return {"x": np.stack([imagenet_reference(i) for i in raw])}

def test_right_file(ascend_model, golden_dump, check_accuracy, check_preprocessing):
    om = ascend_model("models/net.onnx", aipp="good.cfg")
    check_preprocessing(om, RAW, reference=imagenet_reference)
    dump = om.run({"x": RAW[:1]})
    assert dump.ops[0].op_type == "Aipp" and dump.ops[0].name == "aipp_x"
    check_accuracy(dump, golden_dump("models/net.onnx", golden_inputs(RAW[:1])))
    assert set(om.outputs({"x": RAW[:1]})) == {"y"}

def test_swapped_file_preprocessing(ascend_model, check_preprocessing):
    om = ascend_model("models/net.onnx", aipp="swapped.cfg")
    check_preprocessing(om, RAW, reference=imagenet_reference)

def test_swapped_file_accuracy(ascend_model, golden_dump, check_accuracy):
    om = ascend_model("models/net.onnx", aipp="swapped.cfg")
    check_accuracy(om.run({"x": RAW[:1]}), golden_dump("models/net.onnx", golden_inputs(RAW[:1])))

def test_bad_file(ascend_model):
    ascend_model("models/net.onnx", aipp="bad.cfg")
'''


def test_aipp_model_tests_on_the_emulator(aipp_project):
    good = imagenet_aipp(src_hw=(16, 16))
    aipp_project.makefile(".cfg", good=good,
                          swapped=good.replace("input_format: RGB888_U8",
                                               "input_format: RGB888_U8\n    rbuv_swap_switch: true"),
                          bad=good.replace("mean_chn_0", "mean_chan_0"))
    aipp_project.makepyfile(test_aipp=TESTS)
    result = aipp_project.runpytest("-q", "--accuracy-report=rep")
    result.assert_outcomes(passed=1, failed=3)
    out = result.stdout.str()
    assert "rbuv_swap_switch: true -> false" in out
    assert "next step: the first operator after AIPP (conv1relu1) already fails" in out
    assert "check_preprocessing(om, images, reference=fn)" in out
    result.stdout.fnmatch_lines(["*bad.cfg:6: mean_chan_0: unknown AIPP key (did you mean mean_chn_0*"])
    corrected = list(Path(aipp_project.path, "rep").rglob("swapped.corrected.cfg"))
    assert len(corrected) == 1 and "rbuv_swap_switch: false" in corrected[0].read_text()


def test_emulator_cache_key_follows_the_file_content(tmp_path):
    import onnx

    from pytest_ascend_accuracy.testing.models import conv_bn_relu

    model = tmp_path / "net.onnx"
    onnx.save(conv_bn_relu(), str(model))
    cfg = tmp_path / "aipp.cfg"
    cfg.write_text(imagenet_aipp())
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    first = backend.convert(model, "default", atc_options={"insert_op_conf": str(cfg)})
    copy = tmp_path / "elsewhere.cfg"
    copy.write_text(imagenet_aipp())
    assert backend.convert(model, "default", atc_options={"insert_op_conf": str(copy)}).key == first.key
    cfg.write_text(imagenet_aipp().replace("mean_chn_0: 123", "mean_chn_0: 124"))
    changed = backend.convert(model, "default", atc_options={"insert_op_conf": str(cfg)})
    assert changed.key != first.key
    plain = backend.convert(model, "default")
    assert plain.key not in (first.key, changed.key)
    raw = random_rgb(1, 16, 16)
    with pytest.raises(ConfigError, match="must be raw uint8"):
        backend.run(first, {"x": raw.astype(np.float32)}, dump=False)
    out = backend.outputs(first, {"x": raw})["y"]
    want = backend.outputs(plain, {"x": imagenet_reference(raw[0])[None]})["y"]
    np.testing.assert_allclose(out, want, atol=2e-2)


SUITE = """
models:
  - name: cam
    model: models/net.onnx
    aipp: {cfg}
    reference: prep:preprocess
    inputs: {{x: frames.npy}}
    modes: [default]
"""


@pytest.mark.parametrize("cfg, outcome", [("good.cfg", "passed"), ("swapped.cfg", "failed")])
def test_yaml_suite_model_with_aipp(aipp_project, cfg, outcome):
    good = imagenet_aipp(src_hw=(16, 16))
    aipp_project.makefile(".cfg", good=good, swapped=good.replace(
        "input_format: RGB888_U8", "input_format: RGB888_U8\n    rbuv_swap_switch: true"))
    aipp_project.makepyfile(prep="from pytest_ascend_accuracy.aipp.samples import imagenet_reference\n\n"
                                 "def preprocess(image):\n    return imagenet_reference(image)\n")
    np.save(aipp_project.path / "frames.npy", random_rgb(1, 16, 16, seed=4))
    (aipp_project.path / "accuracy_cam.yaml").write_text(SUITE.format(cfg=cfg))
    result = aipp_project.runpytest("-q", "accuracy_cam.yaml")
    result.assert_outcomes(**{outcome: 1})
    if outcome == "failed":
        assert "rbuv_swap_switch: true -> false" in result.stdout.str()


@pytest.mark.parametrize("inputs", ["    inputs: {{seed: 3}}\n", ""], ids=["seed", "none"])
def test_yaml_aipp_model_with_seeded_inputs_runs_on_raw_images(aipp_project, inputs):
    """With ``inputs: {seed: N}`` (or none), the seeded float32 tensors went to the AIPP input:
    'input_format: image 0 must be raw uint8 bytes' (review helper). Seeded raw images of the
    file's source size and format go there now, with and without a baseline."""
    good = imagenet_aipp(src_hw=(16, 16))
    aipp_project.makefile(".cfg", good=good)
    aipp_project.makepyfile(prep="from pytest_ascend_accuracy.aipp.samples import imagenet_reference\n\n"
                                 "def preprocess(image):\n    return imagenet_reference(image)\n")
    suite = SUITE.format(cfg="good.cfg").replace("    inputs: {x: frames.npy}\n", inputs.format())
    (aipp_project.path / "accuracy_cam.yaml").write_text(suite)
    aipp_project.runpytest("-q", "accuracy_cam.yaml").assert_outcomes(passed=1)
    first = aipp_project.runpytest("-q", "accuracy_cam.yaml", "-o", "ascend_accuracy_max_drop=0.002")
    first.assert_outcomes(failed=1)  # the baseline written, with the images stored beside it
    again = aipp_project.runpytest("-q", "accuracy_cam.yaml", "-o", "ascend_accuracy_max_drop=0.002")
    again.assert_outcomes(passed=1)


@pytest.mark.parametrize("fmt, shape", [("RGB888_U8", (2, 16, 12, 3)), ("XRGB8888_U8", (2, 16, 12, 4)),
                                        ("YUV400_U8", (2, 16, 12)), ("YUV420SP_U8", (2, 24, 12))])
def test_seeded_raw_images_have_the_formats_layout_and_the_source_size(fmt, shape):
    from pytest_ascend_accuracy.aipp import parse_aipp_config
    from pytest_ascend_accuracy.aipp.apply import apply_aipp
    from pytest_ascend_accuracy.aipp.raw_images import seeded_raw_images

    text = (f"aipp_op {{\n aipp_mode: static\n input_format: {fmt}\n src_image_size_w: 0\n"
            f" src_image_size_h: 0\n}}\n")
    config = parse_aipp_config(text)
    made = seeded_raw_images(config, {"x": np.zeros((2, 3, 16, 12), np.float32)}, ["x"], seed=1)
    assert made["x"].shape == shape and made["x"].dtype == np.uint8
    assert apply_aipp(config.ops[0], made["x"]).shape[-2:] == (16, 12)  # the model input's H x W


def test_yaml_aipp_needs_reference(aipp_project):
    aipp_project.makefile(".cfg", good=imagenet_aipp())
    np.save(aipp_project.path / "frames.npy", random_rgb(1, 16, 16, seed=4))
    (aipp_project.path / "accuracy_cam.yaml").write_text(
        SUITE.format(cfg="good.cfg").replace("    reference: prep:preprocess\n", ""))
    result = aipp_project.runpytest("-q", "accuracy_cam.yaml")
    result.stdout.fnmatch_lines(["*models[[]0[]].reference*required with aipp*"])


def test_accuracy_diagnose_on_an_aipp_model_runs_step_5(aipp_project):
    good = imagenet_aipp(src_hw=(16, 16))
    aipp_project.makefile(".cfg", swapped=good.replace(
        "input_format: RGB888_U8", "input_format: RGB888_U8\n    rbuv_swap_switch: true"))
    aipp_project.makepyfile(test_aipp=TESTS)
    result = aipp_project.runpytest("-q", "--accuracy-diagnose", "-k", "swapped_file_accuracy")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "next step: the first operator after AIPP (*) already fails: check the pre-processing "
        "before blaming it: the diagnosis below (--accuracy-diagnose, step 5) compares the "
        "device's Aipp output with the golden inputs, names the fields of swapped.cfg to correct*",
        "diagnosis (--accuracy-diagnose, *): the device saw different inputs than the golden run:*",
        "*rbuv_swap_switch: true -> false*"])
    result.stdout.no_fnmatch_line("*rerun with --accuracy-diagnose*")  # (it was given)


DATASET_TESTS = '''
import numpy as np
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb

SAMPLES = [{"x": frame[None]} for frame in random_rgb(4, 16, 16, seed=6)]

def to_reference(inputs):
    return {"x": np.stack([imagenet_reference(f) for f in inputs["x"]])}

def test_dataset_on_raw_frames(ascend_model, check_dataset):
    om = ascend_model("models/net.onnx", aipp="{cfg}")
    result = check_dataset(om, SAMPLES, metric="agreement", max_drop=0.0, reference_inputs=to_reference)
    assert result.samples == 4
'''


@pytest.mark.parametrize("cfg, outcome", [("good.cfg", "passed"), ("zeroed.cfg", "failed")])
def test_check_dataset_reference_inputs_for_an_aipp_model(aipp_project, cfg, outcome):
    good = imagenet_aipp(src_hw=(16, 16))
    zeroed = good
    for c, m in enumerate((123, 116, 103)):  # means zeroed: every sample's top-1 flips
        zeroed = zeroed.replace(f"mean_chn_{c}: {m}", f"mean_chn_{c}: 0")
    aipp_project.makefile(".cfg", good=good, zeroed=zeroed)
    aipp_project.makepyfile(test_ds=DATASET_TESTS.replace("{cfg}", cfg))
    result = aipp_project.runpytest("-q")
    result.assert_outcomes(**{outcome: 1})


def test_yaml_suite_with_aipp_leaves_external_weights_in_their_file(aipp_project, monkeypatch):
    """A YAML AIPP check of a model with external data passes without any step loading all its
    weights at once (the input names come from the graph alone; the golden, conversion and run
    read each weight where it is)."""
    import onnx
    import onnx.external_data_helper as helper

    model = onnx.load(str(aipp_project.path / "models" / "net.onnx"))
    onnx.save_model(model, str(aipp_project.path / "models" / "net.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="net.onnx.data", size_threshold=0)

    def refuse(*args, **kwargs):
        raise AssertionError("all external weights loaded at once")
    monkeypatch.setattr(helper, "load_external_data_for_model", refuse)
    monkeypatch.setattr(onnx, "load_external_data_for_model", refuse)
    aipp_project.makefile(".cfg", good=imagenet_aipp(src_hw=(16, 16)))
    aipp_project.makepyfile(prep="from pytest_ascend_accuracy.aipp.samples import imagenet_reference\n\n"
                                 "def preprocess(image):\n    return imagenet_reference(image)\n")
    np.save(aipp_project.path / "frames.npy", random_rgb(1, 16, 16, seed=4))
    (aipp_project.path / "accuracy_cam.yaml").write_text(SUITE.format(cfg="good.cfg"))
    result = aipp_project.runpytest("-q", "accuracy_cam.yaml")
    result.assert_outcomes(passed=1)
