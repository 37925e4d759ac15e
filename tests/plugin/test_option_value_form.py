"""``--accuracy-cache-dir PATH`` (the value as the next argument) naming an existing folder made
pytest take PATH for a path to test and look for its ini file from the common folder, so the
project's pytest.ini, with every ascend_accuracy_* setting (a cache size bound among them), was
silently not read (pytest-dev/pytest#8846; a review). It is refused with the ``=`` form, which,
pasted, runs with the ini read."""
import pytest

TEST = """
def test_reads_the_ini(request):
    assert request.config.getini("ascend_accuracy_cache_size") == "7MB"
"""


@pytest.mark.parametrize("option", ["--accuracy-cache-dir", "--accuracy-report"])
def test_a_separate_path_value_hiding_the_ini_is_refused_with_the_form_to_write(
        pytester, option):
    pytester.makeini("[pytest]\nascend_accuracy_cache_size = 7MB\n")
    pytester.makepyfile(test_one=TEST)
    (pytester.path.parent / "shared").mkdir(exist_ok=True)
    run = pytester.runpytest("-p", "no:cacheprovider", option, "../shared")
    assert run.ret == pytest.ExitCode.USAGE_ERROR
    run.stderr.fnmatch_lines([f"ERROR: {option} ../shared: pytest took '../shared' for a path "
                              f"to test and so did not read tox.ini (its ini file: every "
                              f"ascend_accuracy_* setting in it was ignored); write "
                              f"{option}=../shared"])
    pasted = pytester.runpytest("-p", "no:cacheprovider", f"{option}=../shared")
    pasted.assert_outcomes(passed=1)


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
