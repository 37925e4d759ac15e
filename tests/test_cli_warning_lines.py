"""The console script prints a warning as ``ascend-accuracy: AtcQuantWarning: ...``: before,
with no user frame on the stack, Python named the script's own line and printed its source,
``.../bin/ascend-accuracy:8: AtcResizeWarning: ...`` then ``  sys.exit(main())`` (audit 35)."""
import subprocess
import sys
import warnings
from importlib.metadata import entry_points

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from pytest_ascend_accuracy.cli import console_main, main  # noqa: E402
from pytest_ascend_accuracy.cli.warning_lines import plain_warnings, warning_line  # noqa: E402


def _quantised(path):
    """x -> QuantizeLinear -> DequantizeLinear -> Relu: no op ATC converts (AtcQuantWarning)."""
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q"),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["dq"], name="dq"),
             helper.make_node("Relu", ["dq"], ["y"], name="relu")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
        [numpy_helper.from_array(np.array(0.1, np.float32), "s"),
         numpy_helper.from_array(np.array(128, np.uint8), "z")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                ir_version=8), str(path))


def test_the_console_script_prints_a_warning_as_one_plain_line(tmp_path):
    _quantised(tmp_path / "q.onnx")
    done = subprocess.run([sys.executable, "-m", "pytest_ascend_accuracy.cli", "diagnose",
                           "q.onnx", "--out", "d"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert any(line.startswith("ascend-accuracy: AtcQuantWarning: ONNX quantisation ops")
               for line in lines), done.stderr
    assert "sys.exit(" not in done.stderr and "Warning: " not in done.stderr.replace(
        "ascend-accuracy: AtcQuantWarning: ", "")


def test_the_installed_script_is_the_one_that_prints_so():
    (script,) = [ep for ep in entry_points(group="console_scripts") if ep.name == "ascend-accuracy"]
    assert script.value == "pytest_ascend_accuracy.cli:console_main"
    assert script.load() is console_main


def test_main_called_in_a_process_leaves_warnings_to_it(tmp_path, monkeypatch):
    """A test calling ``main()`` records the warning as pytest does (its summary names it)."""
    _quantised(tmp_path / "q.onnx")
    monkeypatch.chdir(tmp_path)
    with pytest.warns(UserWarning, match="ONNX quantisation ops"):
        assert main(["diagnose", "q.onnx", "--out", "d"]) == 0


def test_the_plain_line_is_written_and_showwarning_given_back(capsys):
    before = warnings.showwarning
    with plain_warnings():
        warnings.showwarning("a thing", UserWarning, "/x/bin/ascend-accuracy", 8)
    assert warnings.showwarning is before
    assert capsys.readouterr().err == warning_line("a thing", UserWarning)
    assert warning_line("a thing", UserWarning) == "ascend-accuracy: UserWarning: a thing\n"
