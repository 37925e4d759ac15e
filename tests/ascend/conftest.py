"""Fixtures for the Ascend backend tests. Everything here runs against FAKES: the fake ``atc``
(``pytest_ascend_accuracy.testing.fake_atc``) and the fake ACL/ais_bench runtime
(``pytest_ascend_accuracy.testing.fake_runtime``). No NPU or CANN is involved."""
from __future__ import annotations

import os

import pytest


def build_model(path, *, name="tiny", dynamic_batch=False, unnamed=False):
    """Conv -> Relu -> Add(bias) -> Sigmoid on a 1x3x4x4 input: Conv+Relu is what the fake ATC
    fuses. Written with onnx.helper; opset 13."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal((1, 4, 1, 1)).astype(np.float32), "bias")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="" if unnamed else "conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="" if unnamed else "relu1"),
        helper.make_node("Add", ["r", "bias"], ["a"], name="" if unnamed else "add1"),
        helper.make_node("Sigmoid", ["a"], ["y"], name="" if unnamed else "sig1"),
    ]
    batch = "N" if dynamic_batch else 1
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 4, 4, 4])],
        initializer=[w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


@pytest.fixture
def tiny_model(tmp_path):
    return build_model(tmp_path / "tiny.onnx")


@pytest.fixture(scope="session")
def fake_toolkit(tmp_path_factory):
    """A FAKE CANN toolkit tree (bin/atc shim + version file), version 8.0.RC2."""
    from pytest_ascend_accuracy.testing.fake_toolkit import install_fake_toolkit

    return install_fake_toolkit(tmp_path_factory.mktemp("fake-cann") / "latest", version="8.0.RC2")


@pytest.fixture
def fake_atc_on_path(monkeypatch, fake_toolkit, tmp_path):
    """The fake atc on PATH, toolkit variables cleared, every call recorded in a JSON-lines file."""
    monkeypatch.setenv("PATH", f"{fake_toolkit.home / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    for var in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH", "FAKE_ATC_FAIL", "FAKE_ATC_HANG",
                "FAKE_ATC_REJECT", "FAKE_ATC_SERVER"):
        monkeypatch.delenv(var, raising=False)
    calls = tmp_path / "atc-calls.jsonl"
    monkeypatch.setenv("FAKE_ATC_CALLS", str(calls))
    return calls


def read_calls(path):
    import json

    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f]


@pytest.fixture
def model_factory(tmp_path):
    """build(name, **kw) -> path of a tiny ONNX model written under tmp_path."""
    def build(file_name="tiny.onnx", **kw):
        return build_model(tmp_path / file_name, **kw)
    return build


@pytest.fixture
def atc_calls():
    """read(path) -> list of recorded fake-atc invocations."""
    return read_calls


@pytest.fixture(scope="session")
def fake_oms(tmp_path_factory, fake_toolkit):
    """{'tiny': path, 'other': path}: fake .om files of the tiny model made once by the FAKE atc."""
    import subprocess

    root = tmp_path_factory.mktemp("fake-oms")
    model = build_model(root / "tiny.onnx")
    oms = {}
    for name in ("tiny", "other"):
        subprocess.run([str(fake_toolkit.atc), f"--model={model}", "--framework=5", f"--output={name}",
                        "--soc_version=Ascend310P3", "--precision_mode_v2=fp16"],
                       cwd=root, check=True, capture_output=True)
        oms[name] = root / f"{name}.om"
    return oms


@pytest.fixture(scope="session")
def converted_cache_template(tmp_path_factory, fake_toolkit):
    """A cache root holding the tiny model converted under the default mode by the FAKE atc
    (soc Ascend310P3, toolkit 8.0.RC2), built once; tests copy it instead of converting again."""
    from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
    from pytest_ascend_accuracy.core.cache import Cache

    root = tmp_path_factory.mktemp("cache-template")
    model = build_model(root / "tiny.onnx")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", f"{fake_toolkit.home / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
        for var in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH", "FAKE_ATC_CALLS"):
            mp.delenv(var, raising=False)
        AscendBackend(Cache(root / "cache"), soc_version="Ascend310P3", progress=None).convert(model)
    return root / "cache"
