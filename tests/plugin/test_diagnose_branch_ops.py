"""``--accuracy-diagnose`` where float16 inside an If's branch is the cause, as a user sees it
(H324: ssdlite's diagnosis ended "no conversion mode restores accuracy ... check the operator
implementations" where its step "keep_dtype(all 872 ops)" kept none of the 30 ops inside
If_1941's branch). The diagnosis keeps the branch ops by type, narrows to them, and its fix,
pasted verbatim into ``modes=[...]`` and into a YAML suite, passes."""
import re

from tests.test_triage_branch_ops import BRANCH_TYPES, branch_model
from pasted_fix_lines import FIX

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy, {imports}

X = np.linspace(0.05, 0.95, 8, dtype=np.float32).reshape(1, 8)


@accuracy(threshold=0.99, modes=[{expr}])
def test_branch(ascend_model, golden_dump, check_accuracy):
    actual = ascend_model("models/branch_fp16.onnx").run({{"x": X}})
    check_accuracy(actual, golden_dump("models/branch_fp16.onnx", {{"x": X}}))
'''

SUITE = '''
models:
  - name: branch
    model: models/branch_fp16.onnx
    inputs: {{x: data/x.npy}}
    threshold: 0.99
    modes: [{yaml}]
'''


def test_the_branch_ops_are_kept_by_type_and_the_fix_passes_pasted(pytester):
    import numpy as np

    branch_model(pytester.mkdir("models") / "branch_fp16.onnx")
    np.save(pytester.mkdir("data") / "x.npy",
            np.linspace(0.05, 0.95, 8, dtype=np.float32).reshape(1, 8))
    pytester.makepyfile(test_branch=TEST.format(imports="DEFAULT", expr="DEFAULT"))
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    assert "no conversion mode restores accuracy" not in text, text
    assert "check the operator implementations" not in text
    assert "keeping every op in float32 does" in text
    expr, yaml, imports = FIX.search(text).groups()
    # the branch ops, by the types ATC's parser gives them; no op of the main graph
    assert set(re.findall(r"'(OpType::\w+)'", expr)) == BRANCH_TYPES, expr
    assert re.fullmatch(r"keep_dtype\(\[[^\]]+\]\)", expr), expr
    # the steps the diagnosis files list say what the every-op step kept
    diagnosis = next((pytester.path / ".ascend-accuracy" / "diagnoses").rglob("diagnosis.txt"))
    assert "the 4 ops inside offset_if's branches by 4 OpType:: entries" in (
        diagnosis.read_text())
    pytester.makepyfile(test_branch=TEST.format(imports=imports, expr=expr))
    pytester.makefile(".yaml", accuracy_branch=SUITE.format(yaml=yaml))
    fixed = pytester.runpytest("-p", "no:cacheprovider")
    fixed.assert_outcomes(passed=2)
