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
            "rel_l2 threshold write per_op: {'fc2/MatMul': {rel_l2: 1.5}}") in text, text
    fix = text.split("write per_op: ")[1].split("\n")[0].strip()
    suite.write_text(SUITE.replace("PER_OP", fix))  # pasted
    run = pytester.runpytest("-p", "no:cacheprovider", str(suite))
    run.assert_outcomes(passed=1)
