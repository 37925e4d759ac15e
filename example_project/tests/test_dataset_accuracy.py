"""Dataset-level accuracy: Top-1/Top-5 on the device against the reference network.

Per-operator cosine says *where* numbers drift; the dataset figure says whether users notice.
The "dataset" here is 64 seeded samples whose labels are the reference network's predictions
with a fixed tenth of them flipped, so the reference scores a realistic Top-1 below 1.0.
"""
import numpy as np
import pytest

from pytest_ascend_accuracy import assert_metric_close, topk_accuracy

SAMPLES = 64


@pytest.fixture(scope="module")
def dataset():
    rng = np.random.default_rng(2024)
    return [rng.random((1, 16), dtype=np.float32) for _ in range(SAMPLES)]


def reference_logits(model, samples):
    import onnxruntime as ort

    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    return np.concatenate([session.run(None, {name: x})[0] for x in samples])


def noisy_labels(logits, flip=0.1, seed=7):
    rng = np.random.default_rng(seed)
    labels = logits.argmax(axis=1)
    flipped = rng.random(len(labels)) < flip
    labels[flipped] = (labels[flipped] + 1 + rng.integers(0, logits.shape[1] - 1, flipped.sum())) % logits.shape[1]
    return labels


def test_top1_and_top5_match_the_reference(model_file, ascend_model, dataset):
    model = model_file("passing_mlp")
    ref = reference_logits(model, dataset)
    labels = noisy_labels(ref)
    om = ascend_model(model)
    ours = np.concatenate([om.run({"x": x}, dump=False).ops[0].outputs[0].load() for x in dataset])
    for k, tol in ((1, 0.01), (5, 0.01)):
        assert_metric_close(topk_accuracy(ours, labels, k), topk_accuracy(ref, labels, k),
                            abs_tol=tol, name=f"Top-{k}")
