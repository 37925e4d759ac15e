"""A model with a dynamic dimension (finding 2 of the PP-OCRv4 recogniser trial, whose input is
[?, 3, ?, ?]): where the inputs are known before the conversion the shape comes from them, as
``golden_dump(model, inputs)`` takes it; where nothing tells it, the advice is a value that runs
when pasted (it was ``input_shape={'x': (...)}``, refused pasted: "got Ellipsis")."""
import re

import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy.testing import models as tiny_models

pytest.importorskip("onnxruntime")

MODEL = "models/dyn.onnx"  # unnamed_model: x is [N, 4]


@pytest.fixture
def dyn_model(pytester):
    directory = pytester.mkdir("models")
    onnx.save(tiny_models.unnamed_model(), str(directory / "dyn.onnx"))
    return directory / "dyn.onnx"


def test_ascend_model_takes_the_shape_from_the_inputs_it_runs(pytester, dyn_model):
    """Converted at the first run, per input shape (one static conversion each, as ATC's
    --input_shape); the check sees the conversion of its own run."""
    pytester.makepyfile(test_dyn=f"""
        import numpy as np
        from pytest_ascend_accuracy import accuracy

        @accuracy(threshold=0.95)
        def test_two_shapes(ascend_model, golden_dump, check_accuracy):
            om = ascend_model("{MODEL}")
            keys = []
            for batch in (2, 3, 2):
                inputs = {{"x": np.linspace(-1, 1, batch * 4, dtype=np.float32).reshape(batch, 4)}}
                check_accuracy(om.run(inputs), golden_dump("{MODEL}", inputs))
                keys.append(om.converted.key)
                assert om.outputs(inputs)["y"].shape == (batch, 4)
            assert keys[0] != keys[1] and keys[0] == keys[2]  # one conversion per shape
    """)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(passed=1)
    run.stdout.fnmatch_lines(["3 accuracy checks: 3 passed, 0 failed*"])


def test_the_atc_command_carries_the_shape_of_the_inputs(pytester, dyn_model, monkeypatch,
                                                         tmp_path):
    """On the real backend (here the fake CANN) the deferred conversion is an ATC run with
    --input_shape at the run's input shape: a static-shape om per shape."""
    from pytest_ascend_accuracy.testing.fake_ascend import use_fake_ascend

    monkeypatch.delenv("ASCEND_RT_VISIBLE_DEVICES", raising=False)
    fake = use_fake_ascend(monkeypatch, tmp_path, device_count=1)
    pytester.makepyfile(test_dyn=f"""
        import numpy as np

        def test_run(ascend_model):
            ascend_model("{MODEL}").run({{"x": np.ones((2, 4), np.float32)}})
    """)
    run = pytester.runpytest("-p", "no:cacheprovider", "--ascend-device=0",
                             "--soc-version=Ascend310P3")
    run.assert_outcomes(passed=1)
    assert "--input_shape=x:2,4" in fake.atc_calls.read_text()


def _advice(text: str, pattern: str) -> str:
    found = re.search(pattern, text)
    assert found, text
    return found.group(0)


def test_the_advice_without_inputs_runs_pasted(pytester, dyn_model):
    body = """
        from pytest_ascend_accuracy import accuracy

        @accuracy(threshold=0.95)
        def test_seeded(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("{model}", seed=0{shape})
            check_accuracy(ascend_model("{model}").run(inputs), golden_dump("{model}", inputs))
    """
    pytester.makepyfile(test_seeded=body.format(model=MODEL, shape=""))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    assert "(...)" not in text and "nothing gives its size: choose it" in text
    pasted = _advice(text, r"input_shape=\{'x': \(1, 4\)\}")
    pytester.makepyfile(test_seeded=body.format(model=MODEL, shape=", " + pasted))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_yaml_entry_takes_the_shape_of_its_npy_files(pytester, dyn_model):
    np.save(pytester.path / "x.npy", np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
    pytester.path.joinpath("accuracy_dyn.yaml").write_text(
        f"models:\n  - name: files\n    model: {MODEL}\n    inputs: {{x: x.npy}}\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_yaml_advice_runs_pasted_into_the_entry(pytester, dyn_model):
    suite = pytester.path / "accuracy_dyn.yaml"
    entry = f"models:\n  - name: seeded\n    model: {MODEL}\n    inputs: {{seed: 0}}\n"
    suite.write_text(entry)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    assert "input_shape={" not in text and "(...)" not in text
    pasted = _advice(text, r"input_shape: \{x: \[1, 4\]\}")
    suite.write_text(entry + f"    {pasted}\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_converted_model_before_a_run_says_how_to_convert_now(pytester, dyn_model):
    pytester.makepyfile(test_early=f"""
        def test_early(ascend_model):
            ascend_model("{MODEL}").converted
    """)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines(["*'dyn' is converted at its first run(inputs), at the shapes of "
                              "those inputs; to convert it before, give ascend_model its "
                              "input_shape: *input_shape={'x': (1, 4)}"])
