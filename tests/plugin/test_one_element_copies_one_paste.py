"""A one-element output copied by Identity nodes (silero_vad.onnx's speech probability: If_0's
output, copied by Introduce_0_id0) fails by the same relative error at each copy. Its hint gave
the per_op entry for the first op alone, and only as Python and as a command-line flag (an
audit: in a YAML suite, no YAML form); pasted, the check failed at the copy with the same hint
for it. Now one hint names every op holding the value, with the check's own entries, as
Python, YAML and flags, and one paste passes, in a test and in a YAML suite."""
import re

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy

X = np.array([[1.0015]], np.float32)


@accuracy(threshold=0.99, per_op={per_op})
def test_offset(ascend_model, golden_dump, check_accuracy):
    actual = ascend_model("offset.onnx").run({{"x": X}})
    check_accuracy(actual, golden_dump("offset.onnx", {{"x": X}}))
'''

SUITE = '''
models:
  - model: offset.onnx
    inputs: {{x: x.npy}}
    threshold: 0.99
    per_op: {per_op}
'''


def _offset_model(path):
    """x - 1 (x = 1.0015: float16 makes it 1.00195, a relative error of 0.30 at cosine 1),
    copied twice by Identity nodes, the second an output; x + x the other output, which the
    checks judge by an entry of their own."""
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 1]) for n in ("x", "y", "z")]
    graph = helper.make_graph(
        [helper.make_node("Sub", ["x", "one"], ["d"], name="offset"),
         helper.make_node("Identity", ["d"], ["c0"], name="copy_0"),
         helper.make_node("Identity", ["c0"], ["y"], name="copy_1"),
         helper.make_node("Add", ["x", "x"], ["z"], name="double")],
        "offset", vi[:1], vi[1:], [numpy_helper.from_array(np.ones((1, 1), np.float32), "one")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


FIX = re.compile(r"per_op=(\{[^}]*\}) in a test \(YAML: per_op: (\{[^}]*\})\), (--per-op .+?) on "
                 r"the command line")


def test_one_paste_of_the_hint_passes_every_copy_in_a_test_and_a_yaml_suite(pytester):
    _offset_model(pytester.path / "offset.onnx")
    np.save(pytester.path / "x.npy", np.array([[1.0015]], np.float32))
    pytester.makepyfile(test_offset=TEST.format(per_op='{"double": 0.5}'))  # kept in the fix
    pytester.makefile(".yaml", accuracy_offset=SUITE.format(per_op="{double: 0.5}"))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=2)
    text = run.stdout.str()
    found = FIX.findall(text)
    assert found, text
    python, yaml, flags = found[0]
    assert python == ('{"double": 0.5, "offset": 0.957278, "copy_0": 0.957278, '
                      '"copy_1": 0.957278}'), python
    assert yaml == "{double: 0.5, offset: 0.957278, copy_0: 0.957278, copy_1: 0.957278}", yaml
    assert flags == ("--per-op offset=0.957278 --per-op copy_0=0.957278 "
                     "--per-op copy_1=0.957278")
    assert "this op and copy_0, copy_1, which fail by the same relative error, passes them" in text
    pytester.makepyfile(test_offset=TEST.format(per_op=python))
    pytester.makefile(".yaml", accuracy_offset=SUITE.format(per_op=yaml))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


SPLIT_TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.95, ignore=["sub_big"]{per_op})
def test_split(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    x = np.random.default_rng(1).standard_normal((1, 65)).astype(np.float32)
    x[0, 0] = 1.2
    inputs = accuracy_inputs("split.onnx", inputs={{"x": x}})
    check_accuracy(ascend_model("split.onnx").run(inputs), golden_dump("split.onnx", inputs))
'''


def split_model(path):
    """x + 2048 - 2048 (float16 loses x's digits), split into a one-element output and 64
    values: both fail, the one-element one by its relative error."""
    nodes = [helper.make_node("Add", ["x", "c"], ["a"], name="add_big"),
             helper.make_node("Sub", ["a", "c"], ["y"], name="sub_big"),
             helper.make_node("Split", ["y", "sp"], ["first", "rest"], name="split", axis=1)]
    graph = helper.make_graph(
        nodes, "split", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 65])],
        [helper.make_tensor_value_info("first", TensorProto.FLOAT, [1, 1]),
         helper.make_tensor_value_info("rest", TensorProto.FLOAT, [1, 64])],
        [numpy_helper.from_array(np.full((65,), 2048, np.float32), "c"),
         numpy_helper.from_array(np.array([1, 64], np.int64), "sp")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


def test_the_fix_of_one_output_of_an_op_names_that_output(pytester):
    """A review: the one-element fix keyed the op by name, ``per_op={"split": 0.832024}``,
    which sets the threshold of every output of it: pasted, split's other output (cosine
    0.879 < 0.95) passed with it. It names the tensor now, and pasted that output still fails."""
    split_model(pytester.path / "split.onnx")
    pytester.makepyfile(test_split=SPLIT_TEST.format(per_op=""))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    fix = re.search(r"per_op=(\{[^}]*\})", run.stdout.str()).group(1)
    assert fix == '{"split:output:0": 0.832024}', fix
    pytester.makepyfile(test_split=SPLIT_TEST.format(per_op=f", per_op={fix}"))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines(["*first failing op split:output:1 (cosine 0.87904* < 0.95)*"])


def test_a_check_s_own_bare_entry_gives_way_to_the_tensor_s(pytester):
    """A review: with @accuracy(per_op={"split": 0.9}) the fix kept the bare key,
    per_op={"split": 0.832024}, which pasted passed split's other output (0.879 < 0.9)."""
    split_model(pytester.path / "split.onnx")
    pytester.makepyfile(test_split=SPLIT_TEST.format(per_op=', per_op={"split": 0.9}'))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    fix = re.search(r"per_op=(\{[^}]*\})", run.stdout.str()).group(1)
    assert fix == '{"split": 0.9, "split:output:0": 0.832024}', fix
    pytester.makepyfile(test_split=SPLIT_TEST.format(per_op=f", per_op={fix}"))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines(["*first failing op split:output:1 (cosine 0.87904* < 0.9)*"])


def test_the_library_s_and_the_command_s_fix_name_the_tensor_too():
    """The reason judge() gives (diagnose, compare, judge and the HTML report print it) named
    the bare op, ``--per-op split=0.832024``, which pasted passed split's other output."""
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.dump.model import DumpSet

    rest = np.random.default_rng(1).standard_normal(64).astype(np.float32)
    golden = DumpSet.from_arrays({"split": [np.array([[1.2]], np.float32), rest]})
    actual = DumpSet.from_arrays({"split": [np.array([[0.4]], np.float16),
                                            (rest + 0.5).astype(np.float16)]})
    verdict = compare_dumps(actual, golden).judge(0.95)
    reason = next(f.reason for f in verdict.failures if f.row.slot == "output:0")
    assert '"split:output:0": ' in reason and "--per-op split:output:0=" in reason, reason
    assert '"split": ' not in reason and "--per-op split=" not in reason, reason
