"""Command-line options and ini settings, as a user meets them (pytester)."""
import pytest

from pytest_ascend_accuracy.plugin.session import get_state


def test_help_shows_the_option_group(pytester):
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines([
        "accuracy tests on Ascend NPUs (pytest-ascend-accuracy):",
        "  --ascend-device=N[,M,...]",
        "  --accuracy-backend={auto,ascend,emulator}",
        "  --accuracy-threshold=COS",
        "  --accuracy-cache-dir=PATH",
        "  --accuracy-regen      rewrite the stored golden files and accuracy baselines*",
        "  --accuracy-regen-all  rewrite every stored golden file and accuracy baseline*",
        "  --accuracy-report=DIR",
        "  --soc-version=SOC     ATC's --soc_version, e.g. Ascend310P3; the emulator",
    ])
    result.stdout.fnmatch_lines([
        "  ascend_accuracy_threshold (string):",
        "  ascend_accuracy_cache_dir (string):",
        "  ascend_soc_version (string):",
        "  ascend_device_lock (bool):",
    ])


def test_marker_is_registered(pytester):
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.accuracy(threshold=0.95, metric='cosine', per_op=None, "
                                 "ignore=(), modes=None, max_drop=None): *"])


def test_an_ini_soc_version_is_the_chip_the_emulator_models(pytester):
    """A project's ini serves the NPU runs and the laptop's: on the emulator its SoC picks the
    Cube kernels a kept Cube op computes with (audit 36 B F1: tests/plugin/
    test_kept_cube_soc_version.py), and the header says so."""
    pytester.makeini("[pytest]\nascend_soc_version = Ascend310P3\n")
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(["ascend-accuracy: emulator backend (*); soc Ascend310P3: kept "
                                 "Cube ops compute as on that chip; cache *"])
    assert result.ret == 0


def test_header_says_emulator(pytester):
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest()
    result.stdout.fnmatch_lines([  # the cache relative to where pytest ran, as it pastes
        "ascend-accuracy: emulator backend (CPU stand-in for ATC + NPU numerics, no Ascend "
        "device; --ascend-device=N runs on an NPU); cache .ascend-accuracy"])
    assert result.ret == 0


def settings_of(pytester, *args):
    pytester.makepyfile("def test_ok(): pass")
    config = pytester.parseconfigure(*args)
    try:  # no 5 full gc.collect() passes when this config is torn down: pytester's own in-process
        from _pytest.unraisableexception import gc_collect_iterations_key  # runs skip them too
        config.stash[gc_collect_iterations_key] = 0
    except ImportError:  # a pytest without it collects nothing there
        pass
    return get_state(config).settings


def test_defaults(pytester):
    s = settings_of(pytester)
    assert (s.backend, s.device_ids, s.threshold, s.regen, s.report_dir,
            s.soc_version, s.device_lock) == ("emulator", (), 0.95, "none", None, None, False)
    assert s.cache_dir == pytester.path / ".ascend-accuracy"


def test_options_are_read(pytester, tmp_path):
    s = settings_of(pytester, "--accuracy-threshold=0.8", f"--accuracy-cache-dir={tmp_path}/c",
                    "--accuracy-regen", "--accuracy-report=rep", "--accuracy-regen-all")
    assert (s.threshold, s.cache_dir, s.regen) == (0.8, tmp_path / "c", "all")
    assert s.report_dir == pytester.path / "rep"


def test_ini_settings(pytester):
    pytester.makeini("""
        [pytest]
        ascend_accuracy_threshold = 0.97
        ascend_accuracy_cache_dir = build/acc-cache
        ascend_soc_version = Ascend910B1
        ascend_device_lock = true
    """)
    s = settings_of(pytester)
    assert (s.threshold, s.soc_version, s.device_lock) == (0.97, "Ascend910B1", True)
    assert s.cache_dir == pytester.path / "build" / "acc-cache"
    assert settings_of(pytester, "--accuracy-threshold=0.5").threshold == 0.5  # option wins


@pytest.mark.parametrize("args, message", [
    (["--ascend-device=0"], "ERROR: pytest-ascend-accuracy: --ascend-device: the ascend backend "
                            "(device 0) needs the Ascend runtime, which this machine lacks: *"
                            "[!.]. Drop --ascend-device to use the CPU emulator."),
    (["--ascend-device=0,1"], "ERROR: pytest-ascend-accuracy: --ascend-device: the ascend backend "
                              "(devices 0,1) needs *"),
    # no --ascend-device given: the option that chose the backend is named (review helper)
    (["--accuracy-backend=ascend"], "ERROR: pytest-ascend-accuracy: --accuracy-backend: the ascend "
                                    "backend (device 0) needs the Ascend runtime, *Drop "
                                    "--accuracy-backend=ascend (or pass --accuracy-backend=emulator) "
                                    "to use the CPU emulator."),
    (["--ascend-device=x"], "ERROR: pytest-ascend-accuracy: --ascend-device: device ids are "
                            "non-negative integers separated by commas, got 'x'"),
    (["--ascend-device=0", "--accuracy-backend=emulator"],
     "ERROR: pytest-ascend-accuracy: --accuracy-backend: emulator was chosen but --ascend-device "
     "was given too; drop one of them"),
    (["--accuracy-threshold=1.5"], "ERROR: pytest-ascend-accuracy: --accuracy-threshold: threshold "
                                   "must be within [0, 1], got 1.5"),
    # refused, not ignored, as the CLI does (a docs trial: a made-up SoC ran silently); on the
    # emulator a known one picks its Cube kernels (audit 36 B F1, test_soc_cube_kernels.py)
    (["--soc-version=Ascend910C1"], "ERROR: pytest-ascend-accuracy: --soc-version: unknown SoC "
                                    "'Ascend910C1' for the emulator (closest: Ascend910*); it "
                                    "knows float32 cube kernels: *"),
])
def test_usage_errors(pytester, monkeypatch, args, message):
    monkeypatch.setenv("ASCEND_ACCURACY_RUNTIME", "acl")
    monkeypatch.delenv("ASCEND_TOOLKIT_HOME", raising=False)
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    result.stdout.no_fnmatch_line("*passed*")


