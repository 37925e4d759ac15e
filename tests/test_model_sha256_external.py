"""``model_sha256``, what baselines and stored goldens record of their model, covers a model
file's ONNX external data: retrained weights in ``model.onnx.data`` leave the ``.onnx`` bytes
as they were, and a stored golden of the old weights was used silently (the check then failed,
blaming an operator) while a baseline never said the model changed. A model without external
data still gives ``sha256sum model.onnx``, so records written before stay valid."""
import hashlib
import os

import numpy  # noqa: F401  (imported once, before any inner pytester run)
import onnx
import onnxruntime  # noqa: F401
import pytest

import pytest_ascend_accuracy.plugin  # noqa: F401
from pytest_ascend_accuracy.graph import content_digests
from pytest_ascend_accuracy.graph.content_digests import model_sha256
from pytest_ascend_accuracy.testing import models

MAKE = '''
import sys
import numpy as np
import onnx
from onnx import numpy_helper
from onnx.external_data_helper import convert_model_to_external_data
from pytest_ascend_accuracy.testing.models import passing_mlp


def save(path, scale):
    """passing_mlp with its weights (times ``scale``) in ``<path>.data``: the .onnx bytes do
    not depend on the weights."""
    m = passing_mlp()
    for t in m.graph.initializer:
        a = numpy_helper.to_array(t) * np.float32(scale)
        t.CopyFrom(numpy_helper.from_array(a.astype(np.float32), t.name))
    convert_model_to_external_data(m, all_tensors_to_one_file=True,
                                   location=path.rsplit("/", 1)[-1] + ".data", size_threshold=0)
    onnx.save(m, path)
'''


def _save(path, scale):
    namespace = {}
    exec(MAKE, namespace)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(f"{path}.data"):  # onnx.save appends to an existing data file
        os.remove(f"{path}.data")
    namespace["save"](str(path), scale)


@pytest.fixture
def later(monkeypatch):
    """The digests' settled clock a minute ahead (files written now may be remembered)."""
    real = content_digests._now
    monkeypatch.setattr(content_digests, "_now", lambda: real() + 60 * 10 ** 9)
    content_digests.forget_digests()
    yield
    content_digests.forget_digests()


def test_without_external_data_it_is_sha256sum_of_the_file(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(models.passing_mlp(), str(path))
    assert model_sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    assert model_sha256(str(path)) == model_sha256(path.read_bytes())


def test_external_data_is_covered_and_a_retrain_changes_it(tmp_path, later):
    path = tmp_path / "ext.onnx"
    _save(path, 1.0)
    data = tmp_path / "ext.onnx.data"
    onnx_bytes = path.read_bytes()
    first = model_sha256(path)
    assert first == hashlib.sha256(onnx_bytes + data.read_bytes()).hexdigest()
    assert model_sha256(path) == first  # remembered by the files' stamps
    _save(path, 1.01)  # retrained: same .onnx bytes, other weights
    assert path.read_bytes() == onnx_bytes
    second = model_sha256(path)
    assert second != first
    assert second == hashlib.sha256(onnx_bytes + data.read_bytes()).hexdigest()
    # the cache's digest and the sha256 are remembered apart
    assert content_digests.model_digest(path).split(":")[0] != "sha256"
    assert model_sha256(path) == second


def test_a_remembered_sha256_is_not_hashed_again(tmp_path, monkeypatch, later):
    path = tmp_path / "ext.onnx"
    _save(path, 1.0)
    hashed = []
    real = content_digests._hash_file
    monkeypatch.setattr(content_digests, "_hash_file",
                        lambda p, h, look_for=b"": hashed.append(p) or real(p, h, look_for))
    model_sha256(path)
    assert len(hashed) == 2  # the model and its data file
    model_sha256(path)
    assert len(hashed) == 2


GOLDEN_TEST = '''
from pytest_ascend_accuracy import accuracy

@accuracy(threshold=0.99)
def test_ext(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    M = "models/ext.onnx"
    inputs = accuracy_inputs(M, seed=0)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs, path="golden/ext"))
'''


def test_a_stored_golden_of_the_old_external_weights_is_refused(pytester):
    pytester.makepyfile(test_ext_stored_golden=GOLDEN_TEST)
    model = pytester.path / "models" / "ext.onnx"
    _save(model, 1.0)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)  # written
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    before = model.read_bytes()
    _save(model, -0.5)  # retrained weights, the .onnx bytes unchanged
    assert model.read_bytes() == before
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*golden/ext: this stored golden was written from another model*",
        "  model: written from models/ext.onnx (sha256 *), this test's model is "
        "models/ext.onnx (sha256 *)",
        "*test_ext_stored_golden.py:*: StoredGoldenMismatch"])
    result.stdout.no_fnmatch_line("*accuracy FAILED*")  # no operator blamed


BASELINE_TEST = '''
from pytest_ascend_accuracy import accuracy

@accuracy(threshold=0.9, max_drop=0.01)
def test_ext(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    M = "models/ext.onnx"
    inputs = accuracy_inputs(M, seed=0)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
'''


def test_a_baseline_notices_retrained_external_weights(pytester):
    pytester.makepyfile(test_ext_baseline=BASELINE_TEST)
    model = pytester.path / "models" / "ext.onnx"
    _save(model, 1.0)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)  # baseline written
    quiet = pytester.runpytest("-p", "no:cacheprovider")
    quiet.assert_outcomes(passed=1)
    assert "ModelChangedWarning" not in quiet.stdout.str()
    before = model.read_bytes()
    _save(model, 1.01)  # the same network, weights nudged by a retrain
    assert model.read_bytes() == before
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*ModelChangedWarning: accuracy-baselines/models/ext/default.yaml"
                                 ": the model file changed since this baseline was recorded*"])
