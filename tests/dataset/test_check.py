"""check_dataset on the emulator without pytest glue: verdicts, flipped ids, the traced op."""
from __future__ import annotations

import numpy as np
import pytest

from pytest_ascend_accuracy.dataset import DatasetFailure, check_dataset, run_dataset_check
from pytest_ascend_accuracy.errors import ConfigError

from .conftest import SPIKED, spiky_model, spiky_samples


def test_fp16_flips_fail_naming_the_flipped_samples_and_the_culprit_op(device, spiky, cache):
    samples, labels = spiky_samples()
    with pytest.raises(DatasetFailure) as info:
        check_dataset(device(spiky), samples, labels=labels, cache=cache)
    text = str(info.value)
    result = info.value.dataset
    assert result.flipped == tuple(str(i) for i in SPIKED)
    assert result.nonfinite == result.flipped  # inf logits count as wrong and are named
    assert result.reference - result.device == pytest.approx(len(SPIKED) / len(samples))
    assert "top1 0.4000 on the device vs 0.5000 reference (drop 0.1000 > max_drop 0.0100)" in text
    assert "flipped top-1 (2 of 20): 3, 11" in text
    assert result.culprit.sample == "3" and result.culprit.op == "amplify2"
    assert "first flipped sample 3: first operator below the threshold: amplify2 (Mul)" in text
    assert info.value.verdict is not None and not info.value.verdict.passed


def test_high_precision_passes_and_reuses_the_cached_reference(device, spiky, cache):
    samples, labels = spiky_samples()
    first, *_ = run_dataset_check(device(spiky), samples, labels=labels, cache=cache)
    assert not first.passed and first.reference_runs == len(samples)
    result = check_dataset(device(spiky, "high_precision"), samples, labels=labels, cache=cache)
    assert result.passed and result.flipped == () and result.culprit is None
    assert result.reference == result.device == 0.5
    # content-keyed on model + sample: the rerun ran only the device side
    assert (result.reference_runs, result.reference_cached) == (0, len(samples))


def test_max_drop_decides(device, spiky):
    samples, labels = spiky_samples()
    result = check_dataset(device(spiky), samples, labels=labels, max_drop=0.1)
    assert result.passed and result.flipped == ("3", "11")
    with pytest.raises(ConfigError, match="max_drop"):
        check_dataset(device(spiky), samples, labels=labels, max_drop=-1)


def test_npz_directory_with_labels_by_file_stem(device, spiky, tmp_path, cache):
    samples, labels = spiky_samples()
    folder = tmp_path / "samples"
    folder.mkdir()
    for i, s in enumerate(samples):
        np.savez(folder / f"img_{i:03d}.npz", **s)
    by_id = {f"img_{i:03d}": lab for i, lab in enumerate(labels)}
    with pytest.raises(DatasetFailure) as info:
        check_dataset(device(spiky), folder, labels=by_id, cache=cache)
    assert info.value.dataset.flipped == ("img_003", "img_011")
    assert "first flipped sample img_003" in str(info.value)
    passed = check_dataset(device(spiky, "high_precision"), folder, labels=by_id, cache=cache)
    assert passed.samples == len(samples) and passed.reference_cached == len(samples)


def test_agreement_needs_no_labels(device, spiky):
    samples, _ = spiky_samples()
    with pytest.raises(DatasetFailure, match=r"agreement 0\.9000 on the device vs 1\.0000"):
        check_dataset(device(spiky), samples, metric="agreement")
    assert check_dataset(device(spiky, "high_precision"), samples, metric="agreement").device == 1.0


def test_top5(device, spiky):
    """A spiked sample's +inf logit (class 7) ranks first as a value, as numpy ranks it: the
    label stays among the top 5 of 8 classes, so top-5 holds where top-1 flips."""
    samples, labels = spiky_samples()
    result, *_ = run_dataset_check(device(spiky), samples, metric="top5", labels=labels)
    dev = np.concatenate([device(spiky, "default").outputs(s)["logits"] for s in samples])
    hits = [lab in np.argsort(-row, kind="stable")[:5] for row, lab in zip(dev, labels)]
    assert np.isinf(dev[list(SPIKED)]).any(axis=1).all()
    assert result.reference == 1.0 and result.device == pytest.approx(np.mean(hits)) == 1.0
    assert result.flipped == tuple(str(i) for i in SPIKED)


