"""``--accuracy-diagnose`` on a test of a QDQ model, as a user sees it (audit 35: Smart Turn
v3.2's diagnosis wrote an atc_args.txt and a keep_dtype.cfg of QuantizeLinear/DequantizeLinear
names for a model ATC does not convert, and said nothing of it): the failure's diagnosis line
says ATC does not convert the model as it is, that the fix was found on the emulator's float16
model of the quantised graph, and to check the AMCT-adapted model on an NPU; the folder holds
atc_note.txt in place of the ATC files, and the fix, pasted, passes on the emulator."""

import pytest

pytest.importorskip("onnxruntime")

from tests.test_triage_quant_note import NOTE, qdq_scale_up  # noqa: E402
from pasted_fix_lines import FIX  # noqa: E402

TEST = '''
from pytest_ascend_accuracy import accuracy{imports}


@accuracy({modes})
def test_model(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/qdq.onnx", seed=0)
    golden = golden_dump("models/qdq.onnx", inputs)
    check_accuracy(ascend_model("models/qdq.onnx").run(inputs), golden)
'''


def test_the_diagnosis_of_a_qdq_model_says_atc_does_not_convert_it(pytester):
    (pytester.path / "models").mkdir()
    qdq_scale_up(pytester.path / "models" / "qdq.onnx")
    pytester.makepyfile(test_model=TEST.format(imports="", modes=""))
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose",
                             "-W", "ignore:ONNX quantisation ops")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    line = next(ln for ln in text.splitlines() if "diagnosis (--accuracy-diagnose" in ln)
    assert NOTE in line and "(QuantizeLinear, DequantizeLinear)" in line, line
    assert ("this fix was found on the emulator's float16 model of the quantised graph" in line
            and line.endswith("check the deployed (AMCT-adapted) model on an NPU")), line
    folder = next(pytester.path.rglob("diagnosis/atc_note.txt")).parent
    assert sorted(p.name for p in folder.iterdir()) == [
        "atc_note.txt", "diagnosis.html", "diagnosis.json", "diagnosis.txt"]
    assert "fix files written to" in text and "(atc_note.txt)" in text
    assert "run atc from" not in text
    # the emulator fix, pasted, passes
    expr, _, imports = FIX.search(text).groups()
    pytester.makepyfile(test_model=TEST.format(imports=", " + imports, modes=f"modes=[{expr}]"))
    pytester.runpytest("-p", "no:cacheprovider", "-W", "ignore:ONNX quantisation ops"
                       ).assert_outcomes(passed=1)
