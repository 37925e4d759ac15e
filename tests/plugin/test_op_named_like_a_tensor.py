"""A per_op entry naming a member of a fused op other than the op making its output (keras2onnx's
Dense: MatMul node ``dense_6``, output tensor ``dense_6`` made by the bias node ``Add1``; MTCNN's
onet). An audit's ``per_op={"dense_6": {"max_abs": 4e-4}}`` failed in the default mode (the
fused MatMul+Add, the output) and passed under the printed ``modes=[FUSION_OFF]``, where it
judged the MatMul before its bias while the output, worse, went by the default cosine: a false
pass. A first fix refused such names, which a review found refused valid entries in every mode
(the plugin's own diagnose fix pasted among them): the entry is taken, and the failure says what
it judges in each mode, offers no fusion probe that would judge another tensor, and names the
op making the output, which pasted judges it in both modes."""
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh


TEST = """
import numpy as np
from pytest_ascend_accuracy import FUSION_OFF, accuracy

@accuracy(threshold=0.99, modes=["default", FUSION_OFF], {setting})
def test_dense(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("dense.onnx", seed=0)
    check_accuracy(ascend_model("dense.onnx").run(inputs), golden_dump("dense.onnx", inputs))
"""


def _dense(path):
    """``x [4, 16] -> MatMul 'dense_6' -> dense_60 -> Add 'Add1' (+100) -> dense_6``: the output
    (about 100) loses more to float16 than the MatMul's values (about 4)."""
    rng = np.random.default_rng(3)
    nodes = [h.make_node("MatMul", ["x", "dense_6/kernel:0"], ["dense_60"], name="dense_6"),
             h.make_node("Add", ["dense_60", "dense_6/bias:0"], ["dense_6"], name="Add1")]
    graph = h.make_graph(
        nodes, "onet", [h.make_tensor_value_info("x", TP.FLOAT, [4, 16])],
        [h.make_tensor_value_info("dense_6", TP.FLOAT, [4, 10])],
        [nh.from_array(rng.random((16, 10), dtype=np.float32), "dense_6/kernel:0"),
         nh.from_array(np.full(10, 100.0, np.float32), "dense_6/bias:0")])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), str(path))
    return path


@pytest.mark.parametrize("key", ["dense_6", "dense_6:output:0"])
def test_the_entry_is_taken_and_the_failure_keys_it_to_the_op_making_the_output(pytester, key):
    """(A re-review: the tensor spelling of the member, ``dense_6:output:0``, got no note and
    the fusion probe, which passed.)"""
    _dense(pytester.path / "dense.onnx")
    pytester.makepyfile(test_dense=TEST.format(setting=f"per_op={{{key!r}: {{'max_abs': 0.01}}}}"))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1)  # (the MatMul alone passes under fusion_off)
    text = result.stdout.str()
    assert "configuration error" not in text
    block = text[text.index("test_dense[default]"):]
    step = next(line for line in block.splitlines() if line.startswith("next step: "))
    assert (f"the entry {key!r} judges fused op dense_6 (dense_6, Add1), whose output op "
            "'Add1' makes, and under fusion_off op 'dense_6' alone (before 'Add1'), another "
            "tensor: to judge this output in every mode, key the entry 'Add1', every other "
            "entry as it is: per_op={'Add1': {'max_abs': 0.01}} (YAML: per_op: {Add1: "
            "{max_abs: 0.01}}; shell: --per-op Add1=max_abs:0.01)") in step, step
    assert "FUSION_OFF" not in block[:block.index("short test summary")].split("next step")[1]
    # as it says, pasted: the op making the output judges it, fused or not: both fail
    pasted = re.search(r"(per_op=\{'Add1': \{[^}]*\}\})", step).group(1)
    pytester.makepyfile(test_dense=TEST.format(setting=pasted))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*[[]default[]]*first failing op dense_6 (max_abs *> 0.01)*",
                                 "*[[]fusion_off[]]*first failing op Add1 (max_abs *> 0.01)*"],
                                consecutive=False)


