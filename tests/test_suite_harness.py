"""The suite's own harness (``tests/conftest.py``), not the plugin: a test that writes the same
test file twice through ``pytester`` runs what it wrote the second time.

pytest caches a rewritten test module as a ``.pyc`` keyed by the source's mtime in whole seconds
and its size. A second version of the same size written within the same second was read back
from that cache, so the inner run executed the *first* version (CI failed this way once:
tests/plugin/test_ocr_det_hint.py ran its pasted hint again instead of the sanitized one)."""


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
