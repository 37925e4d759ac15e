"""The fix a refused ``defaults: per_op`` number prints (``for a rel_l2 threshold write per_op:
{...}``), pasted verbatim into the suite, judges each op as it says. It wrote names and
numbers with ``repr``: ``{max_abs: 1e-30}`` and ``{rel_l2: 1e+16}`` (strings to YAML, whose
floats need a dot: the pasted suite was refused) and an op ``fc1\\MatMul`` as
``'fc1\\\\MatMul'`` (single-quoted YAML keeps both backslashes: the pasted entry named no op).
Now ``core.yaml_text`` writes them (F16's review)."""
import onnx

from pytest_ascend_accuracy.testing import models as tiny_models

SUITE = """
defaults:
  per_op: PER_OP
models:
  - name: mlp
    model: models/mlp.onnx
    metric: rel_l2
    threshold: 0.5
"""


def _project(pytester, rename=None):
    (pytester.path / "models").mkdir()
    model = tiny_models.passing_mlp()
    for node in model.graph.node:
        node.name = (rename or {}).get(node.name, node.name)
    onnx.save(model, str(pytester.path / "models" / "mlp.onnx"))
    return pytester.path / "accuracy_models.yaml"


def _fix(pytester, suite, per_op: str) -> str:
    suite.write_text(SUITE.replace("PER_OP", per_op))
    text = pytester.runpytest("-p", "no:cacheprovider", str(suite)).stdout.str()
    assert "a number of defaults.per_op is a threshold of the defaults' metric" in text, text
    return text.split("for a rel_l2 threshold write per_op: ")[1].split("\n")[0].strip()


def test_numbers_in_the_fix_load_back_as_numbers_and_judge_as_written(pytester):
    suite = _project(pytester)
    # fc1's own max_abs kept as it is (no run's float16 error is that small: FAILED), fc2's
    # refused cosine 1e16 written as the rel_l2 threshold it can be
    fix = _fix(pytester, suite, "{fc1/MatMul: {max_abs: 1.0e-30}, fc2/MatMul: 1.0e+16}")
    suite.write_text(SUITE.replace("PER_OP", fix))  # pasted
    run = pytester.runpytest("-p", "no:cacheprovider", str(suite))
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    assert "> 1e-30 (per_op 'fc1/MatMul')" in text, text  # judged by the kept entry
    assert fix == "{fc1/MatMul: {max_abs: 1.0e-30}, fc2/MatMul: {rel_l2: 1.0e+16}}", fix


def test_a_name_with_a_backslash_in_the_fix_names_that_op(pytester):
    suite = _project(pytester, {"fc1/MatMul": "fc1\\MatMul"})
    fix = _fix(pytester, suite, '{"fc1\\\\MatMul": 0.99999999999, fc2/MatMul: 1.5}')
    suite.write_text(SUITE.replace("PER_OP", fix))  # pasted: fc1\MatMul judged, and fails
    run = pytester.runpytest("-p", "no:cacheprovider", str(suite))
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    assert "< 0.99999999999 (per_op 'fc1\\\\MatMul')" in text, text  # (its repr)
    assert fix == '{"fc1\\\\MatMul": 0.99999999999, fc2/MatMul: {rel_l2: 1.5}}', fix
