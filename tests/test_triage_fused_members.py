"""The debugging flow (``--accuracy-diagnose``, ``ascend-accuracy diagnose``) reads every member
of a failing fused op for float16 range, as the failure's hint does.

``triage.runner.range_ops`` read the golden operands of a failing row's golden op alone: a fused
MatMul+Add row is matched to the Add, so the MatMul's weight of 1e5 went unread (the seeds of the
keep_dtype search held the MatMul only where the fused op's output turned Inf). Both ways of
running the flow name keep_dtype of the MatMul on such a model, and the fix they print, pasted,
passes.
"""
import re

import numpy as np
import onnx

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.core.modes import DEFAULT
from pytest_ascend_accuracy.dump.model import DumpSet, OpRecord, TensorRef
from pytest_ascend_accuracy.testing.models import fused_matmul_add
from pytest_ascend_accuracy.triage.runner import Evaluation, range_ops

XS = np.full((1, 4), 1e-4, np.float32)
W = np.array([[1e5, 0.5], [0.2, -0.3], [0.1, 0.4], [-0.2, 0.3]], np.float32)
Y = XS @ W + np.array([0.1, -0.2], np.float32)


def _ref(values, kind="output", index=0, origin=None):
    return TensorRef.from_array(np.asarray(values, np.float32), kind, index, origin=origin)


def test_range_ops_reads_the_operands_of_every_member_of_a_failing_fused_op():
    """The device's fused op stays finite (a saturating chip, a wrong value): only the
    MatMul's weight says float16 is the problem."""
    golden = DumpSet([
        OpRecord("fc/MatMul", "MatMul", order=0,
                 inputs=(_ref(XS, "input", 0), _ref(W, "input", 1)), outputs=(_ref(XS @ W),)),
        OpRecord("fc/Add", "Add", order=1, inputs=(_ref(XS @ W, "input", 0),
                                                   _ref([0.1, -0.2], "input", 1)),
                 outputs=(_ref(Y),))])
    wrong = Y.copy()
    wrong[0, 0] = -5.0
    actual = DumpSet([OpRecord("fc/MatMul", "MatMulV2", original_names=("fc/MatMul", "fc/Add"),
                               outputs=(_ref(wrong, origin=("fc/Add", 0)),), order=0)])
    result = compare_dumps(actual, golden)
    verdict = result.judge(0.95)
    assert [f.row.golden_name for f in verdict.failures] == ["fc/Add"]
    ev = Evaluation(DEFAULT, None, actual, result, verdict, True)
    assert range_ops(ev, golden) == ["fc/MatMul"]


def test_a_saturating_chips_flow_seeds_its_search_with_the_matmul(tmp_path):
    """Saturated to 65504, the weight leaves the fused op's output finite and wrong: the
    search is seeded with the MatMul (it tried the Mul first, then narrowed the types: six
    conversions where four do)."""
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.triage.flow import diagnose

    w = np.zeros((16, 2), np.float32)
    w[:, 0], w[:, 1] = 5e4, 1e5
    path = _save(tmp_path / "models", w, np.array([0.1, -0.1], np.float32))
    cache = Cache(tmp_path / "cache")
    d = diagnose(path, None, EmulatorBackend(cache, overflow="saturate"), 0.99, cache=cache)
    assert d.fix_mode.python_expr() == "keep_dtype(['fc/MatMul'])"
    assert "seeded with 1 op(s) out of fp16 range" in d.steps[-1].summary
    assert d.conversions == 4


TEST = '''
from pytest_ascend_accuracy import accuracy, {imports}
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy({marker})
def test_model(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/fused.onnx")
    actual = ascend_model("models/fused.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/fused.onnx", inputs))
'''


def _model(directory):
    """x * 1e-4 @ W (a column of 1e5) + b, fused into one MatMul op by the default mode."""
    return _save(directory)


def _save(directory, w=None, b=None):
    directory.mkdir()
    onnx.save(fused_matmul_add(w, b), str(directory / "fused.onnx"))
    return str(directory / "fused.onnx")


def _paste(pytester, expr, imports):
    pytester.makepyfile(test_model=TEST.format(marker=f"threshold=0.95, modes=[{expr}]",
                                               imports=imports))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_accuracy_diagnose_names_keep_dtype_of_the_matmul_and_the_fix_pastes(pytester):
    _model(pytester.path / "models")
    pytester.makepyfile(test_model=TEST.format(marker="threshold=0.95", imports="accuracy"))
    failed = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose")
    failed.assert_outcomes(failed=1)
    fix = re.search(r"^  fix: modes=\[(.*)\]  \(YAML: .*; from pytest_ascend_accuracy import "
                    r"(.*)\)$", failed.stdout.str(), re.M)
    assert fix is not None, failed.stdout.str()
    assert fix.group(1) == "keep_dtype(['fc/MatMul'])"
    _paste(pytester, fix.group(1), fix.group(2))


def test_cli_diagnose_names_keep_dtype_of_the_matmul_and_the_fix_pastes(pytester, capsys):
    _model(pytester.path / "models")
    assert cli.main(["diagnose", "models/fused.onnx", "--threshold", "0.95",
                     "--cache-dir", ".ascend-accuracy"]) == 0
    out = capsys.readouterr().out
    fix = re.search(r"^  in a test: modes=\[(.*)\] \(from pytest_ascend_accuracy import "
                    r"(.*)\); in a YAML suite", out, re.M)
    assert fix is not None, out
    assert fix.group(1) == "keep_dtype(['fc/MatMul'])"
    _paste(pytester, fix.group(1), fix.group(2))
