"""A fusion rule switched off that fuses nothing in the model: the mode converted exactly as
the default, was cached and reported as a mode of its own, and passed, silently
(``Mode(fusion_rules_off=("MatMulBiasAddFusionPass",))`` on PP-OCRv4 det, which has no MatMul;
H103). Warned of at the test's line; a rule that does fuse something is not, nor one that
fuses only once another entry is off (H108: UBFusion's MatMul+Add after MatMulBiasAdd)."""

TEST = '''
from pytest_ascend_accuracy import Mode, accuracy

M = "models/{MODEL}.onnx"


@accuracy(threshold=0.99)
def test_rule_off(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, seed=0)
    golden = golden_dump(M, inputs)
    om = ascend_model(M, mode=Mode(fusion_rules_off=({RULE!r},)))
    check_accuracy(om.run(inputs), golden)
'''


def _test(rules, model="passing_mlp"):
    return TEST.replace("{RULE!r}", ", ".join(repr(r) for r in rules)).replace("{MODEL}", model)


def test_a_rule_off_that_fuses_nothing_in_the_model_is_warned_of_at_the_test(
        pytester, models_dir):
    pytester.makepyfile(test_rules=_test(["ConvBatchnormFusionPass"]))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "*test_rules.py:10: FusionRuleUnusedWarning: fusion_rules_off 'ConvBatchnormFusionPass': "
        "model 'passing_mlp' fuses the same ops in the emulator's conversion with that entry "
        "left out, so switching it off changes nothing: this mode's figures are those of the "
        "same mode without it"])


def test_a_rule_off_that_fuses_ops_of_the_model_is_not(pytester, models_dir):
    pytester.makepyfile(test_rules=_test(["MatMulBiasAddFusionPass"]))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "FusionRuleUnusedWarning" not in result.stdout.str()


def test_a_rule_that_fuses_only_once_another_entry_is_off_is_not(pytester):
    import numpy as np
    import onnx

    from pytest_ascend_accuracy.testing import models

    pytester.mkdir("models")
    weight = np.full((16, 8), 0.1, np.float32)  # (no float16 overflow: the warning alone)
    onnx.save(models.fused_matmul_add(w=weight), str(pytester.path / "models" / "fused.onnx"))
    pytester.makepyfile(test_pair=_test(["MatMulBiasAddFusionPass",
                                         "UBFusion:ATbeMatmulElemwiseFusionPass"], "fused"))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "FusionRuleUnusedWarning" not in result.stdout.str()