def test_callable_metric_sees_output_dicts_and_labels(device, spiky):
    samples, labels = spiky_samples()
    seen = []

    def mean_label_logit(outputs, labels):
        seen.append((len(outputs), sorted(outputs[0]), outputs[0]["logits"].dtype, labels))
        logits = np.concatenate([o["logits"] for o in outputs])
        finite = np.where(np.isfinite(logits), logits, 0.0)
        return float(np.mean(finite[np.arange(len(labels)), labels]))

    result = check_dataset(device(spiky, "high_precision"), samples, metric=mean_label_logit,
                           labels=labels)
    assert result.passed and result.metric == "mean_label_logit"
    assert seen[0] == (20, ["logits"], np.float32, labels)

    def share_finite(outputs, labels):
        return float(np.mean([np.isfinite(o["logits"]).all() for o in outputs]))

    with pytest.raises(DatasetFailure, match=r"share_finite 0\.9000 on the device vs 1\.0000"):
        check_dataset(device(spiky), samples, metric=share_finite)


def test_batched_samples_are_split_per_row(device, tmp_path):
    import onnx

    path = tmp_path / "spiky_batch.onnx"
    onnx.save(spiky_model(dynamic_batch=True), str(path))
    samples, labels = spiky_samples(8, spiked=(5,))
    batches = [{"x": np.concatenate([s["x"] for s in samples[i:i + 4]])} for i in (0, 4)]
    per_row = [labels[0:4], labels[4:8]]
    om = device(path, input_shape={"x": (4, 8)})
    with pytest.raises(DatasetFailure) as info:
        check_dataset(om, batches, metric="agreement")
    result = info.value.dataset
    assert result.device == 7 / 8
    assert (result.samples, result.rows, result.flipped) == (2, 8, ("1[1]",))
    assert result.culprit.sample == "1" and result.culprit.op == "amplify2"
    top1 = check_dataset(device(path, "high_precision", input_shape={"x": (4, 8)}), batches,
                         labels=per_row)
    assert top1.rows == 8 and top1.reference == top1.device == 0.75
    with pytest.raises(ConfigError, match="batch of 4 rows: give 4 labels"):
        check_dataset(om, batches, labels=[1, 2])


def test_streaming_accepts_a_generator(device, spiky):
    samples, labels = spiky_samples()
    result = check_dataset(device(spiky, "high_precision"), (s for s in samples), labels=labels)
    assert result.samples == 20


def test_progress_is_reported(device, spiky):
    samples, labels = spiky_samples()
    calls = []
    check_dataset(device(spiky, "high_precision"), samples, labels=labels,
                  progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (20, 20)


@pytest.mark.parametrize("kwargs, match", [
    ({"metric": "top3"}, r"unknown metric 'top3'.*closest: top5, top1"),
    ({"output": "logit"}, r"no model output named 'logit'.*closest: logits"),
    ({"labels": {"0": 1, "nope": 2}}, r"no label for sample '1'"),
    ({"labels": [1] * 30}, r"30 labels for 20 samples"),
    ({"labels": None}, r"metric top1 needs labels"),
    ({"labels": [8] * 20}, r"label of sample '0' is 8, outside the 8 classes of output 'logits'"),
])
def test_bad_arguments_are_config_errors(device, spiky, kwargs, match):
    samples, labels = spiky_samples()
    kwargs = {"labels": labels, **kwargs}
    with pytest.raises(ConfigError, match=match):
        check_dataset(device(spiky, "high_precision"), samples, **kwargs)


def test_labels_for_unknown_samples_name_the_closest(device, spiky, tmp_path):
    samples, labels = spiky_samples(3, spiked=())
    folder = tmp_path / "s"
    folder.mkdir()
    for i, s in enumerate(samples):
        np.savez(folder / f"cat_{i}.npz", **s)
    by_id = {f"cat_{i}": lab for i, lab in enumerate(labels)}
    by_id["cat_9"] = 0
    with pytest.raises(ConfigError, match=r"'cat_9' but no such sample; closest sample ids: cat_"):
        check_dataset(device(spiky, "high_precision"), folder, labels=by_id)


def test_bad_samples(device, spiky, tmp_path):
    om = device(spiky, "high_precision")
    with pytest.raises(ConfigError, match="not found"):
        check_dataset(om, tmp_path / "missing", metric="agreement")
    (tmp_path / "one.npz").write_bytes(b"")
    with pytest.raises(ConfigError, match="one.npz' is a file, not a directory of .npz samples"):
        check_dataset(om, tmp_path / "one.npz", metric="agreement")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no .npz files"):
        check_dataset(om, tmp_path / "empty", metric="agreement")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "a.npz").write_bytes(b"not a zip")
    from pytest_ascend_accuracy.errors import DumpFormatError
    with pytest.raises(DumpFormatError, match=r"a\.npz: not a readable .npz sample"):
        check_dataset(om, tmp_path / "bad", metric="agreement")
    with pytest.raises(ConfigError, match=r"input 'x' has dtype float64"):
        check_dataset(om, [{"x": np.zeros((1, 8))}], metric="agreement")


