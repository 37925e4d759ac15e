"""A diagnosis whose first failure was judged by a per_op entry of another metric says what the
fix restores there too: MTCNN's ``per_op={'conv2d_4': {'max_abs': 1e-3}}`` failed at 0.001263,
and the diagnosis said only "keep_dtype {conv2d} restores cosine 0.999999" (audit 34)."""
import pytest

from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.triage.flow import diagnose
from pytest_ascend_accuracy.triage.report import text
from tests.plugin.test_op_named_like_a_tensor import _dense


@pytest.fixture
def cache(tmp_path):
    return Cache(tmp_path / "cache")


def test_the_fix_sentence_gives_the_per_op_entrys_own_figure(cache, tmp_path):
    model = _dense(tmp_path / "dense.onnx")  # its output, about 100, fails max_abs 0.01
    d = diagnose(str(model), backend=EmulatorBackend(cache), cache=cache, budget=8,
                 threshold=0.99, per_op={"Add1": {"max_abs": 0.01}})
    assert d.fixed
    headline = text(d).splitlines()[1]
    assert "default fails at op dense_6;" in headline
    assert " restores cosine 1.000000; dense_6 max_abs 0.000000 <= 0.01 under fp16" in headline


def test_a_cosine_failure_keeps_its_one_figure(cache, tmp_path):
    model = _dense(tmp_path / "dense.onnx")
    d = diagnose(str(model), backend=EmulatorBackend(cache), cache=cache, budget=8,
                 threshold=0.9999999999)
    headline = text(d).splitlines()[1]
    assert "max_abs" not in headline and "restores cosine" in headline, headline
