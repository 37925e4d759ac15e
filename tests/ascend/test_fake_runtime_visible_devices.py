"""The FAKE pyACL / ais_bench honour ``ASCEND_RT_VISIBLE_DEVICES`` as the CANN page says
(envref_07_0028): listed logical ids, seen as devices ``0..n-1``; reading stops at the first
character that is not a digit or a comma and at the first invalid id."""
import pytest

from pytest_ascend_accuracy.testing import fake_runtime
from pytest_ascend_accuracy.testing.fake_npu import ACL_ERROR_INVALID_DEVICE, ACL_SUCCESS


@pytest.fixture
def acl(monkeypatch):
    fake_runtime.install(monkeypatch, flavor="acl", device_count=8)
    import acl

    assert acl.init() == ACL_SUCCESS
    return acl


@pytest.mark.parametrize("value, seen", [
    ("1", [1]),
    ("1,2,3", [1, 2, 3]),
    ("1, 2,3", [1]),        # the page's example: reading stops at the space
    ("1,3,8", [1, 3]),      # the page's example: 8 is no device of an 8-device machine
    ("a1", []),
    ("", list(range(8))),   # assumed: as if unset
])
def test_the_visible_list_is_read_as_the_page_says(monkeypatch, acl, value, seen):
    monkeypatch.setenv("ASCEND_RT_VISIBLE_DEVICES", value)
    assert acl.rt.get_device_count() == (len(seen), ACL_SUCCESS)


def test_devices_are_numbered_by_their_place_in_the_list(monkeypatch, acl):
    monkeypatch.setenv("ASCEND_RT_VISIBLE_DEVICES", "6,7")
    assert acl.rt.get_device_count() == (2, ACL_SUCCESS)
    assert acl.rt.set_device(1) == ACL_SUCCESS  # device 7
    assert acl.rt.set_device(6) == ACL_ERROR_INVALID_DEVICE  # its logical id is no index here
    assert acl.rt.set_device(2) == ACL_ERROR_INVALID_DEVICE


def test_unset_every_device_is_seen(monkeypatch, acl):
    monkeypatch.delenv("ASCEND_RT_VISIBLE_DEVICES", raising=False)
    assert acl.rt.get_device_count() == (8, ACL_SUCCESS)
    assert acl.rt.set_device(7) == ACL_SUCCESS


def test_ais_bench_sessions_use_the_index_too(monkeypatch, tmp_path):
    fake_runtime.install(monkeypatch, flavor="ais_bench", device_count=2)
    monkeypatch.setenv("ASCEND_RT_VISIBLE_DEVICES", "1")
    from ais_bench.infer.interface import InferSession

    with pytest.raises(RuntimeError, match=r"aclrtSetDevice\(1\) failed"):
        InferSession(1, str(tmp_path / "missing.om"))
