"""A fused op's member named with its output slot (``relu1:output:0``) in a marker shared by a
fusing and a non-fusing mode applies in both: the default mode refused it ("names only ops
never compared here") though its fused ``fc1/MatMulrelu1`` dumps exactly that tensor, and
naming the member without the slot worked. A member whose tensor the fused op never dumps
(``fc1/MatMul:output:0``) is judged in the non-fusing mode; with no such mode it is refused,
saying what to write instead; an unknown slot is refused with the closest names as before."""

TESTS = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/passing_mlp.onnx"
BOTH = ["default", "fusion_off"]


def _check(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(M)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))


@accuracy(metric="max_abs", threshold=1.0, per_op={"relu1:output:0": 0.0}, modes=BOTH)
def test_per_op(ascend_model, golden_dump, check_accuracy):
    _check(ascend_model, golden_dump, check_accuracy)


@accuracy(metric="max_abs", threshold=1.0, per_op={"relu1": 0.0}, ignore=["relu1:output:0"],
          modes=BOTH)
def test_ignore(ascend_model, golden_dump, check_accuracy):
    _check(ascend_model, golden_dump, check_accuracy)


@accuracy(metric="max_abs", threshold=1.0, per_op={"fc1/MatMul:output:0": 0.0}, modes=BOTH)
def test_inner(ascend_model, golden_dump, check_accuracy):
    _check(ascend_model, golden_dump, check_accuracy)


@accuracy(ignore=["relu1:output:7"], modes=BOTH)
def test_unknown_slot(ascend_model, golden_dump, check_accuracy):
    _check(ascend_model, golden_dump, check_accuracy)
'''


def test_a_members_output_slot_applies_in_fusing_and_non_fusing_modes(pytester, models_dir):
    pytester.makepyfile(test_slot=TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=3, failed=5)
    out = result.stdout.str()
    # the entry judges relu1's tensor in both modes: the fused op's output, then relu1's own
    result.stdout.fnmatch_lines([
        "FAILED test_slot.py::test_per_op[[]default[]] *: first failing op fc1/MatMulrelu1 "
        "(max_abs * > 0)",
        "FAILED test_slot.py::test_per_op[[]fusion_off[]] *: first failing op relu1 "
        "(max_abs * > 0)"])
    # (each failure block once; CI=true makes pytest print the blocks' text again in -rA)
    assert len({line for line in result.outlines
                if line.startswith("  max_abs ") and "(per_op 'relu1:output:0')" in line}) == 2
    # ignored in both modes (per_op "relu1" alone fails that tensor in both)
    result.stdout.fnmatch_lines(["PASSED test_slot.py::test_ignore[[]default[]]",
                                 "PASSED test_slot.py::test_ignore[[]fusion_off[]]"])
    # a member inside the fused op: nothing to judge in default, its own tensor in fusion_off
    result.stdout.fnmatch_lines(["PASSED test_slot.py::test_inner[[]default[]]"])
    result.stdout.fnmatch_lines([
        "FAILED test_slot.py::test_inner[[]fusion_off[]] *: first failing op fc1/MatMul "
        "(max_abs *"])
    for mode in ("default", "fusion_off"):
        assert (f"test_slot.py::test_unknown_slot[{mode}]: ignore entry 'relu1:output:7' is not "
                f"an op of model 'passing_mlp'; closest: 'relu1:output:0'") in out
    assert "names only ops never compared here" not in out


SINGLE_MODE = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/passing_mlp.onnx"
'''
TEST = '''

@accuracy({settings})
def test_{name}(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(M)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
'''

INNER_REFUSED = (
    "per_op entry 'fc1/MatMul:output:0' names only ops never compared here (fc1/MatMul): "
    "inside fused ops, whose member tensors the device never dumps; name it 'fc1/MatMul' "
    "(without the slot) to judge the fused op that holds it, or list a mode without fusion "
    "(\"fusion_off\") in modes= to judge the member's own tensor there")


def test_a_member_tensor_no_mode_dumps_is_refused_and_both_fixes_work_pasted(
        pytester, models_dir):
    pytester.makepyfile(test_single=SINGLE_MODE + TEST.format(
        name="single", settings='per_op={"fc1/MatMul:output:0": 0.9}'))
    refused = pytester.runpytest("-p", "no:cacheprovider")
    refused.assert_outcomes(failed=1)
    assert INNER_REFUSED in refused.stdout.str()
    pytester.makepyfile(test_single=SINGLE_MODE + TEST.format(  # each way out, pasted
        name="op", settings='per_op={"fc1/MatMul": 0.9}') + TEST.format(
        name="modes", settings='per_op={"fc1/MatMul:output:0": 0.9}, '
                               'modes=["default", "fusion_off"]'))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=3)


def test_a_mode_turning_off_one_other_rule_does_not_excuse_a_member_tensor(pytester, models_dir):
    """A mode that switches off one fusion rule need not unfuse this member: with no mode
    without fusion, nothing judged ``fc1/MatMul:output:0``, and both modes passed a max_abs of
    0 (a review). It is refused as with a single mode."""
    pytester.makepyfile(test_rules=SINGLE_MODE + "from pytest_ascend_accuracy import Mode\n" +
                        TEST.format(name="rules", settings=(
                            'metric="max_abs", threshold=1.0, '
                            'per_op={"fc1/MatMul:output:0": 0.0}, modes=["default", '
                            'Mode(fusion_rules_off=("LayerNormFusionPass",))]')))
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert "passed" not in result.parseoutcomes()


def test_a_yaml_entry_judges_a_member_tensor_in_its_mode_without_fusion(pytester, models_dir):
    # a thresholds trial: the marker took ignore ['conv1:output:0'] with modes default and
    # fusion_off; the same YAML entry was refused in default, advising to list fusion_off in
    # modes=, which it did (each YAML item's spec knew no modes)
    entry = ("models:\n  - name: mlp\n    model: models/passing_mlp.onnx\n"
             "    modes: [{modes}]\n    per_op: {{fc1/MatMul:output:0: 0.9}}\n")
    pytester.path.joinpath("accuracy_m.yaml").write_text(entry.format(modes="default, fusion_off"))
    pytester.runpytest("-p", "no:cacheprovider", "accuracy_m.yaml").assert_outcomes(passed=2)
    pytester.path.joinpath("accuracy_m.yaml").write_text(entry.format(modes="default"))
    refused = pytester.runpytest("-p", "no:cacheprovider", "accuracy_m.yaml")
    refused.assert_outcomes(failed=1)
    assert INNER_REFUSED in refused.stdout.str()