def test_a_damaged_reference_shard_is_rebuilt_not_trusted(device, spiky, cache):
    samples, labels = spiky_samples()
    om = device(spiky, "high_precision")
    check_dataset(om, samples, labels=labels, cache=cache)
    shards = list(cache.root.glob("dataset-reference-*/*/*/out0.npy"))
    assert len(shards) == 1
    data = bytearray(shards[0].read_bytes())
    data[-4:] = b"\x00\x00\xc0\x7f"  # the last value becomes NaN: the manifest no longer matches
    shards[0].write_bytes(bytes(data))
    from pytest_ascend_accuracy.core.cache import Cache

    result = check_dataset(om, samples, labels=labels, cache=Cache(cache.root))
    assert (result.reference_runs, result.reference_cached) == (len(samples), 0)
    assert result.passed and result.reference == 0.5


def test_om_must_be_a_converted_model(spiky):
    with pytest.raises(ConfigError, match=r"om: expected a converted model .* got PosixPath"):
        check_dataset(spiky, [], metric="agreement")


def test_a_traced_sample_whose_ops_are_all_ignored_names_no_operator_wrongly(device, spiky, cache):
    """ignore=["*"] leaves the traced sample's comparison judging nothing: it said "every
    operator meets the threshold; the flip comes from accumulated small errors" (review)."""
    samples, labels = spiky_samples()
    with pytest.raises(DatasetFailure) as info:
        check_dataset(device(spiky), samples, labels=labels, cache=cache, ignore=["*"])
    culprit = info.value.dataset.culprit
    assert culprit.op is None and culprit.note.startswith("no operator named: no tensor was judged")
    assert "accumulated small errors" not in str(info.value)


def test_labels_keyed_by_number_name_the_keys_when_none_is_near():
    """Labels keyed ``0, 1, ...`` for samples ``img0, ...``: nothing is near, and the error said
    only ``no label for sample 'img0'``; it names the keys that are there."""
    from pytest_ascend_accuracy.dataset.samples import Labels, Sample

    labels = Labels({str(k): k % 2 for k in range(10)}, "labels.json")
    with pytest.raises(ConfigError, match=r"no label for sample 'img0'; none is near: label keys "
                                          r"are 0, 1, 2, \.\.\. \(10 in all\)$"):
        labels.for_sample(Sample("img0", 0, {}), 1)
    with pytest.raises(ConfigError, match=r"none is near: label keys are 0, 1, 2, \.\.\."):
        labels.raw(Sample("img0", 0, {}))
    few = Labels({"7": 1}, "labels.json")
    with pytest.raises(ConfigError, match=r"none is near: sample ids are img0, img1$"):
        few.check_all_used(["img0", "img1"])


def test_a_sample_without_a_label_names_the_closest_label_keys():
    """The closest names are the labels file's keys, not sample ids (a docs trial: 'closest
    sample ids: S00' named a key of the labels, no sample)."""
    from pytest_ascend_accuracy.dataset.samples import Labels, Sample

    labels = Labels({"S00": 1, "S01": 0}, "labels.json")
    with pytest.raises(ConfigError, match=r"no label for sample 's00'; closest label keys: S00"):
        labels.for_sample(Sample("s00", 0, {}), 1)
