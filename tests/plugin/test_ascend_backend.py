"""--ascend-device against the FAKE Ascend toolchain (fake atc + fake pyACL from
``pytest_ascend_accuracy.testing``): the whole Ascend path as a user runs it, without an NPU."""

import pytest

from conftest import ACCURACY_TESTS
from pytest_ascend_accuracy.testing.fake_ascend import use_fake_ascend


@pytest.fixture
def fake_ascend(monkeypatch, tmp_path):
    monkeypatch.delenv("ASCEND_RT_VISIBLE_DEVICES", raising=False)
    return use_fake_ascend(monkeypatch, tmp_path, device_count=2)


def test_accuracy_tests_on_the_ascend_backend(pytester, models_dir, fake_ascend):
    pytester.makepyfile(test_acc=ACCURACY_TESTS + """

def test_device(ascend_device, atc_convert):
    assert ascend_device == 1
    assert atc_convert("models/passing_mlp.onnx").backend == "ascend"
""")
    result = pytester.runpytest("--ascend-device=1", "--soc-version=Ascend310P3")
    result.stdout.fnmatch_lines([
        "ascend-accuracy: ascend backend on device 1, soc Ascend310P3; cache *",
    ])
    # the fake runtime computes in fp32 (it is a stand-in for the device API, not for the NPU's
    # numerics), so unlike on the emulator every check passes here
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines([
        "backend: ascend backend on device 1, soc Ascend310P3",
        "4 accuracy checks: 4 passed, 0 failed (2 models x 3 modes)",
    ])
    calls = fake_ascend.atc_calls.read_text()
    assert "--soc_version=Ascend310P3" in calls and "--precision_mode=allow_fp32_to_fp16" in calls


def test_visible_devices_map_to_their_index(pytester, models_dir, monkeypatch, tmp_path):
    use_fake_ascend(monkeypatch, tmp_path, device_count=8)  # the fake runtime honours the list
    monkeypatch.setenv("ASCEND_RT_VISIBLE_DEVICES", "6,7")
    pytester.makepyfile("""
        def test_device(ascend_device, pytestconfig):
            from pytest_ascend_accuracy.plugin.session import get_state
            state = get_state(pytestconfig)
            assert ascend_device == 7
            assert state.backend.device_id == 1  # the runtime numbers visible devices 0..n-1
            lock = state.device_lock()
            assert lock.path.name == "device-7.lock"  # ini ascend_device_lock = true
    """)
    pytester.runpytest("--ascend-device=7", "-o", "ascend_device_lock=true").assert_outcomes(passed=1)


def test_the_precision_policy_is_a_pytest_option_and_ini_key(pytester, models_dir, fake_ascend):
    """ATC's 'rejected --precision_mode_v2' advice named AscendBackend(precision_policy=...),
    which a pytest user could not reach (a review with the fake CANN)."""
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    result = pytester.runpytest("--ascend-device=0", "--soc-version=Ascend310P3", "-k", "mlp",
                                "--ascend-precision-policy=precision_mode")
    result.assert_outcomes(passed=1)
    calls = fake_ascend.atc_calls.read_text()
    assert "--precision_mode=force_fp16" in calls and "--precision_mode_v2" not in calls, calls
    typo = pytester.runpytest("--ascend-device=0", "-o", "ascend_precision_policy=precision_mod")
    assert typo.ret == pytest.ExitCode.USAGE_ERROR
    typo.stderr.fnmatch_lines(["*ascend_precision_policy in -o: expected one of auto, precision_mode, "
                               "precision_mode_v2, got 'precision_mod'; closest: 'precision_mode'*"])
