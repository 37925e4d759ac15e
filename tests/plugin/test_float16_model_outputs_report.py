"""A passing check's report names the model's outputs beside the ops that make them. IMG.LY's
ISNet (audit 35 F6) makes its 12 outputs (``output``, ``1890``, ...) with its float16
converter's Casts (``graph_output_cast0`` ...): a failure's ``model outputs:`` line maps them,
but a passing check's report.html and compare.json never named ``output`` or ``1890``, so a
reader could not find how the matte did. Here the output ``y`` is made by the Cast
``to_float``."""
import json

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from tests.plugin.test_float16_model_rounding import _models, _run  # noqa: E402


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
