"""The @accuracy marker through pytest: registration, modes parametrization, bad arguments."""
import pytest


def test_modes_parametrize_with_readable_ids(pytester):
    pytester.makepyfile("""
        import pytest
        from pytest_ascend_accuracy import accuracy, keep_dtype, FUSION_OFF

        @accuracy(modes=["default", "high_precision", keep_dtype(["norm"]), FUSION_OFF,
                         "buffer_off+fusion_off"])
        def test_model(ascend_model):
            pass

        @accuracy(threshold=0.9, modes=["default", "high_precision"])
        @pytest.mark.parametrize("size", [1, 2])
        def test_sizes(size):
            pass

        @accuracy(0.99)
        def test_plain(check_accuracy):
            pass

        @pytest.mark.accuracy
        def test_bare():
            pass
    """)
    result = pytester.runpytest("--collect-only", "-q", "--strict-markers")
    result.stdout.fnmatch_lines([
        "test_modes_parametrize_with_readable_ids.py::test_model[default]",
        "test_modes_parametrize_with_readable_ids.py::test_model[high_precision]",
        "test_modes_parametrize_with_readable_ids.py::test_model[keep_dtype(norm)]",
        "test_modes_parametrize_with_readable_ids.py::test_model[fusion_off]",
        "test_modes_parametrize_with_readable_ids.py::test_model[buffer_off+fusion_off]",
        "test_modes_parametrize_with_readable_ids.py::test_sizes[default-1]",
        "test_modes_parametrize_with_readable_ids.py::test_sizes[default-2]",
        "test_modes_parametrize_with_readable_ids.py::test_sizes[high_precision-1]",
        "test_modes_parametrize_with_readable_ids.py::test_sizes[high_precision-2]",
        "test_modes_parametrize_with_readable_ids.py::test_plain",
        "test_modes_parametrize_with_readable_ids.py::test_bare",
        "11 tests collected in *",
    ])
    assert result.ret == 0


def test_mode_reaches_the_fixtures(pytester):
    pytester.makepyfile("""
        from pytest_ascend_accuracy import accuracy

        @accuracy(modes=["default", "high_precision"])
        def test_mode(_ascend_accuracy_context):
            print("MODE", _ascend_accuracy_context.mode.name, _ascend_accuracy_context.spec.threshold)

        def test_unmarked(_ascend_accuracy_context):
            print("MODE", _ascend_accuracy_context.mode, _ascend_accuracy_context.spec.threshold)
    """)
    result = pytester.runpytest("-s", "-q", "--accuracy-threshold=0.9")
    result.stdout.fnmatch_lines(["*MODE default 0.9", "*MODE high_precision 0.9", "*MODE None 0.9"])
    assert result.ret == 0


def test_class_and_module_markers(pytester):
    pytester.makepyfile("""
        import pytest
        from pytest_ascend_accuracy import accuracy

        pytestmark = accuracy(modes=["default", "fusion_off"])

        def test_module_level():
            pass

        @accuracy(threshold=0.5, modes=["high_precision"])
        class TestClass:
            def test_in_class(self, _ascend_accuracy_context):
                assert _ascend_accuracy_context.spec.threshold == 0.5
    """)
    result = pytester.runpytest("-v")
    result.stdout.fnmatch_lines([
        "*::test_module_level[[]default] PASSED*",
        "*::test_module_level[[]fusion_off] PASSED*",
        "*::TestClass::test_in_class[[]high_precision] PASSED*",
    ])


@pytest.mark.parametrize("marker, problem", [
    ("accuracy(threshold=1.5)", "threshold must be within [[]0, 1[]], got 1.5"),
    ("accuracy(threshold=-1)", "threshold must be within [[]0, 1[]], got -1.0"),
    ("accuracy(modes=['default', 'fast'])",
     "unknown mode 'fast'; known: default, high_precision, buffer_off, fusion_off"),
    ("accuracy(metric='l2')", "unknown metric 'l2'; known: cosine, *"),
    ("accuracy(treshold=0.9)", "@accuracy got unknown argument(s) treshold; closest: "
                               "'threshold'; known: *"),
    ("accuracy(0.9, metric='cosin')", "unknown metric 'cosin'; closest: 'cosine'; known: *"),
])
def test_bad_arguments_are_collection_errors_naming_the_test(pytester, marker, problem):
    pytester.makepyfile(test_bad=f"""
        from pytest_ascend_accuracy import accuracy

        def test_fine():
            pass

        @{marker}
        def test_broken():
            pass
    """)
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([
        "*ERROR collecting test_bad.py*",
        f"invalid @accuracy marker: test_bad.py::test_broken: {problem}",
        "*1 error in*",
    ])


def test_marker_without_plugin_fails_strict_markers(pytester):
    # proves the registration comes from the plugin (and that --strict-markers is honoured)
    pytester.makepyfile("""
        import pytest

        @pytest.mark.accuracy(threshold=0.9)
        def test_x():
            pass
    """)
    assert pytester.runpytest("--strict-markers").ret == 0
    # (in a subprocess: in-process runs share pytest.mark's cache of known marker names)
    result = pytester.runpytest_subprocess("--strict-markers", "-p", "no:ascend_accuracy")
    result.stdout.fnmatch_lines(["*'accuracy' not found in `markers` configuration option*"])
