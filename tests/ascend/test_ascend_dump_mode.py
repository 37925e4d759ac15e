"""AscendBackend ``dump_mode``: the backend's setting, the per-run override ``run(dump_mode=...)``
written into that run's acl.json, and unknown modes -- against the FAKE runtime and fake atc
(which honour acl.json ``dump_mode`` as ACL does)."""
import json

import numpy as np
import pytest

from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.core.modes import DEFAULT
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.testing import fake_runtime

pytest.importorskip("onnxruntime")


@pytest.fixture
def x():
    return np.random.default_rng(7).standard_normal((1, 3, 4, 4)).astype(np.float32)


def _backend(tmp_path, monkeypatch, **kw):
    fake_runtime.install(monkeypatch, flavor="acl")
    return AscendBackend(Cache(tmp_path / "cache"), device_id=0, progress=None, **kw)


def _acl_mode(ds):
    return json.loads(open(ds.meta["acl_json"]).read())["dump"]["dump_mode"]


def test_per_run_dump_mode_goes_into_that_runs_acl_json(tmp_path, monkeypatch, tiny_model, x,
                                                        fake_atc_on_path):
    backend = _backend(tmp_path, monkeypatch)
    try:
        converted = backend.convert(tiny_model, DEFAULT)
        full = backend.run(converted, {"x": x})
        out = backend.run(converted, {"x": x}, dump_mode="output")
        ins = backend.run(converted, {"x": x}, dump_mode="input")
        assert all(not op.inputs and op.outputs for op in out.ops)
        assert all(op.inputs and not op.outputs for op in ins.ops)
        assert all(op.inputs and op.outputs for op in full.ops)
        np.testing.assert_array_equal(out["sig1"].output(0).load(), full["sig1"].output(0).load())
        again = backend.run(converted, {"x": x}, dump_mode=None)
        modes = [_acl_mode(d) for d in (full, out, ins, again)]  # (close() removes run dirs)
    finally:
        backend.close()
    assert modes == ["all", "output", "input", "all"]
    assert [d.meta["dump_mode"] for d in (full, out, ins, again)] == ["all", "output", "input", "all"]
    assert out.names == full.names == ["conv1", "add1", "sig1"]


def test_backend_dump_mode_setting(tmp_path, monkeypatch, tiny_model, x, fake_atc_on_path):
    backend = _backend(tmp_path, monkeypatch, dump_mode="output")
    try:
        converted = backend.convert(tiny_model, DEFAULT)
        ds = backend.run(converted, {"x": x})
        every = backend.run(converted, {"x": x}, dump_mode="all")
        modes = _acl_mode(ds), _acl_mode(every)
        assert all(not op.inputs for op in ds.ops) and all(op.inputs for op in every.ops)
    finally:
        backend.close()
    assert modes == ("output", "all") and backend.dump_mode == "output"


def test_unknown_dump_modes_name_the_closest(tmp_path, monkeypatch, tiny_model, x, fake_atc_on_path):
    with pytest.raises(ConfigError, match="AscendBackend dump_mode: unknown dump mode 'outputs'.*"
                                          "closest: 'output'"):
        _backend(tmp_path, monkeypatch, dump_mode="outputs")
    backend = _backend(tmp_path, monkeypatch)
    try:
        converted = backend.convert(tiny_model, DEFAULT)
        with pytest.raises(ConfigError, match="run dump_mode: unknown dump mode 'Input'.*closest: 'input'"):
            backend.run(converted, {"x": x}, dump_mode="Input", dump_dir=tmp_path / "d")
    finally:
        backend.close()
    assert not (tmp_path / "d").exists()  # refused before acl.json or any dump was written
