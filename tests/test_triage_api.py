"""``diagnose()`` from a script takes what the CLI and the plugin take, and refuses what they
refuse (a review of the library API): a preset's name as ``mode`` (it crashed), misspelled
per_op/ignore/keep_dtype names (they ran and judged or kept nothing), a non-cosine metric
without its threshold (judged at the cosine's 0.95); ``keep_dtype("norm")`` is one name."""
import pytest

from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
from pytest_ascend_accuracy.core.modes import keep_dtype
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.testing import models
from pytest_ascend_accuracy.triage.flow import diagnose


@pytest.fixture
def cache(tmp_path):
    from pytest_ascend_accuracy.core.cache import Cache

    return Cache(tmp_path / "cache")


def run(cache, **kw):
    return diagnose(models.overflow_model(), backend=EmulatorBackend(cache), cache=cache, budget=2,
                    **kw)


def test_a_presets_name_is_a_mode(cache):
    d = run(cache, mode="high_precision")
    assert d.steps[0].mode == "high_precision" and d.fixed


@pytest.mark.parametrize("kw, message", [
    ({"per_op": {"nrom": 0.5}}, "diagnose: per_op entry 'nrom' is not an op of model"),
    ({"ignore": ["nrom"]}, "diagnose: ignore entry 'nrom' is not an op of model"),
    ({"mode": keep_dtype(["nrom"])}, "keep_dtype entry 'nrom' is not an op of model"),
    ({"mode": "fusion_of"}, "unknown mode 'fusion_of'"),
    ({"metric": "rel_l2"}, "metric='rel_l2' needs an explicit threshold"),
])
def test_what_the_cli_refuses_is_refused(cache, kw, message):
    with pytest.raises(ConfigError, match=message):
        run(cache, **kw)


def test_keep_dtype_of_one_name_keeps_that_op():
    assert keep_dtype("norm").keep_dtype == ("norm",)


def test_a_fused_ops_name_the_plugin_accepted_is_taken(cache):
    """A marker's per_op naming the device's fused op (conv1relu1) passes the plugin's check
    against the dumps, and --accuracy-diagnose hands it to diagnose(), which refused it as no
    op of the model: the failure got 'could not run' instead of a diagnosis (review)."""
    d = diagnose(models.conv_bn_relu(), backend=EmulatorBackend(cache), cache=cache, budget=1,
                 per_op={"conv1relu1": 0.5, "conv1bn1relu1:output:0": 0.5})
    assert d.steps