def test_the_outputs_line_names_the_output_the_op_makes(pytester):
    """The failure's "model outputs:" line named the output by its op, ``Add1``, where the user
    knows it as ``dense_6`` (the wheel's own code fetches it so): it gives both."""
    _dense(pytester.path / "dense.onnx")
    only_unfused = TEST.replace('modes=["default", FUSION_OFF]', "modes=[FUSION_OFF]")
    pytester.makepyfile(test_dense=only_unfused
                        .format(setting="per_op={'dense_[6]': {'max_abs': 1e-9}}"))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["model outputs: Add1 (output dense_6: cosine 1.000000; rel_l2 * "
                                 "passes its threshold; the check fails at ops before it"])


def test_the_rekeyed_per_op_keeps_every_other_entry_and_a_glob():
    """A final review: the note's lone ``per_op={'Add1': ...}``, pasted, dropped the check's
    other entries; a glob covering several layers keeps covering them."""
    from types import SimpleNamespace

    from pytest_ascend_accuracy.compare.thresholds import Policy
    from pytest_ascend_accuracy.report.would_pass import rekeyed_per_op

    check = SimpleNamespace(policy=Policy.build(0.99, {"dense_6": {"max_abs": 0.01},
                                                       "prob": {"max_abs": 1.2e-07}}))
    assert rekeyed_per_op(check, "dense_6", "Add1") == (
        "per_op={'Add1': {'max_abs': 0.01}, 'prob': {'max_abs': 1.2e-07}} (YAML: per_op: "
        "{Add1: {max_abs: 0.01}, prob: {max_abs: 1.2e-07}}; shell: --per-op Add1=max_abs:0.01 "
        "--per-op prob=max_abs:1.2e-07)")
    check = SimpleNamespace(policy=Policy.build(0.99, {"dense_*": 0.999}))
    assert rekeyed_per_op(check, "dense_*", "Add1") == (
        "per_op={'Add1': 0.999, 'dense_*': 0.999} (YAML: per_op: {Add1: 0.999, \"dense_*\": "
        "0.999}; shell: --per-op Add1=0.999 --per-op 'dense_*=0.999')")


def test_the_yaml_spelling_pasted_judges_the_output(pytester):
    _dense(pytester.path / "dense.onnx")
    suite = """
models:
  - name: dense
    model: dense.onnx
    threshold: 0.99
    inputs: {seed: 0}
    modes: [default, fusion_off]
    per_op: PER_OP
"""
    pytester.makefile(".yaml", accuracy_dense=suite.replace("PER_OP", "{dense_6: {max_abs: 0.01}}"))
    result = pytester.runpytest("-p", "no:cacheprovider")
    step = next(line for line in result.stdout.lines if line.startswith("next step: "))
    pasted = re.search(r"\(YAML: per_op: (\{.*?\}\});", step).group(1)
    pytester.makefile(".yaml", accuracy_dense=suite.replace("PER_OP", pasted))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)


def test_an_entry_of_the_fused_ops_own_name_gets_no_member_note(pytester):
    """A final review: keyed by the fused op's own name (``convrelu``), which no mode without
    fusion has, the note said fusion_off judged "op 'convrelu' alone"."""
    w = np.random.default_rng(1).standard_normal((4, 3, 3, 3)).astype(np.float32)
    nodes = [h.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c"], ["y"], name="relu")]
    graph = h.make_graph(nodes, "cr", [h.make_tensor_value_info("x", TP.FLOAT, [1, 3, 8, 8])],
                         [h.make_tensor_value_info("y", TP.FLOAT, None)], [nh.from_array(w, "w")])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]),
              str(pytester.path / "cr.onnx"))
    pytester.makepyfile(test_cr="""
        from pytest_ascend_accuracy import accuracy

        @accuracy(threshold=0.99, per_op={"convrelu": {"max_abs": 1e-9}})
        def test_cr(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("cr.onnx", seed=0)
            check_accuracy(ascend_model("cr.onnx").run(inputs), golden_dump("cr.onnx", inputs))
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    step = next(line for line in result.stdout.lines if line.startswith("next step: "))
    assert "first failing op convrelu" in result.stdout.str()
    assert "judges fused op" not in step, step
