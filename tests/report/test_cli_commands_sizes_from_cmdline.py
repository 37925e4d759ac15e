"""``judge`` of a plugin report whose golden tells no input sizes but whose dump's ATC command
line does: the diagnose command carried ``--input-shape`` from the command line and then said
"the sizes the golden ran at are not known ... add --input-shape", and nothing of the inputs;
pasted, it ran seed-0 inputs and said PASSES of a check that failed on others (nudenet 320n,
audit H110 finding 8). It now says the command runs seeded random inputs and how to give the
check's own (``--inputs NAME=FILE.npy``), and says nothing where the seed-0 inputs at those
sizes are the golden's."""
import json
import re
import shlex

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

from pytest_ascend_accuracy.cli import main

pytest.importorskip("onnxruntime")

NOT_KNOWN = "the sizes the golden ran at are not known"


def reshaped():
    """x [N] reshaped to [2, -1] (no golden tensor names N, and N = 1 does not fit), then
    scaled out of float16's range and back: values past 0.66 overflow."""
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "to"], ["r"], name="rs"),
         helper.make_node("Mul", ["r", "big"], ["m"], name="scale/Mul"),
         helper.make_node("Mul", ["m", "small"], ["y"], name="unscale/Mul")], "m",
        [helper.make_tensor_value_info("x", T.FLOAT, ["N"])],
        [helper.make_tensor_value_info("y", T.FLOAT, None)],
        initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in {
            "to": np.array([2, -1], np.int64), "big": np.array(1e5, np.float32),
            "small": np.array(1e-5, np.float32)}.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.99)
def test_r(ascend_model, golden_dump, check_accuracy):
    inputs = {INPUTS}
    np.save("x.npy", inputs["x"])
    check_accuracy(ascend_model("m.onnx").run(inputs), golden_dump("m.onnx", inputs))
'''


def _judged(pytester, capsys, inputs: str):
    onnx.save(reshaped(), str(pytester.path / "m.onnx"))
    pytester.makepyfile(test_r=TEST.replace("{INPUTS}", inputs))
    pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep").assert_outcomes(failed=1)
    (saved,) = pytester.path.glob("rep/*/compare.json")
    meta = json.loads(saved.read_text())["meta"]
    assert "--input_shape=x:12" in meta["actual"]["atc_cmdline"]
    assert meta["golden"]["golden_source"]["input_shape"] == {}  # the golden tells no sizes
    capsys.readouterr()
    assert main(["judge", str(saved)]) == 1
    out = capsys.readouterr().out
    found = re.search(r"(ascend-accuracy diagnose [^()]*?)( \((?!or )[^()]*\))?"
                      r"(?: \(or --mode [^()]*\))? passes with exit status 0", out)
    assert found, out
    return found.group(1), found.group(2) or ""


def test_sizes_from_the_command_line_are_not_said_unknown_and_inputs_are(
        pytester, capsys, tmp_path, monkeypatch):
    command, said = _judged(pytester, capsys,
                            '{"x": np.linspace(1.0, 2.0, 12, dtype=np.float32)}')
    assert " --input-shape x:12" in command
    assert NOT_KNOWN not in said
    assert said == (" (with the inputs the golden was made from, which it records only the "
                    "digest of: add --inputs x=FILE.npy; without them diagnose runs seeded "
                    "random inputs)")
    monkeypatch.chdir(pytester.path)
    cache = ["--cache-dir", str(tmp_path / "dcache")]
    assert main(shlex.split(command)[1:] + cache) == 0  # as printed: "passes with exit 0"
    seeded = capsys.readouterr().out
    assert "PASSES" in seeded
    # the inputs it names, given: the check's own, on which the default conversion fails
    assert main(shlex.split(command)[1:] + ["--inputs", "x=x.npy", "--mode", "default"]
                + cache) == 0
    given = capsys.readouterr().out
    assert "RESTORED" in given and "step 1 default [default]: FAILED" in given, given


def test_seeded_inputs_at_the_command_lines_sizes_need_no_note(pytester, capsys, tmp_path,
                                                               monkeypatch):
    command, said = _judged(pytester, capsys,
                            'make_inputs("m.onnx", seed=0, input_shape={"x": (12,)})')
    assert " --input-shape x:12" in command
    assert said == ""  # diagnose's own seed-0 inputs at x:12 are the check's
    monkeypatch.chdir(pytester.path)
    assert main(shlex.split(command)[1:] + ["--cache-dir", str(tmp_path / "dcache")]) == 0
    assert "PASSES" in capsys.readouterr().out
