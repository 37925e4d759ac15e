"""The library side of the trial's hint fixes (the plugin side is
tests/plugin/test_hint_trial_fixes.py): ``assert_accuracy`` looks at the golden operands of
ignored ops upstream of its failures (where the golden tells its edges; never guessed), and
``ops_upstream`` follows a graph's edges, never guessing them."""
import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy

pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def overflow(tmp_path_factory):
    """(model path, emulated default-mode dump, stored golden with its operators' inputs)."""
    from pytest_ascend_accuracy.testing import models
    from pytest_ascend_accuracy.testing.emulated_pair import emulated_pair

    pair = emulated_pair(tmp_path_factory.mktemp("overflow"), models.overflow_model(),
                         name="overflow", store_inputs=True)
    return pair.model, pair.dump, pair.golden


def test_assert_accuracy_names_the_ignored_op_whose_operand_overflows(overflow, tmp_path):
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    path, actual, stored = overflow
    model = onnx.load(str(path))
    cached = golden_dump(model, make_inputs(model), cache=Cache(tmp_path))  # tells its edges
    with pytest.raises(AccuracyFailure) as exc:
        assert_accuracy(actual, cached, 0.95, ignore=["norm", "to_flat"])
    hint = str(exc.value).splitlines()[-1]
    assert "no float16 overflow seen" not in hint
    assert hint.startswith("next step: golden operands leave the float16 range (norm input:4 "
                           "reaches |1e+09|; norm is ignored but feeds the failing ops)"), hint
    assert "keep_dtype(['norm'])" in hint
    # a golden that tells no edges (operands stored as files of their own): an ignored op is
    # not guessed to feed the failure by graph order (a review: a side branch's fault got it)
    with pytest.raises(AccuracyFailure) as exc:
        assert_accuracy(actual, stored, 0.95, ignore=["norm", "to_flat"])
    assert "norm is ignored but feeds" not in str(exc.value)
    assert "the ignored ops' operands were not looked at (the golden tells no edges" in str(
        exc.value)


def test_cli_compare_says_the_ignored_ops_were_not_looked_at(overflow, tmp_path, capsys):
    """``compare --ignore`` takes the same path as assert_accuracy (it looked at the failing
    ops alone and said "no float16 overflow seen" of a golden it could not tell edges from).
    A stored golden whose record names its model, still there, tells its edges through it."""
    import shutil

    from pytest_ascend_accuracy.cli import app as cli

    _, actual, stored = overflow
    argv = ["compare", actual, stored, "--ignore", "norm", "--ignore", "to_flat"]
    assert cli.main(argv) == 1
    out = capsys.readouterr().out
    assert "norm is ignored but feeds the failing ops" in out, out
    moved = tmp_path / "elsewhere" / "golden"  # (its record names ../overflow.onnx: not there)
    shutil.copytree(stored, moved)
    assert cli.main(["compare", actual, str(moved), "--ignore", "norm",
                     "--ignore", "to_flat"]) == 1
    assert "the ignored ops' operands were not looked at" in capsys.readouterr().out


def test_ops_upstream_follows_edges_from_the_model_or_the_golden_files(overflow, tmp_path):
    from pytest_ascend_accuracy.compare.fp16_range import ops_upstream
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    path, _, golden = overflow
    model = onnx.load(str(path))
    up = ["fc1/MatMul", "fc1/Add", "to_channels", "norm", "to_flat"]
    cached = golden_dump(model, make_inputs(model), cache=Cache(tmp_path))  # operands: files
    assert list(ops_upstream(cached, ["fc2/MatMul"])) == up  # of the outputs feeding them
    assert list(ops_upstream(cached, ["norm"])) == up[:3]
    # operands stored as files of their own, or outputs only: no edges, none guessed
    assert ops_upstream(load_dump(golden), ["fc2_MatMul"]) is None
    outputs_only = DumpSet.from_arrays({op.name: [np.zeros(2, np.float32)] for op in cached})
    assert ops_upstream(outputs_only, ["fc2/MatMul"]) is None
    assert list(ops_upstream(outputs_only, ["norm"], model=str(path))) == up[:3]
