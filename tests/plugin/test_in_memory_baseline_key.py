"""An in-memory model's baseline is keyed by its graph name and the test that checks it (its
node id without the parametrization): a retrained model keeps its baseline, judged with a
``ModelChangedWarning`` as a file model is (keyed by its bytes, it was orphaned: "baseline
missing"), and two tests' models of one graph name (exporters reuse ``main_graph``) never share
one. Baselines at the earlier places (graph name alone; graph name and the model's digest) are
used, with the command moving them, when they record this model's sha256."""
import inspect
import re
import shutil

import numpy as np
import yaml
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.graph.content_digests import model_sha256


def _model(scale):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])
    w = numpy_helper.from_array((np.eye(16) * scale).astype(np.float32), "w")
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "w"], ["y"], name="mm")]
    model = helper.make_model(helper.make_graph(nodes, "main_graph", [x], [y], [w]),
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


# the test file builds its model with this very function
TEST_MEM = '''
from pathlib import Path
import numpy as np
from onnx import TensorProto, helper, numpy_helper
from pytest_ascend_accuracy import accuracy


''' + inspect.getsource(_model) + '''

SCALE = float(Path(__file__).with_name("scale.txt").read_text())


@accuracy(threshold=0.9, max_drop=0.01)
def test_mem(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    model = _model(SCALE)
    inputs = accuracy_inputs(model, seed=0)
    check_accuracy(ascend_model(model).run(inputs), golden_dump(model, inputs))


@accuracy(threshold=0.9, max_drop=0.01)
def test_other(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    model = _model(SCALE)  # the very same model in another test: a baseline of its own
    inputs = accuracy_inputs(model, seed=0)
    check_accuracy(ascend_model(model).run(inputs), golden_dump(model, inputs))
'''


def _baselines(pytester):
    return sorted(p.relative_to(pytester.path).as_posix()
                  for p in (pytester.path / "accuracy-baselines").rglob("*.yaml"))


def _project(pytester, scale=0.5):
    pytester.makepyfile(test_mem_key=TEST_MEM)
    (pytester.path / "scale.txt").write_text(str(scale))


def _run(pytester, *args):
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def test_the_key_is_the_graph_name_and_the_test_without_its_parametrization(tmp_path):
    from pytest_ascend_accuracy.baseline.env import (locate_baseline, model_key, owner_digest,
                                                     owner_of)

    a, b = _model(0.5), _model(0.6)
    assert owner_of("tests/test_a.py::test_mem[x-1]") == "tests/test_a.py::test_mem"
    assert owner_of("t.py::TestX::test_mem[a::b]") == "t.py::TestX::test_mem"
    owner = "tests/test_a.py::test_mem"
    key = model_key(a, tmp_path, owner)
    assert key == f"main_graph-{owner_digest(owner)}"
    assert re.fullmatch(r"main_graph-[0-9a-f]{8}", key)
    assert model_key(b, tmp_path, owner) == key  # retrained: the same baseline
    assert model_key(a, tmp_path, "tests/test_b.py::test_mem") != key  # another test: its own
    # a library caller naming no test: the graph name and the model's digest, as before
    assert model_key(a, tmp_path) == f"main_graph-{model_sha256(a)[:10]}" != model_key(b, tmp_path)
    assert locate_baseline(tmp_path, a, "default", tmp_path, owner).path == \
        tmp_path / key / "default.yaml"


def test_a_retrained_in_memory_model_keeps_its_baseline_and_is_judged(pytester):
    _project(pytester, 0.5)
    _run(pytester).assert_outcomes(failed=2)  # both baselines missing: written
    files = _baselines(pytester)
    # the same model in two tests: two baselines
    assert len(files) == 2 and all(re.fullmatch(
        r"accuracy-baselines/main_graph-[0-9a-f]{8}/default\.yaml", f) for f in files), files
    quiet = _run(pytester)
    quiet.assert_outcomes(passed=2)
    assert "ModelChangedWarning" not in quiet.stdout.str()
    (pytester.path / "scale.txt").write_text("0.505")  # weights nudged by a retrain
    result = _run(pytester)
    result.assert_outcomes(passed=2)  # judged against its baseline, not "baseline missing"
    result.stdout.fnmatch_lines(["*ModelChangedWarning: accuracy-baselines/main_graph-*/"
                                 "default.yaml: the model changed since this baseline was "
                                 "recorded*"])
    assert "baseline missing" not in result.stdout.str()
    assert _baselines(pytester) == files


def test_a_baseline_at_the_graph_name_and_digest_place_is_moved_when_it_is_this_models(pytester):
    _project(pytester, 0.5)
    _run(pytester, "-k", "not other").assert_outcomes(failed=1)
    (written,) = (pytester.path / f for f in _baselines(pytester))
    sha = yaml.safe_load(written.read_text())["info"]["model_sha256"]
    assert sha == model_sha256(_model(0.5))
    old = pytester.path / "accuracy-baselines" / f"main_graph-{sha[:10]}"  # written earlier today
    old.mkdir()
    shutil.move(str(written), old / "default.yaml")
    written.parent.rmdir()
    result = _run(pytester, "-k", "not other")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "*MovedFileWarning: the accuracy baselines folder "
        f"accuracy-baselines/main_graph-{sha[:10]} was found at its old location only; it "
        "belongs at accuracy-baselines/main_graph-* "
        "(baselines of in-memory models are now keyed by graph name and test)*"])
    # another model (retrained) finds no baseline of its own there
    (pytester.path / "scale.txt").write_text("0.505")
    other = _run(pytester, "-k", "not other")
    other.assert_outcomes(failed=1)
    other.stdout.fnmatch_lines(["*baseline*did not exist: wrote it from this run*"])
