"""The suite's own harness (``tests/conftest.py``), not the plugin: a test that writes the same
test file twice through ``pytester`` runs what it wrote the second time.

pytest caches a rewritten test module as a ``.pyc`` keyed by the source's mtime in whole seconds
and its size. A second version of the same size written within the same second was read back
from that cache, so the inner run executed the *first* version (CI failed this way once:
tests/plugin/test_ocr_det_hint.py ran its pasted hint again instead of the sanitized one)."""
import re


def test_a_rewritten_test_file_of_the_same_size_runs_its_new_text(pytester):
    pytester.makepyfile(test_twice="def test_it():\n    assert 1 == 1\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    for _ in range(3):  # each pair lands in the same second on any machine but a very slow one
        pytester.makepyfile(test_twice="def test_it():\n    assert 1 == 2\n")
        pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)
        pytester.makepyfile(test_twice="def test_it():\n    assert 1 == 1\n")
        pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_tests_process_reads_installed_bytecode_and_its_children_share_one_cache(
        _children_share_one_bytecode_cache):
    """Where ``PYTHONDONTWRITEBYTECODE`` is set, this process (an xdist worker under ``-n 2``)
    started without a ``PYTHONPYCACHEPREFIX``, which would hide every package's ``__pycache__``
    and compile them all again; the processes it starts get the run's shared prefix. Where the
    variable is not set there is nothing to check (the harness changes nothing): it is set in
    this container and, as far as we know, in CI's."""
    import os
    import sys

    shared = _children_share_one_bytecode_cache
    if shared is None:  # the variable was not set for this run: nothing was changed
        return
    assert sys.pycache_prefix is None
    assert os.environ["PYTHONPYCACHEPREFIX"] == shared
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ


def _what_a_run_loaded(pytester):
    """(plugin names, plugin distributions, modules marked for rewrite) of one in-process run."""
    pytester.makepyfile(test_one="def test_it():\n    pass\n")
    recorder = pytester.inline_run("-p", "no:cacheprovider")
    recorder.assertoutcome(passed=1)
    manager = recorder.getcall("pytest_collection_finish").session.config.pluginmanager
    names = sorted(name for name, plugin in manager.list_name_plugin()
                   if plugin is not None and not name.isdigit())
    dists = sorted((dist.project_name, dist.version) for _, dist in manager.list_plugin_distinfo())
    return names, dists, sorted(manager.rewrite_hook._must_rewrite)


def test_inline_runs_load_what_they_would_with_the_metadata_read_once(pytester, monkeypatch):
    """``installed_metadata_read_once``: an in-process run loads the same plugins, from the same
    distributions, and rewrites the same modules as with ``importlib.metadata``'s own reading."""
    import importlib.metadata

    import _pytest.config
    from installed_metadata_read_once import REAL

    assert importlib.metadata.distributions is not REAL["distributions"]
    read_once = _what_a_run_loaded(pytester)
    assert ("pytest-ascend-accuracy", "0.1.0") in read_once[1] and read_once[2]  # (which
    # modules are rewritten depends on the install: an editable one lists no files to pytest 9.0)
    for name, real in REAL.items():
        monkeypatch.setattr(importlib.metadata if name == "distributions" else _pytest.config,
                            name, real)
    assert _what_a_run_loaded(pytester) == read_once


_FAILING_AND_BROKEN = {
    "test_fails": ("import pytest\n\n\n@pytest.fixture\ndef value():\n    return 2\n\n\n"
                   "def helper(x):\n    if x:\n        raise ValueError(\n            'no'\n"
                   "        )\n\n\ndef test_it(value):\n    assert value == 2\n"
                   "    helper(value)\n"),
    "test_broken": "import not_a_module_anywhere\n",
}


def test_reports_show_what_they_would_with_each_source_parsed_once(pytester, monkeypatch):
    """``traceback_source_parsed_once``: a failing test's long traceback and the ``Interrupted``
    report of a collection error read as with pytest's own parsing, every entry of them."""
    import _pytest._code.code
    import _pytest._code.source
    from traceback_source_parsed_once import REAL

    assert _pytest._code.code.getstatementrange_ast is not REAL
    pytester.makepyfile(**_FAILING_AND_BROKEN)
    args = ("--tb=long", "--fulltrace", "-p", "no:cacheprovider")

    def reports():
        return [pytester.runpytest(f"{name}.py", *args).outlines for name in _FAILING_AND_BROKEN]

    once = [reports(), reports()]
    for module in (_pytest._code.source, _pytest._code.code):
        monkeypatch.setattr(module, "getstatementrange_ast", REAL)
    real = reports()
    assert any(line.startswith("E") and line.endswith("ValueError: no") for line in real[0])
    assert any("Interrupted: 1 error during collection" in line for line in real[1])

    def same_run(runs):  # (the objects' addresses and the time taken differ from run to run)
        return [[re.sub(r" at 0x[0-9a-f]+>", ">", line.rsplit(" in ", 1)[0] if line[:1] == "="
                        else line) for line in lines] for lines in runs]

    assert same_run(once[0]) == same_run(once[1]) == same_run(real)
    assert len(real[1]) > 300  # (--fulltrace: every entry of pytest's own stack is shown)


def test_every_hook_function_of_a_run_gets_pluggys_own_argument_names(pytester):
    """``hook_argnames_read_once``: for each hook implementation and specification of an
    in-process accuracy run (pytest's plugins, this plugin, the inner test file's conftest, a
    plugin object's methods), what the memo gives, first and again, is what pluggy reads."""
    import pluggy._hooks
    from hook_argnames_read_once import REAL

    assert pluggy._hooks.varnames is not REAL
    pytester.makeconftest("class Seen:\n    def pytest_report_header(self, config):\n"
                          "        return 'seen'\n\n\ndef pytest_configure(config):\n"
                          "    config.pluginmanager.register(Seen(), 'seen')\n")
    pytester.makepyfile("def test_it():\n    pass\n")
    run = pytester.inline_run()
    functions = [impl.function for hook in vars(run._pluginmanager.hook).values()
                 if isinstance(hook, pluggy.HookCaller) for impl in hook.get_hookimpls()]
    functions += [hook.spec.function for hook in vars(run._pluginmanager.hook).values()
                  if isinstance(hook, pluggy.HookCaller) and hook.spec is not None]
    assert len(functions) > 200 and any(getattr(f, "__self__", None) for f in functions)
    for function in functions:
        assert pluggy._hooks.varnames(function) == REAL(function), function
        assert pluggy._hooks.varnames(function) == REAL(function), function
