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


def _classifier(path, tail):
    """x[1, 10] -> MatMul(identity) -> ``tail`` nodes; the graph's output, uint8, is the last
    node's."""
    import onnx

    graph = h.make_graph([h.make_node("MatMul", ["x", "I"], ["logits"], name="fc"), *tail],
                         "classifier", [h.make_tensor_value_info("x", T.FLOAT, [1, CLASSES])],
                         [h.make_tensor_value_info(tail[-1].output[0], T.UINT8, None)],
                         [nh.from_array(np.eye(CLASSES, dtype=np.float32), "I"),
                          nh.from_array(np.float32(0.01), "s"), nh.from_array(np.uint8(0), "zp")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def _runner_up_samples():
    """20 samples with a clear winner; the runner-up's value float16 rounds (its quantised code
    may move by one step, the winner never changes)."""
    rng = np.random.default_rng(0)
    out = []
    for i in range(20):
        x = rng.uniform(0, 1, (1, CLASSES)).astype(np.float32)
        x[0, i % CLASSES], x[0, (i + 1) % CLASSES] = 2.0, 1.00011
        out.append({"x": x})
    return out


@pytest.mark.filterwarnings("ignore::pytest_ascend_accuracy.backends.emulator.atc_quant."
                            "AtcQuantWarning")  # tested in tests/emulator/test_atc_quant.py
def test_uint8_scores_after_a_quantize_linear_are_scores_not_ids(tmp_path, cache):
    """A quantised classifier's uint8 [1, 10] (review of the [N, T] change: it was read as 10
    ids per row, so a runner-up's code moving by one step was a flip and top1 refused it)."""
    model = _classifier(tmp_path / "q8.onnx", [
        h.make_node("QuantizeLinear", ["logits", "s", "zp"], ["q"], name="quant")])
    dev = load_device_model(EmulatorBackend(cache), model)
    data = _runner_up_samples()
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    moved = sum(int((np.round(s["x"].astype(np.float16).astype(np.float32) / 0.01)
                     != session.run(None, s)[0]).any()) for s in data)
    assert moved  # some codes do move: the case the scores reading must pass
    assert check_dataset(dev, data, metric="agreement").device == 1.0
    top1 = check_dataset(dev, data, metric="top1", labels=[i % CLASSES for i in range(20)])
    assert (top1.reference, top1.device) == (1.0, 1.0)


def test_indices_cast_to_uint8_are_ids(tmp_path, cache):
    model = _classifier(tmp_path / "cast.onnx", [
        h.make_node("ArgMax", ["logits"], ["cls"], name="argmax", axis=1, keepdims=0),
        h.make_node("Cast", ["cls"], ["cls8"], name="cast", to=T.UINT8)])
    dev = load_device_model(EmulatorBackend(cache), model)
    with pytest.raises(ConfigError, match="is one class per row"):
        check_dataset(dev, _runner_up_samples(), metric="top5",
                      labels=[i % CLASSES for i in range(20)])


def test_an_output_holding_no_values_is_refused_not_a_perfect_score():
    from pytest_ascend_accuracy.dataset.samples import Sample
    from pytest_ascend_accuracy.dataset.scoring import RowFlips

    empty = {"y": np.zeros((2, 0), np.float32)}
    with pytest.raises(ConfigError, match=r"output 'y' of shape \[2, 0\] holds no values"):
        RowFlips("y", index=True).add(Sample("s0", 0, {}), empty, empty)
    loose = RowFlips("y", strict=False)  # a callable metric scores it; no flips to track
    assert not loose.add(Sample("s0", 0, {}), empty, empty) and "holds no values" in loose.untracked


def test_int32_scores_of_an_integer_only_classifier_are_scores():
    """MatMulInteger's int32 accumulators as the output (review): read as 10 ids per row they
    would fail a device whose runner-up moved by one step, as uint8 scores did."""
    from pytest_ascend_accuracy.dataset.reference import class_id_outputs

    graph = h.make_graph(
        [h.make_node("MatMulInteger", ["x", "W"], ["scores"], name="mmi"),
         h.make_node("ArgMax", ["scores"], ["cls"], name="argmax", axis=1, keepdims=0),
         h.make_node("Cast", ["cls"], ["cls32"], name="cast", to=T.INT32)],
        "int_only", [h.make_tensor_value_info("x", T.UINT8, [1, 4])],
        [h.make_tensor_value_info("scores", T.INT32, [1, CLASSES]),
         h.make_tensor_value_info("cls", T.INT64, [1]),
         h.make_tensor_value_info("cls32", T.INT32, [1])],
        [nh.from_array(np.ones((4, CLASSES), np.uint8), "W")])
    assert class_id_outputs(graph) == {"cls", "cls32"}
