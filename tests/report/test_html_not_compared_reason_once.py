"""The HTML table row of a not-compared fused-op output gave its reason twice ("not compared: X;
X": the failure's reason is "not compared: " + the row's reason, and the row's reason was added
because it was not equal to the failure's)."""
import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet, OpRecord, TensorRef
from pytest_ascend_accuracy.report.html_report import html_text

X = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)


def test_a_not_compared_row_gives_its_reason_once():
    fused = OpRecord("A_1B_2C_3", "FusedOp", outputs=(
        TensorRef.from_array(X, "output", 0, origin=("B_2", 0)),
        TensorRef.from_array(-X, "output", 1, origin=("C_3", 0))),
        original_names=("A_1", "B_2", "C_3"), order=0)
    result = compare_dumps(DumpSet([fused], kind="memory"),
                           DumpSet.from_arrays({"A_1": [X], "B_2": [X]}))
    verdict = result.judge(0.95)
    why = result.rows[1].reason
    page = html_text(result, verdict)
    from html import escape
    assert escape(f"not compared: {why}") in page
    assert escape(f"{why}; {why}") not in page
