"""``dump_mode`` of the emulator (acl.json's: ``output``, ``input``, ``all``) and the per-run
override ``run(dump_mode=...)`` both backends take."""
import os

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.backends.base import DUMP_MODES, check_dump_mode  # noqa: E402
from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend  # noqa: E402
from pytest_ascend_accuracy.backends.emulator.dump_space import planned_bytes  # noqa: E402
from pytest_ascend_accuracy.backends.emulator.plan import PLAN_FILE, Plan  # noqa: E402
from pytest_ascend_accuracy.dump.ascend_bin import parse_dump_file  # noqa: E402
from pytest_ascend_accuracy.errors import ConfigError  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402


@pytest.fixture
def conv_model():
    return models.conv_bn_relu()


def _headers(ds):
    return [parse_dump_file(op.source) for op in ds.ops]


def test_default_dumps_inputs_and_outputs(cache, conv_model, tmp_path):
    backend = EmulatorBackend(cache)
    assert backend.dump_mode == "all"
    ds = backend.run(backend.convert(conv_model), make_inputs(conv_model), dump_dir=tmp_path / "d")
    assert ds.meta["dump_mode"] == "all"
    assert all(op.outputs for op in ds.ops) and ds["conv1relu1"].inputs


def test_output_mode_writes_no_input_tensors(cache, conv_model, tmp_path):
    x = make_inputs(conv_model)
    every = EmulatorBackend(cache)
    converted = every.convert(conv_model)
    full = every.run(converted, x, dump_dir=tmp_path / "all")
    only = EmulatorBackend(cache, dump_mode="output")
    out = only.run(only.convert(conv_model), x, dump_dir=tmp_path / "out")
    assert out.meta["dump_mode"] == "output" and out.names == full.names
    for parsed in _headers(out):  # the header lists no inputs, as a device's output-mode dump
        assert parsed.header.input == () and parsed.inputs == () and parsed.outputs
    for a, b in zip(out.ops, full.ops):  # the outputs are the same tensors, stored the same way
        assert not a.inputs and len(a.outputs) == len(b.outputs)
        for ta, tb in zip(a.outputs, b.outputs):
            assert (ta.format, ta.device_shape, ta.origin) == (tb.format, tb.device_shape, tb.origin)
            np.testing.assert_array_equal(ta.load(), tb.load())
    assert sum(os.path.getsize(op.source) for op in out.ops) < sum(os.path.getsize(op.source) for op in full.ops)


def test_input_mode_writes_no_output_tensors(cache, conv_model, tmp_path):
    backend = EmulatorBackend(cache, dump_mode="input")
    ds = backend.run(backend.convert(conv_model), make_inputs(conv_model), dump_dir=tmp_path / "d")
    assert all(not op.outputs for op in ds.ops) and ds["conv1relu1"].inputs
    assert all(p.header.output == () for p in _headers(ds))


def test_per_run_override_and_none_keeps_the_backend_setting(cache, conv_model, tmp_path):
    x = make_inputs(conv_model)
    backend = EmulatorBackend(cache, dump_mode="output")
    converted = backend.convert(conv_model)
    assert backend.run(converted, x, dump_dir=tmp_path / "a", dump_mode="all")["conv1relu1"].inputs
    again = backend.run(converted, x, dump_dir=tmp_path / "b", dump_mode=None)
    assert again.meta["dump_mode"] == "output" and not again["conv1relu1"].inputs
    assert backend.dump_mode == "output"  # the override was for that run only


@pytest.mark.parametrize("bad, closest", [("outputs", "'output'"), ("ALL", "'all'"), ("inputs", "'input'")])
def test_unknown_modes_name_the_closest(cache, conv_model, tmp_path, bad, closest):
    with pytest.raises(ConfigError, match=f"unknown dump mode {bad!r}.*closest: {closest}"):
        EmulatorBackend(cache, dump_mode=bad)
    backend = EmulatorBackend(cache)
    converted = backend.convert(conv_model)
    with pytest.raises(ConfigError, match="run dump_mode: unknown dump mode"):
        backend.run(converted, make_inputs(conv_model), dump_dir=tmp_path / "d", dump_mode=bad)
    assert not (tmp_path / "d").exists()  # refused before anything was written


def test_check_dump_mode():
    assert [check_dump_mode(m) for m in DUMP_MODES] == ["output", "input", "all"]
    with pytest.raises(ConfigError, match="expected one of output, input, all"):
        check_dump_mode(None)
    with pytest.raises(ConfigError, match="^where: "):
        check_dump_mode("xyz", "where")


def test_a_full_disk_estimate_counts_only_what_the_mode_dumps(cache, conv_model):
    backend = EmulatorBackend(cache)
    plan = Plan.load(backend.convert(conv_model).path.parent / PLAN_FILE)
    both, _ = planned_bytes(plan.ops)
    outs, _ = planned_bytes(plan.ops, "output")
    ins, _ = planned_bytes(plan.ops, "input")
    assert 0 < outs < both and 0 < ins < both and outs + ins == both
