"""A device that does not exist is the error, not advice to pass a soc version (CI trial
finding 2): with one, conversion goes on and every run fails on the device."""
import pytest

from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.errors import BackendError, ConfigError
from pytest_ascend_accuracy.testing import fake_runtime


def test_a_missing_device_is_named_without_soc_advice(tmp_path, monkeypatch):
    fake_runtime.install(monkeypatch, flavor="acl", device_count=2)
    backend = AscendBackend(Cache(tmp_path / "cache"), device_id=5, progress=None)
    with pytest.raises(BackendError) as info:
        backend.soc_version()
    assert str(info.value) == ("Ascend device 5 does not exist: this machine has 2 device(s) "
                               "(ids 0..1)")


def test_a_runtime_that_cannot_report_still_gets_the_advice(tmp_path, monkeypatch):
    state = fake_runtime.install(monkeypatch, flavor="acl", device_count=2)
    monkeypatch.setattr(state, "soc_name", "")  # the device opens; no chip name comes back
    backend = AscendBackend(Cache(tmp_path / "cache"), device_id=1, progress=None)
    with pytest.raises(ConfigError, match="pass --soc-version=Ascend310P3"):
        backend.soc_version()
