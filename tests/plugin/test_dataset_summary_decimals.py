"""The session's dataset section printed figures with 4 decimals: a failing check of 25,000
images one sample down read "drop 0.0000 > max_drop 0" (H104, as the check's own verdict line,
which now prints as many decimals as it takes: ``dataset.metrics.apart_decimals``)."""
from pytest_ascend_accuracy.plugin.terminal_report import dataset_lines


def _record(device, reference, max_drop, passed):
    return {"nodeid": "test_d.py::test_top1", "model": "resnet", "mode": "default",
            "metric": "top1", "device": device, "reference": reference, "max_drop": max_drop,
            "passed": passed, "samples": 25000, "flipped": 1}


def test_a_failing_drop_never_prints_as_its_max_drop():
    lines = dataset_lines([_record(0.76 - 1 / 25000, 0.76, 0.0, False)])
    assert lines[1] == ("  resnet [default] top1 0.75996 device vs 0.76000 reference (drop "
                        "0.00004 > 0), 25000 samples, 1 flipped")
    assert lines[2] == ("FAILED test_d.py::test_top1 [resnet, default]: top1 drop 0.00004 > "
                        "max_drop 0")


def test_a_passing_check_keeps_four_decimals_whatever_its_float_noise():
    """74 of 100 against 75 of 100 with max_drop 0.01 printed in 17 decimals (H108)."""
    assert dataset_lines([_record(0.74, 0.75, 0.01, True)])[1] == (
        "  resnet [default] top1 0.7400 device vs 0.7500 reference (drop 0.0100 <= 0.01), "
        "25000 samples, 1 flipped")


def test_plain_figures_keep_four_decimals():
    assert dataset_lines([_record(0.75, 0.76, 0.02, True)])[1] == (
        "  resnet [default] top1 0.7500 device vs 0.7600 reference (drop 0.0100 <= 0.02), "
        "25000 samples, 1 flipped")


DIAGNOSED = '''
import numpy as np
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.95)
def test_lost(ascend_model, check_dataset):
    wrong = np.zeros((1, 8), np.float32)  # label 0: wrong on both sides, a near-tie
    wrong[0, 1], wrong[0, 2] = 0.5, 0.50001
    lost = np.zeros((1, 8), np.float32)  # label 3: right in fp32, class 7 inf on the device
    lost[0, 3], lost[0, 7] = 0.6, 0.9999
    samples = [{"x": wrong}, {"x": lost}] + [{"x": np.eye(8, dtype=np.float32)[[k]] * 0.6}
                                             for k in range(6)]
    check_dataset(ascend_model("spiky.onnx"), samples, labels=[0, 3] + list(range(6)))
'''


def test_the_diagnosis_names_the_sample_it_ran_on_as_the_check_traced_it(pytester):
    """The check traces the first sample the metric lost (H104); the --accuracy-diagnose line
    still called it "the first flipped sample", which was sample 0 here."""
    import onnx

    from tests.dataset.conftest import spiky_model

    onnx.save(spiky_model(), str(pytester.path / "spiky.onnx"))
    pytester.makepyfile(test_lost=DIAGNOSED)
    result = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "(--accuracy-diagnose on the first lost sample 1, " in text, text
    assert "first flipped sample" not in text


def test_a_long_keep_dtype_mode_is_given_by_count_as_in_the_grid():
    """Audit 33 (Magika): a pasted 11-op keep list printed ~700 characters in each dataset line,
    where the grid and the accuracy FAILED lines say keep_dtype(11 ops)."""
    mode = "keep_dtype(" + ",".join(f"jax2tf_get_logits_/MagikaV2/op_{k}" for k in range(11)) + ")"
    record = {**_record(0.5, 0.75, 0.01, False), "mode": mode}
    lines = dataset_lines([record])
    assert lines[1].startswith("  resnet [keep_dtype(11 ops)] top1 0.5000 device vs ")
    assert lines[2].startswith("FAILED test_d.py::test_top1 [resnet, keep_dtype(11 ops)]: top1 ")


def test_a_small_passing_rise_of_a_loss_never_prints_as_minus_zero():
    """Audit 34 (MTCNN's mean face probability, lower is better): a passing check printed
    ``drop -0.0000 <= 1e-06`` for a device 2e-5 better than the reference."""
    record = {**_record(0.12833, 0.12835, 1e-6, True), "higher_is_better": False}
    line = dataset_lines([record])[1]
    assert "rise -0.0000 " not in line and "0.0000 device" not in line, line
    assert "(lower is better: rise -0.00002 <= 1e-06)" in line, line


def test_a_check_whose_flips_went_untracked_never_says_0_flipped():
    line = dataset_lines([{**_record(0.5, 1.0, 0.0, False), "untracked": True}])[1]
    assert line.endswith("25000 samples, flips not tracked"), line
