"""A YAML suite whose collection fails with something other than a ``ConfigError`` (a bug in
a user's conftest, onnx failing to import) is reported as pytest reports a collection error:
the suite's collector passed ``style`` on to ``Collector.repr_failure``, which takes none, and
pytest ended with ``INTERNALERROR> TypeError: Collector.repr_failure() takes 2 positional
arguments but 3 were given``, hiding the error itself."""

SUITE = """models:
  - name: m
    model: models/passing_mlp.onnx
"""


def _broken(*args, **kwargs):
    raise RuntimeError("the real cause, shown")


def test_a_collection_error_is_shown_not_an_internal_error(pytester, models_dir, monkeypatch):
    from pytest_ascend_accuracy.plugin import yaml_suite

    pytester.makefile(".yaml", accuracy_models=SUITE)
    monkeypatch.setattr(yaml_suite, "load_suite", _broken)  # the in-process run's, undone after
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.no_fnmatch_line("*INTERNALERROR*")
    result.stdout.fnmatch_lines(["*ERROR collecting accuracy_models.yaml*",
                                 "*RuntimeError: the real cause, shown*"])
    assert result.ret == 2  # pytest's own: errors during collection
