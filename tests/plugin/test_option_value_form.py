"""``--accuracy-cache-dir PATH`` (the value as the next argument) naming an existing folder made
pytest take PATH for a path to test and look for its ini file and rootdir from the common
folder, so the project's ini file, with every ascend_accuracy_* setting (a cache size bound
among them), was silently not read, or the rootdir (the default cache and baselines) moved
(pytest-dev/pytest#8846; two reviews). Such a command line is refused, naming what pytest read
and what the command line gives, with the ``=`` form, which, pasted, runs with it."""
import pytest

TEST = """
def test_reads_the_ini(request):
    assert request.config.getini("ascend_accuracy_cache_size") == "7MB"
"""
ROOT = """
def test_rootdir(request):
    assert request.config.rootpath == request.config.invocation_params.dir
"""


def _refused(run, option, value, read, meant):
    assert run.ret == pytest.ExitCode.USAGE_ERROR, run.stdout.str()
    run.stderr.fnmatch_lines([
        f"ERROR: {option} {value}: pytest took it for a path to test, so it read {read} instead "
        f"of {meant}, which the command line gives (its ascend_accuracy_* settings, and the "
        f"default cache and baselines under its rootdir, were not used); write "
        f"{option}={value}"])


@pytest.mark.parametrize("option", ["--accuracy-cache-dir", "--accuracy-report"])
def test_a_separate_path_value_hiding_the_ini_is_refused_with_the_form_to_write(
        pytester, option):
    pytester.makeini("[pytest]\nascend_accuracy_cache_size = 7MB\n")
    pytester.makepyfile(test_one=TEST)
    (pytester.path.parent / "shared").mkdir(exist_ok=True)
    run = pytester.runpytest("-p", "no:cacheprovider", option, "../shared")
    _refused(run, option, "../shared", f"no ini file (rootdir {pytester.path.parent})",
             "tox.ini (rootdir .)")
    pasted = pytester.runpytest("-p", "no:cacheprovider", f"{option}=../shared")
    pasted.assert_outcomes(passed=1)


@pytest.mark.parametrize("ini", ["pytest.toml", "pyproject.toml", "none"])
def test_a_moved_rootdir_is_refused_too(pytester, ini):
    # a pyproject.toml of [project] only, pytest 9's pytest.toml, or no ini file: the rootdir
    # (the default cache and baselines under it) moved to the common folder
    if ini == "pytest.toml":
        (pytester.path / ini).write_text("[pytest]\n")
    elif ini == "pyproject.toml":
        (pytester.path / ini).write_text("[project]\nname = 'p'\n")
    pytester.makepyfile(test_one=ROOT)
    (pytester.path.parent / "shared").mkdir(exist_ok=True)
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report", "../shared")
    assert run.ret == pytest.ExitCode.USAGE_ERROR, run.stdout.str()
    run.stderr.fnmatch_lines(["ERROR: --accuracy-report ../shared: pytest took it *"])
    pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=../shared"
                       ).assert_outcomes(passed=1)


def test_what_pytest_reads_from_the_paths_to_test_decides(pytester):
    # a monorepo: pyproject.toml at the top, pkg/tox.ini holding the settings, pytest run from
    # the top on pkg/tests. A value inside pkg changes nothing: not refused; a value that moves
    # the search to the top is refused, naming pkg/tox.ini (a review: the first was refused,
    # naming the top's file, which the = form does not read either, and the second passed)
    (pytester.path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    pkg = pytester.mkdir("pkg")
    (pkg / "tox.ini").write_text("[pytest]\nascend_accuracy_cache_size = 7MB\n")
    (pkg / "tests").mkdir()
    (pkg / "tests" / "test_one.py").write_text(TEST)
    (pkg / "rep").mkdir()
    pytester.runpytest("-p", "no:cacheprovider", "pkg/tests", "--accuracy-report", "pkg/rep"
                       ).assert_outcomes(passed=1)
    pytester.mkdir("cache")
    run = pytester.runpytest("-p", "no:cacheprovider", "pkg/tests", "--accuracy-cache-dir",
                             "cache")
    _refused(run, "--accuracy-cache-dir", "cache", "pyproject.toml (rootdir .)",
             "pkg/tox.ini (rootdir pkg)")
    pytester.runpytest("-p", "no:cacheprovider", "pkg/tests", "--accuracy-cache-dir=cache"
                       ).assert_outcomes(passed=1)


def test_an_argument_file_is_read_as_pytest_reads_it(pytester):
    pytester.makeini("[pytest]\nascend_accuracy_cache_size = 7MB\n")
    pytester.makepyfile(test_one=TEST)
    (pytester.path.parent / "shared").mkdir(exist_ok=True)
    (pytester.path / "args.txt").write_text("--accuracy-cache-dir\n../shared\n")
    run = pytester.runpytest("-p", "no:cacheprovider", "@args.txt")
    assert run.ret == pytest.ExitCode.USAGE_ERROR, run.stdout.str()
    run.stderr.fnmatch_lines(["ERROR: an option value given as the next argument: pytest took "
                              "it for a path to test, so it read no ini file *; give this "
                              "plugin's options as --option=VALUE"])


def test_a_separate_value_inside_the_project_is_left_alone(pytester):
    pytester.makeini("[pytest]\nascend_accuracy_cache_size = 7MB\n")
    pytester.makepyfile(test_one=TEST)
    pytester.mkdir("cache")
    pytester.runpytest("-p", "no:cacheprovider", "--accuracy-cache-dir", "cache"
                       ).assert_outcomes(passed=1)


def test_an_ini_file_named_with_c_is_the_one_read(pytester):
    pytester.makeini("[pytest]\nascend_accuracy_cache_size = 1MB\n")  # (not the one -c names)
    (pytester.path / "ci.ini").write_text("[pytest]\nascend_accuracy_cache_size = 7MB\n")
    pytester.makepyfile(test_one=TEST)
    (pytester.path.parent / "shared").mkdir(exist_ok=True)
    pytester.runpytest("-p", "no:cacheprovider", "-c", "ci.ini", "--accuracy-report", "../shared"
                       ).assert_outcomes(passed=1)
