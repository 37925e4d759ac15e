"""`ascend-accuracy compare DUMP GOLDEN --om-json F` counts the golden ops the conversion folded
away as the plugin counts them, "folded at conversion", where the golden records no model (a
golden cache entry, T1's flow: a kept emulator dump, its golden cache entry and the om json
its compare.json names). T1 finding 5: a ConvNeXt dump read "45 unmatched (Identity_15, ...)"
where the plugin said "45 folded at conversion, 0 unmatched": the emulator's om json lists only
the ops that run; the conversion's plan.json beside it lists the folded ones, and the CLI did
not read it. A real ATC om json names a folded op as the origin of the Const that holds its
value (ATC 6.0 tdnn: dynamic_const_67614_276 -> Cast_311; docs/formats.md section 4), which
the CLI did not read either. Run as a user runs it (the console script's module)."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

FOLDED = ("coverage: 6 golden ops: 2 compared, 2 inside fused ops, 2 folded at conversion, "
          "0 unmatched; 0 actual ops unmatched")


def _model():
    """A weight read through an Identity (TorchScript's export of a shared weight: ConvNeXt's
    Identity_15 ...) and a Constant: both folded at conversion."""
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((8, 8)).astype(
        np.float32) / 3, "W")
    c = numpy_helper.from_array(np.full((8,), 0.5, np.float32), "c")
    nodes = [helper.make_node("Identity", ["W"], ["W_shared"], name="Identity_0"),
             helper.make_node("Constant", [], ["cst"], name="Constant_1", value=c),
             helper.make_node("MatMul", ["x", "W"], ["m1"], name="MatMul_2"),
             helper.make_node("MatMul", ["m1", "W_shared"], ["m2"], name="MatMul_3"),
             helper.make_node("Add", ["m2", "cst"], ["a"], name="Add_4"),
             helper.make_node("Relu", ["a"], ["y"], name="Relu_5")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [2, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])],
                              [w])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The emulator's dump of the model, the plugin's coverage line of it, the golden cache
    entry's folder and the conversion's om json."""
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    folder = tmp_path_factory.mktemp("om_json_folded")
    model = folder / "m.onnx"
    onnx.save(_model(), str(model))
    cache = Cache(folder / "cache")
    backend = EmulatorBackend(cache)
    inputs = make_inputs(model)
    converted = backend.convert(model, None)
    dump = backend.run(converted, inputs, dump_dir=folder / "dump")
    golden = golden_dump(model, inputs, cache=cache)
    plugin = compare_dumps(dump, golden).coverage.describe()  # as assert_accuracy counts them
    return {"dump": str(folder / "dump"), "golden": str(Path(golden.root).parent),
            "om_json": str(converted.om_json), "plugin": f"coverage: {plugin}"}


def _cli(*args):
    proc = subprocess.run([sys.executable, "-m", "pytest_ascend_accuracy.cli", *args],
                          capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def _coverage(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("coverage: "))


def test_compare_with_the_emulators_om_json_counts_folded_ops_as_the_plugin(run, tmp_path):
    assert run["plugin"] == FOLDED
    out_json = tmp_path / "c.json"
    code, out, err = _cli("compare", run["dump"], run["golden"], "--om-json", run["om_json"],
                          "--json", str(out_json))
    assert (code, err) == (0, "")
    assert _coverage(out) == FOLDED  # was "2 unmatched (Identity_0, Constant_1)"
    coverage = json.loads(out_json.read_text())["coverage"]
    assert (coverage["folded"], coverage["unmatched_golden"]) == (
        ["Identity_0", "Constant_1"], [])
    code, out, _ = _cli("judge", str(out_json))  # the saved result keeps the count
    assert code == 0 and _coverage(out) == FOLDED


def test_an_ignore_entry_naming_a_folded_op_gets_the_plugins_words_and_pasted_passes(run):
    """The refusal said "no op of the device run matches them"; its advice (remove it),
    applied, is the command without the entry, which passes."""
    argv = ["compare", run["dump"], run["golden"], "--om-json", run["om_json"]]
    code, out, err = _cli(*argv, "--ignore", "Identity_0")
    assert (code, out) == (2, "")
    assert err.strip() == (
        "ascend-accuracy: error: --ignore: ignore entry 'Identity_0' names only ops never "
        "compared here (Identity_0): folded at conversion: the converter computed them, the "
        "device never runs or dumps them; it would judge nothing, so remove it")
    assert _cli(*argv)[0] == 0


def _real_const(name: str, origin: str) -> dict:
    """A Const op as ATC 6.0 writes one (the tdnn om json's dynamic_const_67614_276): an empty
    original-names list, its output's origin naming the framework op it came from."""
    return {"name": name, "type": "Const", "id": 90, "input": [],
            "attr": [{"key": "_datadump_original_op_names",
                      "value": {"list": {"val_type": "VT_LIST_STRING"}}}],
            "output_desc": [{"dtype": "DT_FLOAT16", "layout": "ND", "device_type": "NPU",
                             "attr": [{"key": "_datadump_origin_name", "value": {"s": origin}},
                                      {"key": "_datadump_origin_output_index", "value": {"i": 0}},
                                      {"key": "origin_format", "value": {"s": "ND"}}]}]}


def test_a_const_of_a_real_om_json_names_the_op_folded_into_it(run, tmp_path):
    """An om json without the emulator's plan beside it (copied alone, as a real ATC one is):
    the Const whose origin names Identity_0, which no running op names, counts it folded; a
    Const naming a running op (MatMul_2's weight: tdnn's BatchNormalization_365 beside its
    BNInferenceD) does not; Constant_1, which no Const names, is folded as a ``Constant`` op
    the golden cache entry lists (``constant_nodes``: a device runs no Constant, audit 33)."""
    doc = json.loads(Path(run["om_json"]).read_text())
    doc["graph"][0]["op"] += [_real_const("dynamic_const_1_0", "Identity_0"),
                              _real_const("dynamic_const_1_1", "MatMul_2")]
    alone = tmp_path / "model.json"
    alone.write_text(json.dumps(doc))
    code, out, err = _cli("compare", run["dump"], run["golden"], "--om-json", str(alone))
    assert (code, err) == (0, "")
    assert _coverage(out) == (
        "coverage: 6 golden ops: 2 compared, 2 inside fused ops, 2 folded at conversion, "
        "0 unmatched; 0 actual ops unmatched")


def test_an_emulator_om_json_copied_without_its_plan_names_no_folded_op(run, tmp_path):
    """The om json alone says nothing of folding: Identity_0 stays unmatched, without a crash
    (Constant_1 is folded as the golden entry's ``constant_nodes`` lists it)."""
    alone = tmp_path / "model.json"
    shutil.copy(run["om_json"], alone)
    code, out, err = _cli("compare", run["dump"], run["golden"], "--om-json", str(alone))
    assert (code, err) == (0, "")
    assert _coverage(out) == ("coverage: 6 golden ops: 2 compared, 2 inside fused ops, "
                              "1 folded at conversion, 1 unmatched (Identity_0); 0 actual ops "
                              "unmatched")
