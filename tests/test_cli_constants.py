"""`ascend-accuracy compare` counts a golden op the conversion folded away (an ONNX Constant:
the device never runs or dumps it) as the plugin does, "folded at conversion", in its text,
its JSON and the coverage the CSV rows stand beside; it listed them as unmatched golden ops."""
import csv
import json

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.testing.emulated_pair import emulated_pair


def _model(add: float = 0.5):
    c = numpy_helper.from_array(np.full((8,), add, np.float32), "c")
    nodes = [helper.make_node("Constant", [], ["cst"], name="Constant_0", value=c),
             helper.make_node("Add", ["x", "cst"], ["a"], name="Add_1"),
             helper.make_node("Relu", ["a"], ["y"], name="Relu_2")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [2, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return emulated_pair(tmp_path_factory.mktemp("constants"), _model())


FOLDED_LINE = ("coverage: 3 golden ops: 2 compared, 0 inside fused ops, 1 folded at conversion, "
               "0 unmatched; 0 actual ops unmatched")


def test_compare_counts_a_folded_constant_as_the_plugin_does(pair, tmp_path, capsys):
    out_json, out_csv = tmp_path / "c.json", tmp_path / "c.csv"
    assert cli.main(pair.compare_argv() + ["--json", str(out_json), "--csv", str(out_csv)]) == 0
    assert FOLDED_LINE in capsys.readouterr().out.splitlines()
    coverage = json.loads(out_json.read_text())["coverage"]
    assert (coverage["folded"], coverage["unmatched_golden"]) == (["Constant_0"], [])
    with open(out_csv, newline="") as fh:  # a row per compared tensor: none for the constant
        assert [r["NPUDump"] for r in csv.DictReader(fh)] == ["Add_1", "Relu_2"]
    assert cli.main(["judge", str(out_json)]) == 0  # the saved result keeps the count
    assert FOLDED_LINE in capsys.readouterr().out.splitlines()


def test_a_golden_whose_model_changed_says_nothing_of_folding(tmp_path, capsys):
    """The golden's record names its model by sha256: another model's folding is not taken for
    the golden's (the constant stays unmatched, as for a golden of another tool). Compared
    without the om json: the emulator's, in its conversion's folder, names the conversion's
    folded ops itself (tests/test_cli_om_json_folded.py)."""
    p = emulated_pair(tmp_path, _model())
    import onnx

    onnx.save(_model(add=0.25), str(p.model))  # the model the golden names, changed since
    assert cli.main(p.compare_argv()[:3]) == 0
    assert ("1 unmatched (Constant_0)" in capsys.readouterr().out)


def test_the_plugins_message_for_an_ignore_entry_naming_a_folded_op(pair, capsys):
    """--ignore Constant_0 said "is not an op of the dumps", though the golden holds it."""
    assert cli.main(pair.compare_argv() + ["--ignore", "Constant_0"]) == 2
    assert capsys.readouterr().err.strip() == (
        "ascend-accuracy: error: --ignore: ignore entry 'Constant_0' names only ops never "
        "compared here (Constant_0): folded at conversion: the converter computed them, the "
        "device never runs or dumps them; it would judge nothing, so remove it")
