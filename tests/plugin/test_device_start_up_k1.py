"""Device and backend settings that a CI run got silently wrong (CI trial findings 1, 2, 6a,
6b), as a user runs pytest, against the FAKE Ascend toolchain (``testing.fake_ascend``): each
is a usage error at start-up naming the option, and what it advises works pasted."""
import pytest

from pytest_ascend_accuracy.testing.fake_ascend import use_fake_ascend

DEVICE_TEST = """
def test_device(ascend_device):
    assert ascend_device in (0, 1)
"""


@pytest.fixture
def fake_ascend(monkeypatch, tmp_path):
    monkeypatch.delenv("ASCEND_RT_VISIBLE_DEVICES", raising=False)
    return use_fake_ascend(monkeypatch, tmp_path, device_count=2)


@pytest.mark.parametrize("value", ["", " "])
def test_an_empty_device_list_is_a_usage_error_not_the_emulator(pytester, fake_ascend, value):
    """``--ascend-device=$NPU_ID`` with the variable unset ran every test on the CPU emulator."""
    pytester.makepyfile(DEVICE_TEST)
    result = pytester.runpytest(f"--ascend-device={value}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: pytest-ascend-accuracy: --ascend-device: given with an "
                                 "empty value (an unset variable, *); give device ids, e.g. "
                                 "--ascend-device=0, or leave the option out*"])
    pasted = pytester.runpytest("--ascend-device=0", "-p", "no:cacheprovider")  # as advised
    pasted.assert_outcomes(passed=1)


def test_a_device_that_does_not_exist_is_refused_at_start_up(pytester, fake_ascend):
    """Device 5 of 2 was advice to pass --soc-version (which then failed every test on the
    device); it is refused as a hidden device is, naming the ids that exist."""
    pytester.makepyfile(DEVICE_TEST)
    result = pytester.runpytest("--ascend-device=1,5", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: pytest-ascend-accuracy: --ascend-device: device 5 does "
                                 "not exist: the Ascend runtime sees 2 devices, ids 0, 1; e.g. "
                                 "--ascend-device=0,1"])
    err = result.stderr.str()
    assert "soc" not in err and "passed" not in result.stdout.str()  # no test ran
    pasted_value = err.split("e.g. ", 1)[1].split()[0]
    pasted = pytester.runpytest(pasted_value, "-p", "no:cacheprovider")
    pasted.assert_outcomes(passed=1)


def test_the_precision_policy_is_refused_on_the_emulator_as_the_soc_version_is(pytester):
    """The emulator runs no ATC: ``--ascend-precision-policy`` changed nothing there, silently;
    the ini value is kept for the NPU runs and the header says so, as for the soc version."""
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest("--ascend-precision-policy=precision_mode")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: pytest-ascend-accuracy: --ascend-precision-policy: given "
                                 "with the emulator backend, where it changes nothing: *"])
    ini = pytester.runpytest("-o", "ascend_precision_policy=precision_mode")
    ini.assert_outcomes(passed=1)
    ini.stdout.fnmatch_lines(["ascend-accuracy: emulator backend *; ini ascend_precision_policy "
                              "precision_mode applies on the ascend backend only; cache *"])


@pytest.mark.parametrize("args", [(), ("-p", "no:xdist")], ids=["serial", "no-xdist"])
def test_a_misspelled_worksteal_value_is_refused_in_every_run(pytester, args):
    """``ascend_accuracy_worksteal = nope`` passed a serial run and was refused under -n."""
    pytester.makeini("[pytest]\nascend_accuracy_worksteal = nope\n")
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: pytest-ascend-accuracy: ascend_accuracy_worksteal in *tox.ini: must "
                                 "be true or false (or yes/no, on/off, 1/0), got 'nope'; closest: "
                                 "'no'"])
    pytester.makeini("[pytest]\nascend_accuracy_worksteal = no\n")  # the closest, pasted
    pytester.runpytest(*args).assert_outcomes(passed=1)
