"""The hint of a failure at or after a TopK whose order moved (``report.after_selection``),
on device dumps made by hand from the near-tie detector's golden: the device's TopK of the
golden scores moved by a small error (near ties), the ops after it recomputed from its
indices. A TopK that only reordered near ties gets the selection hint; one with a real wrong
pick among them fails at itself, and its hint says what was found before its own advice; a
golden whose edges are not known, and a first failure before the selection, keep the hint
they had."""
import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from near_tie_detector import AFTER, near_tie_detector  # noqa: E402
from pytest_ascend_accuracy.compare.engine import compare_dumps  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.dump.model import DumpSet  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
from pytest_ascend_accuracy.report.hints import hint_for  # noqa: E402

K = 100


@pytest.fixture(scope="module")
def golden(tmp_path_factory):
    model = near_tie_detector()
    cache = Cache(tmp_path_factory.mktemp("cache"))
    return model, golden_dump(model, make_inputs(model, seed=0), cache=cache)


def _device(golden, wrong_pick=False, broken_scores=False):
    """A device dump: the golden's values in float16, the TopK of its scores moved by up to
    5e-3 (near ties), the ops after it computed from the device's indices; ``wrong_pick``: its
    last index one far below the cut; ``broken_scores``: the scores themselves off."""
    outs = {op.name: [np.asarray(t.load()) for t in op.outputs] for op in golden.ops}
    types = {n.name: n.op_type for n in near_tie_detector().graph.node}  # (a golden has none)
    scores = outs["scores"][0].astype(np.float64)
    if broken_scores:
        outs["scores"] = [-outs["scores"][0]]
    moved = scores + np.random.default_rng(7).uniform(-5e-3, 5e-3, scores.shape)
    idx = np.argsort(-moved, axis=-1, kind="stable")[:, :K]
    values = np.take_along_axis(moved, idx, -1)
    if wrong_pick:  # the right values, one index wrong (a kernel's fault)
        idx[0, -1] = int(np.argmin(scores))
    picked = _boxes()[idx]
    with np.errstate(over="ignore"):
        area = (picked.astype(np.float16) * np.float16(3e4)).astype(np.float16)
    outs.update(topk=[values.astype(np.float16), idx.astype(np.int32)],
                gather=[picked.astype(np.float16)], area=[area],
                side=[np.sqrt(area.astype(np.float32)).astype(np.float16)])
    cast = {name: [a.astype(np.float16) if a.dtype == np.float32 else a for a in arrays]
            for name, arrays in outs.items()}
    return DumpSet.from_arrays(cast, op_types=types, kind="ascend")


def _boxes():
    """The detector's box table (its initializer)."""
    from onnx import numpy_helper

    model = near_tie_detector()
    return next(numpy_helper.to_array(t) for t in model.graph.initializer if t.name == "boxes")


def _hint(golden_pair, **device):
    model, golden = golden_pair
    result = compare_dumps(_device(golden, **device), golden)
    verdict = result.judge(0.99)
    return verdict, hint_for(verdict, golden, result=result, model=model)


def test_near_ties_only_get_the_selection_hint(golden):
    verdict, hint = _hint(golden)
    assert verdict.first.row.op_name == "gather"
    assert hint.reason.startswith("the first failing op gather comes after topk:output:1, a "
                                  "selection (TopK) whose differing indices all reorder ")
    assert f"@accuracy(ignore={list(AFTER)!r})" in hint.advice
    assert [m.keep_dtype for m in hint.modes] == [("area", "side")]


def test_a_wrong_pick_fails_at_the_topk_and_says_what_was_found(golden):
    verdict, hint = _hint(golden, wrong_pick=True)
    row = verdict.first.row
    assert row.label == "topk:output:1" and row.metrics.unequal >= 1
    assert "near_ties" in row.flags
    assert hint.reason.startswith("topk:output:1's indices are partly near ties (the same "
                                  "elements within the device's own error, in another order")
    lead, _, own = hint.reason.partition("; ")
    assert lead.endswith("the others not, picks the device made otherwise by more than that "
                         "error") and own  # the hint it had follows
    assert "ignore=" not in hint.advice  # a real wrong pick is not offered hidden


def test_without_the_graph_edges_the_hint_is_the_one_it_had(golden):
    """No model, and a golden whose operands are arrays of their own (no files naming their
    producers): which ops follow the TopK is not known."""
    _, full = golden
    gold = DumpSet.from_arrays({op.name: [t.load() for t in op.outputs] for op in full.ops},
                               inputs={op.name: [t.load() for t in op.inputs] for op in full.ops})
    result = compare_dumps(_device(full), gold)
    verdict = result.judge(0.99)
    assert verdict.first.row.op_name == "gather"  # the TopK's reorders forgiven all the same
    hint = hint_for(verdict, gold, result=result)
    assert "comes after topk" not in hint.reason


def test_a_first_failure_before_the_selection_keeps_its_hint(golden):
    verdict, hint = _hint(golden, broken_scores=True)
    assert verdict.first.row.op_name == "scores"
    assert "comes after topk" not in hint.reason and "near ties" not in hint.reason


def test_the_command_lines_hint_says_the_same(golden):
    """``cli.selection_hint``: after the selection, the ``--ignore`` flags of the same ops;
    at a TopK with a real wrong pick, what was found, then the hint it gets without."""
    from pytest_ascend_accuracy.cli.selection_hint import selection_hint

    model, gold = golden
    for wrong_pick in (False, True):
        result = compare_dumps(_device(gold, wrong_pick=wrong_pick), gold)
        verdict = result.judge(0.99)
        text = selection_hint(verdict, (), result, gold, model, otherwise=lambda: "OWN HINT")
        if wrong_pick:
            assert text.startswith("topk:output:1's indices are partly near ties")
            assert text.endswith("by more than that error; OWN HINT")
        else:
            assert text.startswith("the first failing op gather comes after topk:output:1")
            assert ("add to this command --ignore gather --ignore area --ignore side, which "
                    "ignore the 3 ops after it (every failing op is among them)") in text
    assert selection_hint(verdict, (), result, None, model) is None  # (judge: no golden)
