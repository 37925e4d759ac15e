"""A command-line option written as an ini key (``ascend_device = 0``) is refused saying it is a
command-line option and how to give it (on the command line, or in addopts), with the key's
value: it was taken for a misspelling of the closest ini key, ``ascend_device_lock``, which,
pasted, was accepted while the run stayed on the emulator. The advice passes pasted."""
import pytest

from pytest_ascend_accuracy.core.ini_keys import COMMAND_LINE_ONLY, PLUGIN_INI_KEYS

from conftest import ACCURACY_TESTS

#: the plugin's options that have an ini key (all others are ``COMMAND_LINE_ONLY``)
WITH_INI_KEYS = {"--accuracy-threshold": "ascend_accuracy_threshold",
                 "--accuracy-cache-dir": "ascend_accuracy_cache_dir",
                 "--ascend-precision-policy": "ascend_precision_policy",
                 "--soc-version": "ascend_soc_version",
                 "--accuracy-dump-mode": "ascend_accuracy_dump_mode"}


def _error(result):
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    return next(s for s in result.errlines if "unknown ini key" in s)


def test_the_table_is_the_plugins_own_options(pytestconfig):
    group = pytestconfig._parser.getgroup("ascend-accuracy")
    options = {o.names()[-1]: o for o in group.options}
    assert set(options) == set(COMMAND_LINE_ONLY) | set(WITH_INI_KEYS)
    for name, takes_value in COMMAND_LINE_ONLY.items():
        attrs = options[name].attrs()  # (pytest 9.2 keeps nargs=0 for a flag, not its action)
        flag = attrs.get("action") in ("store_true", "store_false") or attrs.get("nargs") == 0
        assert flag is not takes_value, name
    assert set(WITH_INI_KEYS.values()) <= set(PLUGIN_INI_KEYS)


@pytest.mark.parametrize("ini, line, pasted", [
    ("pytest.ini", "[pytest]\nascend_accuracy_report = rep\n", "[pytest]\n{addopts}\n"),
    ("pyproject.toml", "[tool.pytest.ini_options]\nascend_accuracy_report = 'rep'\n",
     "[tool.pytest.ini_options]\n{addopts}\n"),
])
def test_an_option_written_as_a_key_names_the_addopts_line_that_works(
        pytester, models_dir, ini, line, pasted):
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    (pytester.path / ini).write_text(line)
    error = _error(pytester.runpytest("-k", "mlp"))
    assert ("unknown ini key 'ascend_accuracy_report': --accuracy-report is a command-line "
            "option, which has no ini key; give it on the command line (--accuracy-report=rep) "
            "or add it to the ini file's addopts (") in error
    assert "closest" not in error
    addopts = error.split("addopts (", 1)[1].split(", or after the options addopts has)")[0]
    assert addopts == ('addopts = "--accuracy-report=rep"' if ini.endswith(".toml") else
                       "addopts = --accuracy-report=rep")
    (pytester.path / ini).write_text(pasted.format(addopts=addopts))
    pytester.runpytest("-k", "mlp").assert_outcomes(passed=1)
    assert (pytester.path / "rep" / "index.html").is_file()


def test_the_device_and_a_flag_are_not_taken_for_other_keys(pytester):
    pytester.makepyfile("def test_ok(): pass")
    pytester.makeini("[pytest]\nascend_device = 0\n")
    error = _error(pytester.runpytest())
    assert "--ascend-device is a command-line option" in error
    assert "(--ascend-device=0)" in error and "ascend_device_lock" not in error
    pytester.makeini("[pytest]\nascend_accuracy_regen = true\n")
    assert "(addopts = --accuracy-regen, or after" in _error(pytester.runpytest())
    pytester.makeini("[pytest]\n")
    error = _error(pytester.runpytest("-o", "accuracy_report=out"))
    assert error.startswith("ERROR: pytest-ascend-accuracy: -o: unknown ini key "
                            "'accuracy_report': --accuracy-report is a command-line option")
    assert "(--accuracy-report=out)" in error
    pytester.makeini("[pytest]\nascend_device_lck = 0\n")  # a misspelling of a key stays one
    assert "closest: 'ascend_device_lock'" in _error(pytester.runpytest())


@pytest.mark.parametrize("ini, head", [
    ("pytest.toml", "[pytest]"), ("pyproject.toml", "[tool.pytest]"),  # pytest 9's TOML tables
    ("tox.ini", "[pytest]")])
