"""Models and samples for the dataset-check tests, built in code.

``spiky``: logits = x * 256 * 256 / 65536 + bias over 8 classes (ops ``amplify1``,
``amplify2``, ``rescale``, ``add_bias``). A sample whose class-7 input is 0.9999 pushes
``amplify2`` past float16's 65504: in the default (fp16) mode its logit 7 becomes inf and its
top-1 flips to class 7 (the reference never picks 7: its bias is -1); ``high_precision``
keeps these vector ops in float32 and matches the reference exactly. Other samples have a
0.3 margin for their label, far above float16 rounding, so only spiked samples flip.
"""
from __future__ import annotations

import numpy as np
import pytest

CLASSES = 8
SPIKED = (3, 11)
N = 20


def spiky_model(dynamic_batch: bool = False, name: str = "spiky"):
    from onnx import helper, numpy_helper

    batch = "N" if dynamic_batch else 1
    inits = [numpy_helper.from_array(np.array(256.0, np.float32), "k256"),
             numpy_helper.from_array(np.array(1 / 65536, np.float32), "k_inv"),
             numpy_helper.from_array(np.array([0] * 7 + [-1], np.float32), "bias")]
    nodes = [helper.make_node("Mul", ["x", "k256"], ["a1"], name="amplify1"),
             helper.make_node("Mul", ["a1", "k256"], ["a2"], name="amplify2"),
             helper.make_node("Mul", ["a2", "k_inv"], ["scaled"], name="rescale"),
             helper.make_node("Add", ["scaled", "bias"], ["logits"], name="add_bias")]
    graph = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info("x", 1, [batch, CLASSES])],
                              [helper.make_tensor_value_info("logits", 1, [batch, CLASSES])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def spiky_samples(n: int = N, spiked=SPIKED, seed: int = 5):
    """(list of {"x": (1, 8) float32}, labels): labels are the boosted class (0..6)."""
    rng = np.random.default_rng(seed)
    samples, labels = [], []
    for i in range(n):
        x = rng.random((1, CLASSES), dtype=np.float32) * 0.5
        x[0, 7] = 0.0
        label = int(rng.integers(0, 7))
        x[0, label] += 0.3
        if i in spiked:
            x[0, 7] = 0.9999
        samples.append({"x": x})
        labels.append(label)
    return samples, labels


def spiky_project(root):
    """``root/models/spiky.onnx``, ``root/samples/NNN.npz`` (``spiky_samples``) and
    ``root/labels.json``, as a pytester project holds them; returns ``{sample id: label}``."""
    import json

    import onnx

    (root / "models").mkdir()
    onnx.save(spiky_model(), str(root / "models" / "spiky.onnx"))
    samples, labels = spiky_samples()
    (root / "samples").mkdir()
    for i, s in enumerate(samples):
        np.savez(root / "samples" / f"{i:03d}.npz", **s)
    by_id = {f"{i:03d}": lab for i, lab in enumerate(labels)}
    (root / "labels.json").write_text(json.dumps(by_id))
    return by_id


@pytest.fixture
def cache(tmp_path):
    from pytest_ascend_accuracy.core.cache import Cache

    return Cache(tmp_path / "cache")


@pytest.fixture
def device(cache, tmp_path):
    """device(model, mode="default", **kw) -> DeviceModel on the emulator (shared cache)."""
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.dataset import load_device_model

    backend = EmulatorBackend(cache)

    def make(model, mode="default", **kw):
        return load_device_model(backend, model, mode, dump_root=tmp_path / "dumps", **kw)

    return make


@pytest.fixture
def spiky(tmp_path):
    import onnx

    path = tmp_path / "spiky.onnx"
    onnx.save(spiky_model(), str(path))
    return path
