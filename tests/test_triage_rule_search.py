"""``diagnose``'s fusion rule search (a user trial on PP-OCRv4 det): the ops a rule verdict
names are the ops it fused, not every op whose result changed."""
import pytest

pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.backends.emulator import EmulatorBackend, Fault  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.triage.flow import diagnose  # noqa: E402

RULE = "GraphFusion:ConvBatchnormFusionPass"
FAULT = [Fault.on_rule("ConvBatchnormFusionPass")]


@pytest.fixture
def cache(tmp_path):
    return Cache(tmp_path / "cache")


def run(model, cache, **kw):
    return diagnose(model, backend=EmulatorBackend(cache, faults=FAULT), cache=cache, **kw)


def test_a_rule_verdict_names_the_ops_the_rule_fused(cache):
    from pytest_ascend_accuracy.testing import models

    d = run(models.conv_bn_relu(), cache)
    assert d.restored_by == "fusion_rules"
    assert d.verdict.endswith(f"the fusion rule(s) to switch off: {RULE} (ops fused under "
                              f"default, not with it off: conv1+bn1+relu1, conv2+bn2+relu2)"), \
        d.verdict
    assert "fused ops:" not in d.verdict


def test_without_an_om_json_the_fused_ops_are_not_told():
    from types import SimpleNamespace

    from pytest_ascend_accuracy.triage.fusion_rules import unfused

    assert unfused(SimpleNamespace(om_json=None), SimpleNamespace(om_json=None)) is None
