"""`ascend-accuracy compare` (and `judge`) give a flipped integer output (an ArgMax index that
float16 rounding moved) the plugin's hint, in the command line's spelling: the dump's mode in
high precision as a diagnose command that, pasted, passes; it printed the generic "diagnose
walks the debugging flow" line. Where a Cube op computes the index, high precision cannot
help (it still feeds that op float16): the plugin's reason says so."""
import os
import re
import shlex

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.core.locations import shown
from pytest_ascend_accuracy.report.cli_commands import PLACEHOLDER_INPUTS
from pytest_ascend_accuracy.report.failure_text import CLI_MODEL
from pytest_ascend_accuracy.testing.emulated_pair import emulated_pair

REASON = ("next step: integer values differ at argmax (an index, id or count computed from "
          "float16-rounded values): convert in high precision to see whether float16 rounding "
          "moves them: ascend-accuracy diagnose MODEL.onnx --mode high_precision passes with "
          "exit status 0 (its first line says PASSES where this mode passes as given, and "
          "RESTORED, also with exit status 0, where it passed only with more ops kept, which its "
          "fix names); where this mode still fails, it walks on: ops kept in float32, buffer "
          "reuse off, fusion off")


def _nudged_argmax():
    """ArgMax over (x, x + 1e-4): float16 makes most pairs equal, and the index flips to 0."""
    delta = numpy_helper.from_array(np.full((1,), 1e-4, np.float32), "delta")
    nodes = [helper.make_node("Add", ["x", "delta"], ["xd"], name="nudge"),
             helper.make_node("Concat", ["x", "xd"], ["pair"], name="pair", axis=1),
             helper.make_node("ArgMax", ["pair"], ["y"], name="argmax", axis=1, keepdims=0)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [64, 1])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, [64])],
                              initializer=[delta])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_a_flipped_index_gets_the_plugins_hint_and_the_command_passes_pasted(tmp_path, capsys):
    pair = emulated_pair(tmp_path, _nudged_argmax())
    saved = tmp_path / "r.json"
    # the stored golden's model (golden.json names it), as every printed path: from here
    named = shlex.quote(shown(pair.model, os.getcwd()))
    assert cli.main(pair.compare_argv() + ["--json", str(saved)]) == 1
    assert REASON.replace(CLI_MODEL, named) in capsys.readouterr().out.splitlines()
    assert cli.main(["judge", str(saved)]) == 1  # a saved result: the same advice
    assert REASON.replace(CLI_MODEL, named) in capsys.readouterr().out.splitlines()
    command = re.search(r"(ascend-accuracy diagnose .+?) passes", REASON).group(1)
    argv = [str(pair.model) if a == CLI_MODEL else a for a in shlex.split(command)[1:]]
    assert cli.main(argv + ["--cache-dir", str(tmp_path / "cache")]) == 0
    assert "PASSES" in capsys.readouterr().out.splitlines()[0]


def test_a_cube_fed_index_is_not_sent_to_high_precision():
    from pytest_ascend_accuracy.cli.integer_hint import integer_hint
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.compare.thresholds import Policy
    from pytest_ascend_accuracy.dump.model import DumpSet

    scores = np.arange(128, dtype=np.float32).reshape(64, 2)
    golden = (np.arange(64) % 2).astype(np.int64)
    flipped = golden.copy()
    flipped[7] ^= 1
    types = {"mm": "MatMul", "argmax": "ArgMax"}
    result = compare_dumps(DumpSet.from_arrays({"mm": [scores], "argmax": [flipped]},
                                               op_types=types),
                           DumpSet.from_arrays({"mm": [scores], "argmax": [golden]},
                                               op_types=types))
    verdict = result.judge(Policy.build(0.95, None, (), "cosine", 2.0))  # as the command does
    assert integer_hint(verdict, (), result) == (
        "integer values differ at argmax (an index, id or count computed from float16-rounded "
        "values); the Cube op computing them ('mm') takes float16 inputs even in high "
        "precision: ascend-accuracy diagnose MODEL.onnx tries high precision and keeping every "
        "op in float32, and where that passes names a small set of ops to keep in float32")


def test_a_hand_edited_golden_record_keeps_the_commands_placeholder(tmp_path, capsys):
    """A ``golden.json`` not as this package writes it (``input_shape`` a string) names no
    model to trust: compare crashed with ``AttributeError: 'str' object has no attribute
    'items'`` building its diagnose command; it prints the command with its placeholder."""
    import json

    pair = emulated_pair(tmp_path, _nudged_argmax())
    record_file = os.path.join(pair.golden, "golden.json")
    with open(record_file) as f:
        record = json.load(f)
    record["input_shape"] = "x:1,8"
    with open(record_file, "w") as f:
        json.dump(record, f)
    assert cli.main(pair.compare_argv()) == 1
    lines = capsys.readouterr().out.splitlines()  # MODEL.onnx, as without a record: and so
    assert REASON + PLACEHOLDER_INPUTS in lines  # nothing tells the inputs either


def _cube_nudged_argmax():
    """``_nudged_argmax`` with its scores made by a MatMul (a Cube op: high precision still
    feeds it float16)."""
    one = numpy_helper.from_array(np.ones((1, 1), np.float32), "one")
    delta = numpy_helper.from_array(np.full((1,), 1e-4, np.float32), "delta")
    nodes = [helper.make_node("MatMul", ["x", "one"], ["s"], name="mm"),
             helper.make_node("Add", ["s", "delta"], ["sd"], name="nudge"),
             helper.make_node("Concat", ["s", "sd"], ["pair"], name="pair", axis=1),
             helper.make_node("ArgMax", ["pair"], ["y"], name="argmax", axis=1, keepdims=0)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [64, 1])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, [64])],
                              initializer=[one, delta])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_a_cube_fed_index_gets_its_ops_kept_and_the_exit_status_is_told_right(tmp_path, capsys):
    """The command keeping the ops computing a Cube-fed index says what its exit status means
    (0 for PASSES and for RESTORED with more ops kept: it read "passes with exit status 0 where
    it does; still failing, float16 rounding is not the cause"), and passes pasted."""
    pair = emulated_pair(tmp_path, _cube_nudged_argmax(), store_inputs=True)  # edges: the chain
    assert cli.main(pair.compare_argv()) == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("next step: integer values differ"))
    assert "take float16 inputs even in high precision" in line or "takes float16" in line, line
    assert line.endswith(
        "passes with exit status 0 (its first line says PASSES where this mode passes as given, "
        "and RESTORED, also with exit status 0, where it passed only with more ops kept, which "
        "its fix names); where this mode still fails at this op, float16 rounding is not the "
        "cause"), line
    command = re.search(r"(ascend-accuracy diagnose .+?) passes with", line).group(1)
    assert "--mode" in command and "keep_dtype" in command, command
    argv = [str(pair.model) if a == CLI_MODEL else a for a in shlex.split(command)[1:]]
    assert cli.main(argv + ["--cache-dir", str(tmp_path / "cache")]) == 0
    assert "PASSES" in capsys.readouterr().out.splitlines()[0]