def test_bad_ini_threshold(pytester):
    pytester.makeini("[pytest]\nascend_accuracy_threshold = high\n")
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: pytest-ascend-accuracy: ascend_accuracy_threshold: must be "
                                 "a number within [0, 1], got 'high'"])


def test_invisible_device_is_a_usage_error(pytester, monkeypatch):
    monkeypatch.setenv("ASCEND_RT_VISIBLE_DEVICES", "4,5")
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest("--ascend-device=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: pytest-ascend-accuracy: --ascend-device: device 0 is not "
                                 "visible: ASCEND_RT_VISIBLE_DEVICES=4,5 lists device ids 4, 5; "
                                 "--ascend-device takes those ids * e.g. --ascend-device=4,5"])


def test_plugin_can_be_disabled(pytester):
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest("-p", "no:ascend_accuracy")
    assert result.ret == 0
    result.stdout.no_fnmatch_line("ascend-accuracy:*")


def test_a_bool_ini_value_pytest_cannot_read_is_a_usage_error_naming_it(pytester):
    """``ascend_device_lock = ture`` was pytest's INTERNALERROR (ValueError: invalid truth
    value): now one usage line naming the key and the closest spelling, as other ini values."""
    pytester.makepyfile(test_a="def test_a():\n    pass\n")
    for key, value, closest in (("ascend_device_lock", "ture", "true"),
                                ("ascend_accuracy_worksteal", "nope", "no")):
        pytester.makeini(f"[pytest]\n{key} = {value}\n")
        extra = ["-n", "2"] if key == "ascend_accuracy_worksteal" else []
        if extra:
            pytest.importorskip("xdist")
        run = pytester.runpytest_subprocess("-p", "no:cacheprovider", *extra)
        assert run.ret == pytest.ExitCode.USAGE_ERROR
        run.stderr.fnmatch_lines([f"ERROR: pytest-ascend-accuracy: {key} in *: must be true or false "
                                  f"(or yes/no, on/off, 1/0), got '{value}'; closest: "
                                  f"'{closest}'"])
        assert "INTERNALERROR" not in run.stdout.str() + run.stderr.str()
    # given with -o (not in config.inicfg on pytest < 9), and as native TOML (a TypeError on
    # pytest 9): the same line
    pytester.makeini("[pytest]\n")
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-o", "ascend_device_lock=ture")
    run.stderr.fnmatch_lines(["*ascend_device_lock in -o: must be true or false*got 'ture'; closest: "
                              "'true'"])
    if int(pytest.__version__.split(".")[0]) >= 9:
        (pytester.path / "tox.ini").unlink()
        pytester.makepyprojecttoml('[tool.pytest]\nascend_device_lock = "ture"\n')
        run = pytester.runpytest_subprocess("-p", "no:cacheprovider")
        run.stderr.fnmatch_lines(["*ascend_device_lock in *pyproject.toml: must be a TOML boolean, true or false "
                                  "(unquoted), got 'ture' (str)"])
        (pytester.path / "pyproject.toml").unlink()
    pytester.makeini("[pytest]\nascend_device_lock = yes\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_misspelled_ini_key_is_a_usage_error_naming_the_closest(pytester):
    """pytest only warns "Unknown config option" and the setting meant stays at its default
    (``ascend_accuracy_max_dorp``: no baseline check at all); keys of other plugins are left to
    pytest."""
    pytester.makeini("[pytest]\nascend_accuracy_max_dorp = 0.002\nsome_other_key = 1\n")
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: pytest-ascend-accuracy: *tox.ini: unknown ini key "
                                 "'ascend_accuracy_max_dorp'; closest: "
                                 "'ascend_accuracy_max_drop'*"])
    pytester.makeini("[pytest]\nascend_accuracy_max_drop = 0.002\nsome_other_key = 1\n")
    assert pytester.runpytest().ret == 0


def test_another_tools_ascend_key_is_left_to_pytest_and_o_is_named(pytester):
    """Only a near miss of one of the plugin's keys is refused (a review: any unknown
    ``ascend_*`` key was, another tool's too); one given with ``-o`` is said to come from -o."""
    pytester.makeini("[pytest]\nascend_toolkit_home = /usr/local/Ascend\n")
    pytester.makepyfile("def test_ok(): pass")
    assert pytester.runpytest("-p", "no:cacheprovider").ret == 0
    result = pytester.runpytest("-p", "no:cacheprovider", "-o", "ascend_accuracy_max_dorp=0.1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: pytest-ascend-accuracy: -o: unknown ini key "
                                 "'ascend_accuracy_max_dorp'; closest: "
                                 "'ascend_accuracy_max_drop'*"])
