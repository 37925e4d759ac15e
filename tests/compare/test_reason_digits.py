"""A failure's figure printed on the failing side of its threshold (a dataset trial read
"cosine 1.000000 fails cosine >= 0.99999993")."""
import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet


def test_a_figure_that_rounds_to_the_threshold_is_printed_with_the_digits_that_fail_it():
    golden = np.linspace(0.1, 1, 1000).astype(np.float32)
    actual = (golden * (1 + 1e-3 * np.sin(np.arange(1000)))).astype(np.float32)
    result = compare_dumps(DumpSet.from_arrays({"a": [actual]}),
                           DumpSet.from_arrays({"a": [golden]}))
    assert result.judge(0.9999999).failures[0].reason == (
        "cosine 0.9999998 fails cosine >= 0.9999999")
    far = compare_dumps(DumpSet.from_arrays({"a": [np.ones(8, np.float32)]}),
                        DumpSet.from_arrays({"a": [np.arange(8, dtype=np.float32)]}))
    assert far.judge(0.99).failures[0].reason == "cosine 0.836660 fails cosine >= 0.99"
