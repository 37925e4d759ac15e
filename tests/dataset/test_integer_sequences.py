"""An integer output ``[N, T]`` (a recognizer that decodes in the graph: ArgMax over its class
axis) holds T class ids per row, not T scores. It was ranked as scores: agreement compared the
position of the largest id, so a device that changed a token elsewhere in the row (float16
ties at position 1 of every other sample) passed with agreement 1.0000."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
from pytest_ascend_accuracy.dataset import DatasetFailure, check_dataset, load_device_model
from pytest_ascend_accuracy.errors import ConfigError

POSITIONS, CLASSES = 6, 10


def decoder_model(path):
    """x[1, T, C] -> MatMul(identity) -> ArgMax(axis=2, keepdims=0): ids [1, T] int64."""
    import onnx

    graph = h.make_graph([h.make_node("MatMul", ["x", "I"], ["logits"], name="fc"),
                          h.make_node("ArgMax", ["logits"], ["ids"], name="argmax", axis=2,
                                      keepdims=0)],
                         "decoder", [h.make_tensor_value_info("x", T.FLOAT,
                                                              [1, POSITIONS, CLASSES])],
                         [h.make_tensor_value_info("ids", T.INT64, [1, POSITIONS])],
                         [nh.from_array(np.eye(CLASSES, dtype=np.float32), "I")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def samples(ties: bool):
    """20 samples whose largest id (9) wins at every position but 1; with ``ties``, every other
    sample's position 1 holds 1000.1 (class 3) and 1000.2 (class 7), both 1000.0 in float16,
    whose argmax takes the first."""
    rng = np.random.default_rng(0)
    out = []
    for i in range(20):
        x = rng.uniform(0, 900, (1, POSITIONS, CLASSES)).astype(np.float32)
        x[0, :, 9] = 999.0
        x[0, 1, 3], x[0, 1, 7] = (1000.1, 1000.2) if ties and i % 2 == 0 else (1000.0, 0.0)
        out.append({"x": x})
    return out


@pytest.fixture
def device(tmp_path, cache):
    model = decoder_model(tmp_path / "decoder.onnx")
    return model, load_device_model(EmulatorBackend(cache), model)


def test_a_changed_id_anywhere_in_the_row_is_a_flip(device):
    model, dev = device
    data = samples(ties=True)
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    changed = [str(i) for i, s in enumerate(data)
               if (np.argmax(s["x"].astype(np.float16), axis=2)
                   != session.run(None, s)[0]).any()]
    assert changed == [str(i) for i in range(0, 20, 2)]  # float16 changes position 1 there
    with pytest.raises(DatasetFailure) as info:
        check_dataset(dev, data, metric="agreement")
    text = str(info.value)
    assert "agreement 0.5000 on the device vs 1.0000 reference" in text
    assert (f"flipped top-1 (10 of 20; a sample flips when any of its {POSITIONS} positions "
            f"does, 10 of 120 positions flipped): {', '.join(changed)}") in text


def test_a_device_that_keeps_every_id_passes(device):
    _, dev = device
    result = check_dataset(dev, samples(ties=False), metric="agreement")
    assert (result.device, result.reference, result.flipped) == (1.0, 1.0, ())


def test_top1_refuses_a_sequence_of_ids_and_its_advice_runs(device):
    _, dev = device
    with pytest.raises(ConfigError) as info:
        check_dataset(dev, samples(ties=True), metric="top1", labels=[9] * 20)
    assert ("metric top1 scores one label per row, but output 'ids' of shape [1, 6] is a "
            "sequence: 6 class ids per row (an integer output); use metric='agreement'") \
        in str(info.value)
    # the advice: a callable that decodes the sequence, here "the row's ids are all 9 but one"
    result = check_dataset(dev, samples(ties=False),
                           metric=lambda outs, labels: float(np.mean(
                               [(o["ids"] == 9).sum() == POSITIONS - 1 for o in outs])))
    assert result.device == result.reference == 1.0
