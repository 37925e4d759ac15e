"""``pytest.param(..., marks=accuracy(modes=[...]))``: a param's marks reach the test after the
plugin made one test per mode of the test's own marker, so its modes were ignored while its
threshold applied: audit 33's keep_dtype mode ran as default, with nothing in the id or the
output to say so. It is refused, saying where modes go; the spelling it offers passes."""
import pytest

pytest.importorskip("onnxruntime")


@pytest.fixture
def project(pytester):
    from pytest_ascend_accuracy.testing.models import save_models

    save_models(pytester.path / "models", ["overflow"])
    return pytester


def test_modes_in_a_params_mark_are_refused_naming_where_they_go(project):
    project.makepyfile("""
        import pytest
        from pytest_ascend_accuracy import HIGH_PRECISION, accuracy

        @pytest.mark.parametrize("thr", [
            pytest.param(0.99, marks=accuracy(threshold=0.99, modes=[HIGH_PRECISION]), id="hp")])
        def test_thr(thr, ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("models/overflow.onnx", seed=0)
            check_accuracy(ascend_model("models/overflow.onnx").run(inputs),
                           golden_dump("models/overflow.onnx", inputs))
    """)
    result = project.runpytest("-p", "no:randomly")
    result.assert_outcomes(errors=1)
    assert (
        "modes= in the accuracy mark of pytest.param (id 'hp') makes no test of its own: only "
        "the test's own @accuracy(modes=[...]) marker (or pytestmark's) does, and this one would "
        "run in the default mode without a word; put modes= on the test's @accuracy marker, or "
        "convert in that mode in the test: ascend_model(MODEL, mode=...) (the param's threshold= "
        "and its other settings apply as given)") in result.stdout.str()


def test_the_spelling_the_refusal_offers_runs_in_the_mode(project):
    project.makepyfile("""
        import pytest
        from pytest_ascend_accuracy import HIGH_PRECISION, accuracy

        @pytest.mark.parametrize("thr", [
            pytest.param(0.99, marks=accuracy(threshold=0.99), id="hp")])
        def test_thr(thr, ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("models/overflow.onnx", seed=0)
            check_accuracy(ascend_model("models/overflow.onnx", mode=HIGH_PRECISION).run(inputs),
                           golden_dump("models/overflow.onnx", inputs))

        @pytest.mark.parametrize("thr", [
            pytest.param(0.99, marks=accuracy(threshold=0.99), id="default")])
        def test_default(thr, ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("models/overflow.onnx", seed=0)
            check_accuracy(ascend_model("models/overflow.onnx").run(inputs),
                           golden_dump("models/overflow.onnx", inputs))
    """)
    result = project.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)  # high precision passes where default fails
    assert "FAILED test_the_spelling_the_refusal_offers_runs_in_the_mode.py::test_default[default]" \
        in result.stdout.str()


def test_a_params_mark_naming_the_mode_the_test_runs_in_is_taken(project):
    """A review: modes=None, modes=["default"] and the test's own one mode repeated ran in the
    mode they name, and were refused."""
    project.makepyfile("""
        import pytest
        from pytest_ascend_accuracy import HIGH_PRECISION, accuracy

        def _check(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("models/overflow.onnx", seed=0)
            check_accuracy(ascend_model("models/overflow.onnx").run(inputs),
                           golden_dump("models/overflow.onnx", inputs))

        @pytest.mark.parametrize("t", [
            pytest.param(0.99, marks=accuracy(threshold=0.99, modes=None), id="none"),
            pytest.param(0.99, marks=accuracy(threshold=0.99, modes=["default"]), id="dflt")])
        def test_default(t, ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            _check(ascend_model, golden_dump, check_accuracy, accuracy_inputs)

        @accuracy(modes=[HIGH_PRECISION])
        @pytest.mark.parametrize("t", [
            pytest.param(0.99, marks=accuracy(threshold=0.99, modes=[HIGH_PRECISION]), id="hp")])
        def test_hp(t, ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            _check(ascend_model, golden_dump, check_accuracy, accuracy_inputs)
    """)
    result = project.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=2)  # high precision passes; default fails, judged
    assert "makes no test of its own" not in result.stdout.str()


def test_other_spellings_of_the_same_modes_are_taken_too(project):
    """A re-review: a bare string, the same combination spelled the other way round and the
    test's own two-mode list repeated were still refused."""
    project.makepyfile("""
        import pytest
        from pytest_ascend_accuracy import (BUFFER_OFF, FUSION_OFF, HIGH_PRECISION, accuracy)

        def _check(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("models/overflow.onnx", seed=0)
            check_accuracy(ascend_model("models/overflow.onnx").run(inputs),
                           golden_dump("models/overflow.onnx", inputs))

        @accuracy(modes=[HIGH_PRECISION])
        @pytest.mark.parametrize("t", [pytest.param(
            0.99, marks=accuracy(threshold=0.99, modes="high_precision"), id="str")])
        def test_str(t, ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            _check(ascend_model, golden_dump, check_accuracy, accuracy_inputs)

        @accuracy(modes=["fusion_off+buffer_off"])
        @pytest.mark.parametrize("t", [pytest.param(
            0.99, marks=accuracy(threshold=0.99, modes=[BUFFER_OFF | FUSION_OFF]), id="c")])
        def test_combo(t, ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            _check(ascend_model, golden_dump, check_accuracy, accuracy_inputs)

        @accuracy(modes=[HIGH_PRECISION, "default"])
        @pytest.mark.parametrize("t", [pytest.param(
            0.99, marks=accuracy(threshold=0.99, modes=["default", HIGH_PRECISION]), id="b")])
        def test_both(t, ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            _check(ascend_model, golden_dump, check_accuracy, accuracy_inputs)
    """)
    result = project.runpytest("-p", "no:randomly")
    assert "makes no test of its own" not in result.stdout.str()
    result.assert_outcomes(passed=2, failed=2)  # high precision passes; the others judged
