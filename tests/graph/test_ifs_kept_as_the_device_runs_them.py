"""The golden keeps every ``If`` a conversion runs as an operator (H110: silero_vad_half's
nested Ifs read the shape of an If kept for its inputs; once that one was reduced they looked
static and were inlined away, so the device's If operators had no golden tensor: a false
failure, "3 ops not compared", on a perfect conversion)."""
import numpy as np
import pytest

from pytest_ascend_accuracy.graph.prepare import prepare_model
from pytest_ascend_accuracy.testing.models import if_model, nested_if_model


@pytest.mark.parametrize("x", [[[1, 2, 3, 4]], [[-1, 2, -3, -4]]], ids=["rank2", "rank1"])
def test_every_if_a_conversion_runs_is_kept_by_the_golden(x):
    converted = prepare_model(nested_if_model())
    golden = prepare_model(nested_if_model(), inputs={"x": np.float32(x)})
    assert [n for n, t in converted.report.subgraph_ops if t == "If"] == ["pick", "by_rank"]
    assert golden.report.kept_ifs == ("pick", "by_rank")
    assert ("wrap", "then") in converted.report.inlined_ifs  # a constant condition: inlined


def test_an_if_a_conversion_inlines_is_not_kept():
    x = np.zeros((1, 4), np.float32)
    assert prepare_model(if_model(), inputs={"x": x}).report.kept_ifs == ()
