"""A passing check's report names the model's outputs beside the ops that make them. IMG.LY's
ISNet (audit 35 F6) makes its 12 outputs (``output``, ``1890``, ...) with its float16
converter's Casts (``graph_output_cast0`` ...): a failure's ``model outputs:`` line maps them,
but a passing check's report.html and compare.json never named ``output`` or ``1890``, so a
reader could not find how the matte did. Here the output ``y`` is made by the Cast
``to_float``."""
import json

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

TEST = '''
from pytest_ascend_accuracy import accuracy, Mode{imports}


@accuracy(threshold=0.99, per_op={{"sigmoid": {{"max_abs": {bound}}}}}{modes})
def test_model(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/{name}", seed=0)
    golden = golden_dump("models/{name}", inputs)
    check_accuracy(ascend_model("models/{name}").run(inputs, dump=True), golden)
'''


def half_conv(path, half=True):
    """x (float32) -> Cast to float16 -> Conv (float16 weights) -> Sigmoid -> Cast to float32;
    without ``half``, its float32 export (the same weights in float32, no Casts)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w = (rng.standard_normal((4, 8, 3, 3)) * 0.5).astype(np.float16)
    b = (rng.standard_normal(4) * 0.1).astype(np.float16)
    dtype = np.float16 if half else np.float32
    nodes = [helper.make_node("Conv", ["xh" if half else "x", "W", "B"], ["c"], name="conv",
                              pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["c"], ["s" if half else "y"], name="sigmoid")]
    if half:
        nodes = ([helper.make_node("Cast", ["x"], ["xh"], name="to_half", to=TensorProto.FLOAT16)]
                 + nodes + [helper.make_node("Cast", ["s"], ["y"], name="to_float",
                                             to=TensorProto.FLOAT)])
    graph = helper.make_graph(
        nodes, "halfconv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 16, 16])],
        [numpy_helper.from_array(w.astype(dtype), "W"),
         numpy_helper.from_array(b.astype(dtype), "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def _run(pytester, name="half_conv.onnx", bound="1e-05", modes="", imports="", *args):
    pytester.makepyfile(test_model=TEST.format(name=name, bound=bound, modes=modes,
                                               imports=imports))
    return pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly", *args)


def _models(pytester):
    (pytester.path / "models").mkdir()
    half_conv(pytester.path / "models" / "half_conv.onnx")
    half_conv(pytester.path / "models" / "conv32.onnx", half=False)


def test_a_passing_reports_html_and_json_name_the_model_outputs(pytester):
    _models(pytester)
    run = _run(pytester, "half_conv.onnx", "0.01", "", "", "--accuracy-report=rep")
    run.assert_outcomes(passed=1)
    folder, = [p for p in (pytester.path / "rep").iterdir() if p.is_dir()]
    page = (folder / "report.html").read_text()
    line = page[page.index('<p id="model-outputs">'):]
    line = line[:line.index("</p>")]
    assert line.startswith('<p id="model-outputs">model outputs: <a href="#r'), line
    assert '">y</a> (op to_float; cosine 1.000000; rel_l2 ' in line, line
    assert "to_float output:0 = model output y" in page  # its table row's golden cell
    data = json.loads((folder / "compare.json").read_text())
    outputs = data["model_outputs"]
    assert [(o["output"], o["op"], o["slot"]) for o in outputs] == [("y", "to_float",
                                                                     "output:0")], outputs
    assert outputs[0]["cosine"] > 0.999 and outputs[0]["max_abs"] < 0.01, outputs


def test_a_failing_output_says_fails_with_its_reason_in_report_html_and_compare_json(pytester):
    """Audit 36 B F5: the page listed a failing output with its figures only ("cosine
    1.000000" for a one-element output failing by its relative error), and compare.json's
    model_outputs held no verdict."""
    _models(pytester)
    run = _run(pytester, "conv32.onnx", "1e-09", "", "", "--accuracy-report=rep")
    run.assert_outcomes(failed=1)
    folder, = [p for p in (pytester.path / "rep").iterdir() if p.is_dir()]
    page = (folder / "report.html").read_text()
    line = page[page.index('<p id="model-outputs">'):]
    line = line[:line.index("</p>")]
    assert '">y</a> (op convsigmoid; cosine ' in line, line
    assert ') <strong class="fail">FAILS</strong>: max_abs ' in line, line
    assert "fails max_abs &lt;= 1e-09" in line, line
    (out,) = json.loads((folder / "compare.json").read_text())["model_outputs"]
    assert out["passed"] is False and "fails max_abs <= 1e-09" in out["reason"], out
    run = _run(pytester, "conv32.onnx", "0.01", "", "", "--accuracy-report=rep2")
    run.assert_outcomes(passed=1)
    folder, = [p for p in (pytester.path / "rep2").iterdir() if p.is_dir()]
    assert "FAILS" not in (folder / "report.html").read_text()
    (out,) = json.loads((folder / "compare.json").read_text())["model_outputs"]
    assert out["passed"] is True and out["reason"] is None


def test_an_ignored_output_is_neither_passed_nor_failed_in_compare_json():
    """Review RM: an output the check ignores (cosine -0.64) read ``passed: true``."""
    import numpy as np

    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.dump.model import DumpSet
    from pytest_ascend_accuracy.report.model_outputs import json_outputs

    g = np.linspace(-1, 1, 16).astype(np.float32)
    result = compare_dumps(DumpSet.from_arrays({"a": [g + 1], "out": [-g]}),
                           DumpSet.from_arrays({"a": [g], "out": [g]}), kl=False)
    result.meta.setdefault("golden", {})["output_tensors"] = {"y": ["out", 0]}
    (out,) = json_outputs(result, result.judge(0.99, ignore=["out"]))
    assert out["passed"] is None and out["reason"] == "ignored", out
