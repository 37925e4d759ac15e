"""A failed pyACL call's error carries what the runtime said about it (``acl.get_recent_err_msg``,
asked right after the failing call): "ACL error 500002" alone told a user nothing (a README walk
on the fakes: the fake had recorded "cannot apply AIPP", the backend never asked)."""
import types

import numpy as np
import pytest

from pytest_ascend_accuracy.backends.ascend.acl_driver import runtime_says
from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.errors import BackendError
from pytest_ascend_accuracy.testing import fake_runtime


def test_a_failed_load_says_why_and_the_next_error_does_not_repeat_it(
        fake_atc_on_path, tiny_model, tmp_path, monkeypatch):
    aipp = tmp_path / "aipp.cfg"
    aipp.write_text("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n"
                    " src_image_size_w: 4\n src_image_size_h: 4\n}\n")
    npu = fake_runtime.install(monkeypatch, flavor="acl")
    be = AscendBackend(Cache(tmp_path / "cache"), progress=None)
    converted = be.convert(tiny_model, atc_options={"insert_op_conf": str(aipp)})
    x = np.zeros((1, 3, 4, 4), np.float32)
    with pytest.raises(BackendError) as info:
        be.run(converted, {"x": x})
    lines = str(info.value).splitlines()
    assert "failed with ACL error" in lines[0] and "acl.mdl.load_from_file" in lines[0]
    assert lines[1] == "the runtime says (acl.get_recent_err_msg()):"
    assert lines[2].startswith("  ") and lines[2].endswith(
        "the fake runtime cannot apply AIPP (--insert_op_conf)")
    assert npu.unread_errors == []  # asked, so cleared, as pyACL's own
    npu.record_error("left unread by an earlier call")  # (an unload's, say)
    with pytest.raises(BackendError) as again:
        be.run(converted, {"x": x})
    assert "cannot apply AIPP" in str(again.value)
    assert "left unread" not in str(again.value)  # not this run's: dropped when it began
    plain = be.convert(tiny_model)
    be.run(plain, {"x": x})  # the same session goes on
    be.close()


def test_what_the_runtime_says_is_indented_under_the_error_and_its_absence_adds_nothing():
    def acl(said):
        return types.SimpleNamespace(get_recent_err_msg=lambda: said)

    assert runtime_says(acl("EE1001: bad\n    TraceBack:\n\n  x\n")) == (
        "\nthe runtime says (acl.get_recent_err_msg()):\n  EE1001: bad\n      TraceBack:\n    x")
    assert runtime_says(acl(None)) == ""  # "None on failure", the documented return
    assert runtime_says(acl("  \n")) == ""
    assert runtime_says(types.SimpleNamespace()) == ""  # a pyACL without the function

    def broken():
        raise RuntimeError("no")

    assert runtime_says(types.SimpleNamespace(get_recent_err_msg=broken)) == ""


def test_a_failed_finalize_dump_says_its_own_message_not_the_unload_after_it(
        fake_atc_on_path, tiny_model, tmp_path, monkeypatch):
    import sys

    npu = fake_runtime.install(monkeypatch, flavor="acl")
    be = AscendBackend(Cache(tmp_path / "cache"), progress=None)
    converted = be.convert(tiny_model)
    acl = sys.modules["acl"]
    finalize, unload = acl.mdl.finalize_dump, acl.mdl.unload

    def failing_finalize():
        finalize()
        npu.record_error("dump data could not be flushed")
        return 100000

    def noisy_unload(model_id):
        npu.record_error("unload said something")
        return unload(model_id)

    monkeypatch.setattr(acl.mdl, "finalize_dump", failing_finalize)
    monkeypatch.setattr(acl.mdl, "unload", noisy_unload)
    with pytest.raises(BackendError) as info:
        be.run(converted, {"x": np.zeros((1, 3, 4, 4), np.float32)}, dump_dir=tmp_path / "d")
    text = str(info.value)
    assert text.startswith("acl.mdl.finalize_dump failed with ACL error 100000")
    assert "dump data could not be flushed" in text and "unload said" not in text
    be.close()


def test_opening_drops_what_init_and_the_device_count_left_unread(monkeypatch):
    """An init repeat (another user of ACL in the process) is tolerated and its message, like an
    unchecked device count's, is not set_device's (a review)."""
    import sys

    from pytest_ascend_accuracy.backends.ascend.acl_driver import AclDriver

    npu = fake_runtime.install(monkeypatch, flavor="acl")
    acl = sys.modules["acl"]
    set_device = acl.rt.set_device

    def noisy_count():
        npu.record_error("repeat initialize, tolerated")
        return 2, 0

    def failing_set_device(device_id):
        set_device(device_id)
        npu.record_error("device is busy")
        return 507033

    monkeypatch.setattr(acl.rt, "get_device_count", noisy_count)
    monkeypatch.setattr(acl.rt, "set_device", failing_set_device)
    with pytest.raises(BackendError) as info:
        AclDriver(0).open()
    text = str(info.value)
    assert "acl.rt.set_device returned ACL error 507033" in text and "device is busy" in text
    assert "repeat initialize" not in text


def test_a_failed_device_count_is_kept_for_the_set_device_error_after_it(monkeypatch):
    """Its cause may be set_device's too: dropped with the stale messages, it was lost."""
    import sys

    from pytest_ascend_accuracy.backends.ascend.acl_driver import AclDriver

    npu = fake_runtime.install(monkeypatch, flavor="acl")
    acl = sys.modules["acl"]

    def failing_count():
        npu.record_error("driver not loaded")
        return 0, 507899

    monkeypatch.setattr(acl.rt, "get_device_count", failing_count)
    monkeypatch.setattr(acl.rt, "set_device", lambda device_id: 507033)
    with pytest.raises(BackendError) as info:
        AclDriver(0).open()
    assert str(info.value).endswith("(acl.rt.get_device_count had failed too, ACL error 507899"
                                    "\nthe runtime says (acl.get_recent_err_msg()):\n"
                                    "  driver not loaded)")
