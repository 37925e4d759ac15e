"""A ``defaults: per_op`` number its metric refuses (1.5 read as a cosine) says it is read in
the defaults' metric and gives the entry to write for the model's own metric; pasted, the suite
judges the op by it."""
import onnx

from pytest_ascend_accuracy.testing import models as tiny_models

SUITE = """
defaults:
  per_op: PER_OP
models:
  - name: mlp
    model: models/passing_mlp.onnx
    metric: rel_l2
    threshold: 0.5
"""


def test_a_refused_defaults_per_op_number_names_its_metric_and_the_fix(pytester):
    (pytester.path / "models").mkdir()
    onnx.save(tiny_models.passing_mlp(), str(pytester.path / "models" / "passing_mlp.onnx"))
    suite = pytester.path / "accuracy_models.yaml"
    suite.write_text(SUITE.replace("PER_OP", "{fc2/MatMul: 1.5}"))
    run = pytester.runpytest("-p", "no:cacheprovider", str(suite))
    text = run.stdout.str()
    assert ("per_op['fc2/MatMul'] must be within [0, 1], got 1.5: a number of defaults.per_op "
            "is a threshold of the defaults' metric, cosine (the defaults set no metric); for a "
            "rel_l2 threshold write per_op: {fc2/MatMul: {rel_l2: 1.5}}") in text, text
    fix = text.split("write per_op: ")[1].split("\n")[0].strip()
    suite.write_text(SUITE.replace("PER_OP", fix))  # pasted
    run = pytester.runpytest("-p", "no:cacheprovider", str(suite))
    run.assert_outcomes(passed=1)


def test_the_fix_names_the_refused_entry_and_only_one_the_model_s_metric_takes(pytester):
    (pytester.path / "models").mkdir()
    onnx.save(tiny_models.passing_mlp(), str(pytester.path / "models" / "passing_mlp.onnx"))
    suite = pytester.path / "accuracy_models.yaml"
    # the whole mapping, every refused number rewritten, every other entry kept (a review: the
    # fix named one entry, and pasted it dropped fc1's threshold: FAILED became passed)
    suite.write_text(SUITE.replace("PER_OP", "{fc1/MatMul: 0.99999999999, fc2/MatMul: 1.5, "
                                             "fc3/MatMul: 1.2}"))
    text = pytester.runpytest("-p", "no:cacheprovider", str(suite)).stdout.str()
    fix = ("{fc1/MatMul: 0.99999999999, fc2/MatMul: {rel_l2: 1.5}, "
           "fc3/MatMul: {rel_l2: 1.2}}")
    assert f"write per_op: {fix}" in text, text
    suite.write_text(SUITE.replace("PER_OP", fix))  # pasted: fc1 still judged, and fails
    run = pytester.runpytest("-p", "no:cacheprovider", str(suite))
    run.assert_outcomes(failed=1)
    assert "fc1/MatMul" in run.stdout.str()
    for refused in ("{fc2/MatMul: -0.2}", "{fc2/MatMul: high}", "{fc2/MatMul: {rel_12: 1.5}}"):
        suite.write_text(SUITE.replace("PER_OP", refused))
        text = pytester.runpytest("-p", "no:cacheprovider", str(suite)).stdout.str()
        assert "defaults.per_op: per_op['fc2/MatMul']" in text, text
        assert "a number of defaults.per_op" not in text, text  # no fix the metric refuses
