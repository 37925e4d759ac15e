"""``ascend-accuracy compare DUMP GOLDEN`` on a stored golden of a model with dynamic inputs,
written from arrays (``golden_dump(model, inputs, path=...)``: its golden.json records
``"input_shape": {}``): the ops the conversion folded were silently counted unmatched
(silero_vad_16k_op15: "151 unmatched", 142 of them folded as the plugin counts them, H110). It
says they cannot be worked out and what to do; done (the golden stored with its op inputs),
compare reads the shapes from them and counts the folded ops as the plugin does."""
import json
import re

import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy.cli import main
from pytest_ascend_accuracy.testing.models import if_model

pytest.importorskip("onnxruntime")

TEST = """
import numpy as np
from pytest_ascend_accuracy import accuracy

@accuracy(threshold=0.99)
def test_store(ascend_model, golden_dump, check_accuracy):
    inputs = {"x": np.load("x.npy")}
    golden = golden_dump("m.onnx", inputs, path="golden")
    check_accuracy(ascend_model("m.onnx").run(inputs), golden)
"""


def _coverage(capsys):
    main_out = capsys.readouterr()
    line = next(x for x in main_out.out.splitlines() if x.startswith("coverage: "))
    return line, main_out.err


def test_folded_ops_of_a_golden_stored_from_arrays(pytester, capsys, monkeypatch):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    model = pytester.path / "m.onnx"
    onnx.save(if_model(), str(model))  # x: [batch, 4]; shape, batch, is_one fold at [1, 4]
    x = np.linspace(-1, 1, 4, dtype=np.float32).reshape(1, 4)
    np.save(pytester.path / "x.npy", x)
    pytester.makepyfile(test_store=TEST)
    pytester.runpytest("-p", "no:cacheprovider")  # writes the golden (a missing one fails)
    assert json.loads((pytester.path / "golden" / "golden.json").read_text())["input_shape"] == {}
    backend = EmulatorBackend(Cache(pytester.path / "cache"))
    converted = backend.convert(model, None, input_shape={"x": [1, 4]})
    dump = str(backend.run(converted, {"x": x}, dump_dir=pytester.path / "dump").root)
    monkeypatch.chdir(pytester.path)
    capsys.readouterr()

    main(["compare", dump, "golden"])
    coverage, err = _coverage(capsys)
    assert "folded at conversion" not in coverage
    assert ("ascend-accuracy: warning: which golden ops the conversion folded away cannot be "
            "worked out (they are counted unmatched, where the plugin counts them folded at "
            "conversion): model 'm.onnx': input 'x' dimension 0 ('batch') is dynamic ([?, 4]); "
            "golden's golden.json records no input shape and the golden holds no op inputs to "
            "read one from. Store it with its op inputs: run the test that stores it with "
            "--accuracy-regen-all --accuracy-store-inputs") in err
    advice = re.search(r"run the test that stores it with (.*)$", err.strip()).group(1)

    pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report", "rep",
                       *advice.split()).assert_outcomes(passed=1)  # as the warning says
    main(["compare", dump, "golden"])
    coverage, err = _coverage(capsys)
    assert "warning" not in err
    plugin = json.loads(next((pytester.path / "rep").rglob("compare.json")).read_text())
    folded = len(plugin["coverage"]["folded"])
    assert folded == 3 and f", {folded} folded at conversion" in coverage, coverage
