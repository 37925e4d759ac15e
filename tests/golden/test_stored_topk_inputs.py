"""``golden.stored_topk_inputs``: a stored golden of op outputs only, read back, gives each TopK
the golden output feeding it in the model its record names, as the cache's golden references
it; nothing else changes, and without the model (gone, changed) nothing is added."""
import numpy as np
import onnx
import pytest

pytest.importorskip("onnxruntime")

from near_tie_detector import near_tie_detector  # noqa: E402

from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.golden.stored import read_golden, store_golden  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402


@pytest.fixture
def stored(tmp_path):
    from pytest_ascend_accuracy.core.cache import Cache

    model = tmp_path / "det.onnx"
    onnx.save(near_tie_detector(), str(model))
    cached = golden_dump(model, make_inputs(model), cache=Cache(tmp_path / "cache"))
    return model, cached, store_golden(tmp_path / "golden", cached)


def test_the_topk_is_fed_the_scores_it_ranked_and_the_golden_still_holds_no_inputs(stored):
    """The fed input is no input the golden holds: the graph's edges read from its operand files
    stay unknown (a TopK's input made them look known, with no producer for any other op, and
    the CLI's hint for a tiny float32 output said nothing upstream outputs float16: review), and
    ``--accuracy-store-inputs`` still finds a golden of outputs only."""
    from pytest_ascend_accuracy.compare.fp16_range import input_producers

    model, cached, path = stored
    golden = read_golden(path)
    (fed,) = golden["topk"].fed_inputs
    assert fed.slot == "input:0" and fed.source == golden["scores"].output(0).source
    np.testing.assert_array_equal(fed.load(), cached["topk"].inputs[0].load())
    assert all(not op.inputs for op in golden)
    assert all(not op.fed_inputs for op in golden if op.name != "topk")
    assert input_producers(golden) is None
    assert input_producers(golden, model) is not None  # (the model's edges, as before)


def test_a_changed_model_feeds_nothing(stored):
    model, _, path = stored
    proto = onnx.load(str(model))
    proto.doc_string = "changed"
    onnx.save(proto, str(model))
    assert not read_golden(path)["topk"].fed_inputs


def test_a_model_without_a_topk_leaves_the_golden_as_read(tmp_path):
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.dump.loader import load_dump
    from pytest_ascend_accuracy.golden.stored_record import recorded_model
    from pytest_ascend_accuracy.golden.stored_topk_inputs import with_topk_inputs
    from pytest_ascend_accuracy.testing import models

    model = tmp_path / "m.onnx"
    onnx.save(models.overflow_model(), str(model))
    path = store_golden(tmp_path / "golden", golden_dump(model, make_inputs(model),
                                                         cache=Cache(tmp_path / "cache")))
    golden = load_dump(path)
    assert recorded_model(path).resolve() == model.resolve()
    assert with_topk_inputs(golden, recorded_model(path)) is golden


def test_the_models_feeds_are_read_once(stored):
    """Each test reading the golden asked the model again: a 50 MB model's parse took 0.13 s
    at every read (review)."""
    from pytest_ascend_accuracy.golden.stored_topk_inputs import _topk_feeds

    model = stored[0]
    assert _topk_feeds(model) == {"topk": ("scores", 0)}
    assert _topk_feeds(model) is _topk_feeds(model)