def test_a_value_with_a_space_is_quoted_and_each_form_passes_pasted(
        pytester, models_dir, ini, head):
    """addopts is a list in pytest 9's TOML tables (a string is a TypeError there), and a value
    with a space was pasted unquoted ('file or directory not found: reports')."""
    if ini.endswith(".toml") and int(pytest.__version__.split(".")[0]) < 9:
        pytest.skip("pytest < 9 reads no pytest.toml or [tool.pytest]")
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    value = "'my rep'" if ini.endswith(".toml") else "my rep"
    (pytester.path / ini).write_text(f"{head}\nascend_accuracy_report = {value}\n")
    error = _error(pytester.runpytest("-k", "mlp"))
    assert "give it on the command line (--accuracy-report='my rep')" in error
    addopts = error.split("addopts (", 1)[1].split(", or after the options addopts has)")[0]
    assert addopts == {"pytest.toml": 'addopts = ["--accuracy-report=my rep"]',
                       "pyproject.toml": 'addopts = ["--accuracy-report=my rep"]',
                       "tox.ini": "addopts = --accuracy-report='my rep'"}[ini]
    (pytester.path / ini).write_text(f"{head}\n{addopts}\n")
    pytester.runpytest("-k", "mlp").assert_outcomes(passed=1)
    assert (pytester.path / "my rep" / "index.html").is_file()


def test_an_option_set_off_is_told_to_go_not_to_be_turned_on(pytester):
    """``ascend_accuracy_regen = false`` was told to add --accuracy-regen: every run would
    then rewrite failing goldens."""
    pytester.makepyfile("def test_ok(): pass")
    for value in ("false", "0", "off"):
        pytester.makeini(f"[pytest]\nascend_accuracy_regen = {value}\n")
        error = _error(pytester.runpytest())
        assert error.endswith("unknown ini key 'ascend_accuracy_regen': --accuracy-regen is a "
                              "command-line option, which has no ini key, off unless given: "
                              "delete the line"), error


@pytest.mark.parametrize("ini, head", [
    ("pyproject.toml", "[tool.pytest.ini_options]"),
    ("pyproject.toml", "# was [tool.pytest.ini_options]\n[tool.pytest]"),  # read as TOML
    ("pytest.toml", "[pytest]")])
def test_an_override_gets_the_ini_files_own_addopts_form(pytester, models_dir, ini, head):
    """``-o ascend_accuracy_report=r`` beside a TOML ini file was given ``addopts =
    --accuracy-report=r``, which that file cannot parse; a pyproject.toml's form was guessed
    from its text, so a comment naming the other table chose the wrong one."""
    if int(pytest.__version__.split(".")[0]) < 9 and "ini_options" not in head.split("\n")[-1]:
        pytest.skip("pytest < 9 reads no pytest.toml or [tool.pytest]")
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    (pytester.path / ini).write_text(f"{head}\n")
    error = _error(pytester.runpytest("-k", "mlp", "-o", "ascend_accuracy_report=r"))
    assert error.endswith(", in place of -o ascend_accuracy_report=r"), error
    addopts = error.split("addopts (", 1)[1].split(", or after the options addopts has)")[0]
    (pytester.path / ini).write_text(f"{head}\n{addopts}\n")
    pytester.runpytest("-k", "mlp").assert_outcomes(passed=1)
    assert (pytester.path / "r" / "index.html").is_file()
    error = _error(pytester.runpytest("-o", "ascend_accuracy_regen=false"))
    assert error.endswith("off unless given: leave out -o ascend_accuracy_regen=false"), error


@pytest.mark.parametrize("text, form", [
    ("[tool.pytest]\nminversion = '9'\n[tool.pytest.ini_options]\n", "toml-list"),  # (H97)
    ("[tool.pytest.ini_options]\naddopts = '-q'\n", "toml-string"),
    ("[tool.pytest.ini_options]\n", "toml-string"),  # empty: still ini mode for pytest 9
    ("[tool.pytest]\n", "toml-list"),
    ("# was [tool.pytest.ini_options]\n[tool.pytest]\nminversion = '9'\n", "toml-list")])
def test_a_pyprojects_addopts_form_is_the_one_pytest_reads(tmp_path, text, form):
    from pytest_ascend_accuracy.core.ini_keys import addopts_form

    (tmp_path / "pyproject.toml").write_text(text)
    assert addopts_form(tmp_path / "pyproject.toml") == form


def test_without_an_ini_file_and_with_spaces_in_an_override(pytester, models_dir):
    """With no ini file the advice named "the ini file's addopts"; ``-o ' key = v '`` (pytest 9
    keeps the key unstripped) was blamed on an ini file (H97)."""
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    error = _error(pytester.runpytest("-k", "mlp", "-o", " ascend_accuracy_report = r "))
    assert error.startswith("ERROR: pytest-ascend-accuracy: -o: unknown ini key "
                            "'ascend_accuracy_report': "), error
    assert ("or write a pytest.ini where pytest runs: [pytest] with addopts = "
            "--accuracy-report=r, in place of -o ascend_accuracy_report=r") in error, error
    (pytester.path / "pytest.ini").write_text("[pytest]\naddopts = --accuracy-report=r\n")
    pytester.runpytest("-k", "mlp").assert_outcomes(passed=1)
    assert (pytester.path / "r" / "index.html").is_file()
