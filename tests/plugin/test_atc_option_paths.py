"""The ATC option check through the plugin, the advice pasted: a neutral option's value
(``log="ERROR"`` -> ``log="error"``), one option twice in a marker's mode or a YAML mode's
extra (merged without a word before), a gear option (refused with no way forward before: now
the README's paragraph, pasted, checks each gear), and ``diagnose --mode`` with an extra
option whose printed fix runs pasted into a test."""
import re
import subprocess
import sys
from pathlib import Path

import onnx
from onnx import TensorProto, helper

from pytest_ascend_accuracy.testing import models as tiny_models

README = Path(__file__).resolve().parents[2] / "README.md"

TEST = """
from pytest_ascend_accuracy import accuracy, Mode


@accuracy(threshold=0.99{modes})
def test_it(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/mlp.onnx", seed=0)
    om = ascend_model("models/mlp.onnx"{options})
    check_accuracy(om.run(inputs), golden_dump("models/mlp.onnx", inputs))
"""


def _mlp(pytester):
    pytester.mkdir("models")
    onnx.save(tiny_models.passing_mlp(), str(pytester.path / "models" / "mlp.onnx"))


def test_a_neutral_options_value_is_refused_and_the_closest_pasted_passes(pytester):
    _mlp(pytester)
    pytester.makepyfile(test_opt=TEST.format(modes="", options=', log="ERROR"'))
    refused = pytester.runpytest("-q", "-p", "no:cacheprovider")
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines(["*configuration error: *ascend_model: ATC option log=ERROR: "
                                  "ATC takes debug, info, warning, error, null, default (it "
                                  "stops with E10010 at any other value); closest: log=error*"])
    closest = re.search(r"closest: (log=\w+)", refused.stdout.str()).group(1)
    name, _, value = closest.partition("=")
    pytester.makepyfile(test_opt=TEST.format(modes="", options=f', {name}="{value}"'))
    pytester.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_markers_mode_with_one_option_twice_is_refused_naming_both(pytester):
    _mlp(pytester)
    pytester.makepyfile(test_opt=TEST.format(
        modes=', modes=[Mode(extra=(("log", "debug"), ("--log", "info")))]', options=""))
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*Mode(extra=...): ATC option log given twice (log=debug and "
                                 "log=info): ATC would take one of them; keep the one you mean*"])


def test_a_yaml_modes_extra_with_one_option_twice_is_refused_naming_both(pytester):
    _mlp(pytester)
    pytester.makefile(".yaml", accuracy_twice="models:\n  - model: models/mlp.onnx\n"
                                              "    modes: [{extra: {log: debug, --log: info}}]\n")
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*accuracy_twice.yaml: models[[]0].modes[[]0].extra: ATC "
                                 "option log given twice (log=debug and log=info)*"])


def _gear_model():
    """x [N, 3, 4, 4] -> Relu -> * 0.5: a model deployed with batch gears."""
    dims = ["N", 3, 4, 4]
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("Mul", ["r", "k"], ["y"], name="scale")], "gears",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)],
        [helper.make_tensor("k", TensorProto.FLOAT, [1], [0.5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def test_a_gear_option_is_refused_and_the_readme_paragraph_pasted_checks_each_gear(pytester):
    pytester.mkdir("models")
    onnx.save(_gear_model(), str(pytester.path / "models" / "det.onnx"))
    pytester.makepyfile(test_gears="""
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.99)
def test_gears(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    om = ascend_model("models/det.onnx", dynamic_batch_size="1,4,8")
""")
    refused = pytester.runpytest("-q", "-p", "no:cacheprovider")
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines(["*ascend_model: ATC option dynamic_batch_size=1,4,8 builds one "
                                  ".om for several shapes (gears)*leave the option out and check "
                                  "each gear's shape*(README: \"A model deployed with gears\")*"])
    readme = README.read_text(encoding="utf-8")
    section = readme[readme.index("**A model deployed with gears**"):]
    snippet = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    pasted = snippet.replace("224, 224", "4, 4")  # this model's H and W
    pytester.makepyfile(test_gears=pasted)
    ran = pytester.runpytest("-q", "-p", "no:cacheprovider", "-rA")
    ran.assert_outcomes(passed=3)
    ran.stdout.fnmatch_lines(["PASSED test_gears.py::test_each_gear[[]1*",
                              "PASSED test_gears.py::test_each_gear[[]4*",
                              "PASSED test_gears.py::test_each_gear[[]8*"])


def test_diagnoses_fix_for_a_mode_with_a_neutral_extra_runs_pasted(pytester):
    pytester.mkdir("models")
    onnx.save(tiny_models.overflow_model(), str(pytester.path / "models" / "overflow.onnx"))
    out = subprocess.run([sys.executable, "-m", "pytest_ascend_accuracy.cli", "diagnose",
                          "models/overflow.onnx", "--mode", "{extra: {log: info}}",
                          "--cache-dir", "c"], cwd=pytester.path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    line = re.search(r"^  in a test: modes=\[(.*)\] \(from pytest_ascend_accuracy import "
                     r"(.*?)\); in a YAML suite: modes: (.*)$", out.stdout, re.M)
    assert line, out.stdout
    expr, names, yaml_modes = line.groups()
    pytester.makepyfile(test_fixed=f"""
from pytest_ascend_accuracy import accuracy, {names}


@accuracy(threshold=0.99, modes=[{expr}])
def test_it(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/overflow.onnx", seed=0)
    om = ascend_model("models/overflow.onnx")
    check_accuracy(om.run(inputs), golden_dump("models/overflow.onnx", inputs))
""")
    pytester.makefile(".yaml", accuracy_fixed=f"models:\n  - model: models/overflow.onnx\n"
                                              f"    threshold: 0.99\n    modes: {yaml_modes}\n")
    ran = pytester.runpytest("-q", "-p", "no:cacheprovider", "-rA")
    ran.assert_outcomes(passed=2)
