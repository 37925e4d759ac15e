"""Dataset-level accuracy: the device's Top-1 against the reference network's, sample by sample.

Per-operator cosine says *where* numbers drift; the dataset figure says whether users notice.
``check_dataset`` runs every sample through onnxruntime fp32 (cached) and the converted model,
fails when the metric drops by more than ``max_drop``, and then names the flipped samples and
the first operator below the threshold on the first of them.
"""
import numpy as np

SAMPLES = [{"x": np.random.default_rng([2024, i]).random((1, 16), dtype=np.float32)}
           for i in range(64)]


def test_top1_agrees_with_the_reference(model_file, ascend_model, check_dataset):
    result = check_dataset(ascend_model(model_file("passing_mlp")), SAMPLES, metric="agreement",
                           max_drop=0.01)
    assert result.device == result.reference == 1.0
