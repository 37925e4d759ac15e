"""The odd-graphs and transformer trials' refusals as a user meets them, each fix applied as
printed (pytest_ascend_accuracy/testing/odd_graph_models.py builds the trials' models):

* an IR 3 model's weight W given in ``inputs`` (a test's, a YAML entry's): said to be an
  initializer the model also lists as an input, taken as a constant; left out, the test passes;
* two nodes named 'dup': refused as ATC refuses them (E19009), with the renames; applied to the
  file, the test passes, and a device wrong in the renamed op is named by the file's name;
* ``keep_dtype(["OpType::Trilu"])`` where every Trilu is folded: refused as naming it is;
  removed, the test passes."""
import re

import numpy as np
import onnx

from pytest_ascend_accuracy.testing import odd_graph_models

TEST = """
import numpy as np
from pytest_ascend_accuracy import accuracy, keep_dtype


@accuracy(threshold=0.95{modes})
def test_model(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = {inputs}
    check_accuracy(ascend_model("{model}").run(inputs), golden_dump("{model}", inputs))
"""

#: a device wrong in one op (the trial's conftest): T42_FAULT=op:NAME:effect:amount
FAULT_CONFTEST = """
import os
from pytest_ascend_accuracy import backends
from pytest_ascend_accuracy.backends.emulator.faults import Fault

_MAKE = backends.make_backend
FAULT = os.environ.get("T42_FAULT")


def _faulted(*args, **kwargs):
    kind, rest = FAULT.split(":", 1)
    name, effect, amount = rest.rsplit(":", 2)
    return _MAKE(*args, faults=[Fault(kind, name, effect, float(amount))], **kwargs)


def pytest_configure(config):
    if FAULT:
        backends.make_backend = _faulted


def pytest_unconfigure(config):
    backends.make_backend = _MAKE
"""


def _test(pytester, model, inputs, modes=""):
    pytester.makepyfile(test_model=TEST.format(model=model, inputs=inputs, modes=modes))


def test_an_ir3_weight_given_as_an_input_is_refused_as_what_it_is(pytester):
    onnx.save(odd_graph_models.ir3_model(), str(pytester.path / "ir3.onnx"))
    _test(pytester, "ir3.onnx", '{"x": np.ones((2, 8), np.float32), '
                                '"W": np.eye(8, dtype=np.float32)}')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*configuration error: inputs of 'ir3': 'W' is an initializer "
                                 "the model also lists as a graph input (as IR version < 4 "
                                 "exports list every weight): it is taken as a constant, as ATC "
                                 "takes it, so it is not fed; leave it out; the inputs: x"])
    result.stdout.no_fnmatch_line("*no model input named*")
    _test(pytester, "ir3.onnx", '{"x": np.ones((2, 8), np.float32)}')  # left out, as it says
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_yaml_entry_giving_the_weight_is_refused_alike(pytester):
    onnx.save(odd_graph_models.ir3_model(), str(pytester.path / "ir3.onnx"))
    np.save(str(pytester.path / "x.npy"), np.ones((2, 8), np.float32))
    np.save(str(pytester.path / "w.npy"), np.eye(8, dtype=np.float32))
    entry = "models:\n  - model: ir3.onnx\n    threshold: 0.95\n    inputs: {x: x.npy%s}\n"
    pytester.makefile(".yaml", accuracy_ir3=entry % ", W: w.npy")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert "'W' is an initializer the model also lists as a graph input" in result.stdout.str()
    assert "no model input named" not in result.stdout.str()
    pytester.makefile(".yaml", accuracy_ir3=entry % "")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_two_nodes_of_one_name_are_refused_and_the_printed_renames_convert(pytester):
    path = pytester.path / "dups.onnx"
    onnx.save(odd_graph_models.dup_model(), str(path))
    _test(pytester, "dups.onnx", 'accuracy_inputs("dups.onnx", seed=0)')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "*configuration error: *dups.onnx: model 'dups' has ops that share a name: 'dup' names "
        "node[[]1[]] (Relu) and node[[]2[]] (Sigmoid). ATC's ONNX parser refuses it (its "
        "pre-check stops with E19009 \"Op [[]dup[]] has a name conflict in the graph.\"), and "
        "onnxruntime refuses to load it too*"])
    assert "dup_1 (#" not in out  # no failure names an op the file does not have
    renames = re.search(r"rename on the loaded model m and save it \(([^)]*)\)", out).group(1)
    assert renames == "m.graph.node[2].name = 'dup_1'"
    m = onnx.load(str(path))
    exec(renames, {"m": m})  # as printed
    onnx.save(m, str(path))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_device_wrong_in_the_renamed_op_is_named_as_the_file_names_it(pytester, monkeypatch):
    m = odd_graph_models.dup_model()
    exec("m.graph.node[2].name = 'dup_1'", {"m": m})  # the refusal's rename, as printed
    onnx.save(m, str(pytester.path / "dups.onnx"))
    _test(pytester, "dups.onnx", 'accuracy_inputs("dups.onnx", seed=0)')
    pytester.makeconftest(FAULT_CONFTEST)
    monkeypatch.setenv("T42_FAULT", "op:dup_1:scale:-1")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*first failure in graph order: dup_1 (#*",
                                 "  dump name      dup_1"])
    assert "dup_1" in [n.name for n in onnx.load(str(pytester.path / "dups.onnx")).graph.node]


def test_keep_dtype_of_a_type_whose_every_op_is_folded_is_refused(pytester):
    onnx.save(odd_graph_models.trilu_model(), str(pytester.path / "trilu_folded.onnx"))
    inputs = 'accuracy_inputs("trilu_folded.onnx", seed=0)'
    _test(pytester, "trilu_folded.onnx", inputs, ', modes=[keep_dtype(["OpType::Trilu"])]')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*configuration error: keep_dtype: keep_dtype entry 'OpType::Trilu' of model "
        "'trilu_folded' names only ops folded at conversion (its Trilu ops: 'causal_mask'; ATC "
        "computes them from constants and static shapes; they never run on the device), so "
        "keeping it in the original dtype changes nothing: remove it"])
    _test(pytester, "trilu_folded.onnx", inputs)  # removed, as it says
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
