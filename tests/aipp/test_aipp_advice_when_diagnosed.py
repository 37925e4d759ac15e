"""The AIPP hint of a failure at the first operator after AIPP, in a run given
--accuracy-diagnose: where the diagnosis ran, every rendering (terminal, report.html, JUnit)
points at its verdict below instead of "rerun with --accuracy-diagnose"; where it did not run
(it says why: a dump the test made itself, a one-pass dataset), none asks for that rerun or
points at a diagnosis, and the advice keeps its other way (check the file against your own
pre-processing). H91 found "the diagnosis below" printed above "diagnosis ...: not run"."""
import re

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp

TESTS = '''
import numpy as np
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb

RAW = random_rgb(2, 16, 16, seed=3)

def golden_inputs(raw):
    return {"x": np.stack([imagenet_reference(i) for i in raw])}

def test_swapped(ascend_model, golden_dump, check_accuracy):
    om = ascend_model("models/net.onnx", aipp="swapped.cfg")
    check_accuracy(om.run({"x": RAW[:1]}), golden_dump("models/net.onnx", golden_inputs(RAW[:1])))

def test_dump_not_produced(golden_dump, check_accuracy, tmp_path):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    b = EmulatorBackend(Cache(tmp_path / "c"))
    conv = b.convert("models/net.onnx", "default", atc_options={"insert_op_conf": "swapped.cfg"})
    dump = b.run(conv, {"x": RAW[:1]}, dump=True, dump_dir=tmp_path / "d")
    check_accuracy(dump, golden_dump("models/net.onnx", golden_inputs(RAW[:1])))
'''

DATASET = '''
import numpy as np
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb

def to_reference(inputs):
    return {"x": np.stack([imagenet_reference(f) for f in inputs["x"]])}

def test_ds(ascend_model, check_dataset):
    om = ascend_model("models/net.onnx", aipp="zeroed.cfg")
    samples = ({"x": frame[None]} for frame in random_rgb(3, 16, 16, seed=6))  # one pass
    check_dataset(om, samples, metric="agreement", max_drop=0.0, reference_inputs=to_reference)
'''

BELOW = "the diagnosis below (--accuracy-diagnose, step 5) compares the device's Aipp output"
OTHER_WAY = ("already fails: check the pre-processing before blaming it: check {cfg} against "
             "your own pre-processing: check_preprocessing(om, images, reference=fn)")


def swapped():
    return imagenet_aipp(src_hw=(16, 16)).replace(
        "input_format: RGB888_U8", "input_format: RGB888_U8\n    rbuv_swap_switch: true")


def renderings(project, *args):
    """(terminal text, report.html texts, JUnit XML) of a run with --accuracy-diagnose."""
    result = project.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-diagnose",
                               "--accuracy-report=rep", "--junitxml=j.xml", *args)
    result.assert_outcomes(failed=1)
    pages = [p.read_text() for p in (project.path / "rep").rglob("*.html")
             if p.name in ("report.html", "dataset.html")]
    return result.stdout.str(), pages, (project.path / "j.xml").read_text()


def test_a_diagnosis_that_ran_is_pointed_at_in_every_rendering(aipp_project):
    aipp_project.makefile(".cfg", swapped=swapped())
    aipp_project.makepyfile(test_aipp=TESTS)
    out, pages, junit = renderings(aipp_project, "-k", "test_swapped")
    assert "rbuv_swap_switch: true -> false" in out  # (step 5 ran)
    for text in [out, junit] + pages:
        assert "rerun with --accuracy-diagnose" not in text
        assert BELOW.replace("'", "&#x27;") in text or BELOW in text
    assert any('id="diagnosis"' in page for page in pages)


def test_a_diagnosis_that_did_not_run_is_not_pointed_at(aipp_project):
    aipp_project.makefile(".cfg", swapped=swapped())
    aipp_project.makepyfile(test_aipp=TESTS)
    out, pages, junit = renderings(aipp_project, "-k", "dump_not_produced")
    assert ("diagnosis (--accuracy-diagnose): not run: this test compared dumps it did not "
            "produce") in out
    for text in [out, junit] + pages:
        assert "rerun with --accuracy-diagnose" not in text and "diagnosis below" not in text
    assert OTHER_WAY.format(cfg="swapped.cfg") in out
    assert any(OTHER_WAY.format(cfg="swapped.cfg").replace("'", "&#x27;") in page
               for page in pages)


def test_a_dataset_diagnosis_that_did_not_run_is_not_pointed_at(aipp_project):
    text = imagenet_aipp(src_hw=(16, 16))
    for c, mean in enumerate((123, 116, 103)):
        text = text.replace(f"mean_chn_{c}: {mean}", f"mean_chn_{c}: 0")
    aipp_project.makefile(".cfg", zeroed=text)
    aipp_project.makepyfile(test_ds=DATASET)
    out, pages, _ = renderings(aipp_project)
    assert re.search(r"diagnosis \(--accuracy-diagnose\): not run: sample \d+ cannot be read "
                     r"again", out)
    for text in [out] + pages:
        assert "rerun with --accuracy-diagnose" not in text and "diagnosis below" not in text
    assert OTHER_WAY.format(cfg="zeroed.cfg") in out
