"""One value per row and infinite logits, as ``ascend-accuracy dataset`` met them in a user trial.

An ArgMax output ``[1]`` (int64) is the class itself: agreement compared argmax over its one
value (always 0) and passed 10 flipped samples of 40. A float ``[N, 1]`` (a sigmoid) has no
class axis and is refused, pointing to a callable metric. A log-softmax's -inf logits are
values (the reference holds them too): a correct device passed, a NaN one failed, and a
reference holding NaN gives no figure at all. Figures are checked against numpy/onnxruntime.
"""
from __future__ import annotations

import json

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from pytest_ascend_accuracy.cli import main
from pytest_ascend_accuracy.dataset import DatasetFailure, check_dataset
from pytest_ascend_accuracy.errors import ConfigError

from .conftest import spiky_samples


def _save(graph, path):
    import onnx

    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def argmax_model(path):
    """x[1, 10] -> MatMul(identity) -> ArgMax(axis=1, keepdims=0): cls [1] int64."""
    graph = h.make_graph([h.make_node("MatMul", ["x", "I"], ["logits"], name="fc"),
                          h.make_node("ArgMax", ["logits"], ["cls"], name="argmax", axis=1,
                                      keepdims=0)],
                         "close_argmax", [h.make_tensor_value_info("x", T.FLOAT, [1, 10])],
                         [h.make_tensor_value_info("cls", T.INT64, [1])],
                         [nh.from_array(np.eye(10, dtype=np.float32), "I")])
    return _save(graph, path)


def close_samples(folder):
    """40 samples; every 4th has 1000.1 (class 3) and 1000.2 (class 7): both 1000.0 in
    float16, whose argmax then takes the first, class 3."""
    rng = np.random.default_rng(1)
    folder.mkdir()
    labels = {}
    for i in range(40):
        x = rng.uniform(0, 900, (1, 10)).astype(np.float32)
        if i % 4 == 0:
            x[0, 3], x[0, 7] = 1000.1, 1000.2
        else:
            x[0, 5] = 1000.0
        np.savez(folder / f"c{i:03d}.npz", x=x)
        labels[f"c{i:03d}"] = int(x.argmax())
    return labels


@pytest.fixture
def argmax_case(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model = argmax_model(tmp_path / "close_argmax.onnx")
    labels = close_samples(tmp_path / "close")
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    flips = []
    for sid in sorted(labels):
        x = np.load(tmp_path / "close" / f"{sid}.npz")["x"]
        ref = int(session.run(None, {"x": x})[0][0])
        assert ref == labels[sid]  # the reference picks the fp32 argmax
        if int(np.argmax(x.astype(np.float16))) != ref:  # float16 ties: the first wins
            flips.append(sid)
    assert len(flips) == 10
    return flips


def _run(*args):
    return main(["dataset", "close_argmax.onnx", "close", "--cache-dir", "cache"] + list(args))


def test_an_argmax_output_is_the_class_itself(argmax_case, capsys):
    flips = argmax_case
    assert _run("--metric", "agreement") == 1
    out = capsys.readouterr().out
    assert "dataset accuracy FAILED: agreement 0.7500 on the device vs 1.0000 reference " \
           "(drop 0.2500 > max_drop 0.0100)" in out
    assert f"flipped top-1 (10 of 40): {', '.join(flips)}" in out
    assert _run("--metric", "top1", "--labels", "labels.json") == 1
    assert "top1 0.7500 on the device vs 1.0000 reference" in capsys.readouterr().out
    # top5 cannot rank one class: refused, and its advice (top1/agreement) is what ran above
    assert _run("--metric", "top5", "--labels", "labels.json") == 2
    err = capsys.readouterr().err
    assert "metric top5 ranks 5 classes per row, but output 'cls' of shape [1] is one class " \
           "per row (an integer output, such as ArgMax's): use --metric top1 or --metric " \
           "agreement" in err


def binary_model(path):
    """x[1, 16] -> MatMul -> Sigmoid: p [1, 1], one float per row."""
    w = np.random.default_rng(3).standard_normal((16, 1)).astype(np.float32)
    graph = h.make_graph([h.make_node("MatMul", ["x", "W"], ["z"], name="fc"),
                          h.make_node("Sigmoid", ["z"], ["p"], name="sig")],
                         "binary", [h.make_tensor_value_info("x", T.FLOAT, [1, 16])],
                         [h.make_tensor_value_info("p", T.FLOAT, [1, 1])],
                         [nh.from_array(w, "W")])
    return _save(graph, path), w


def test_a_float_output_of_one_value_per_row_is_refused_for_a_callable(tmp_path, cache):
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.backends.emulator.faults import Fault
    from pytest_ascend_accuracy.dataset import load_device_model

    model, w = binary_model(tmp_path / "binary.onnx")
    rng = np.random.default_rng(4)
    samples = [{"x": rng.standard_normal((1, 16)).astype(np.float32)} for _ in range(20)]
    faulty = load_device_model(EmulatorBackend(cache, faults=[Fault.on_op("sig", "offset", -1.0)]),
                               model)
    for metric, labels in (("agreement", None), ("top1", [0] * 20)):
        with pytest.raises(ConfigError) as info:
            check_dataset(faulty, samples, metric=metric, labels=labels)
        assert f"metric {metric} reads output 'p' as class scores, but its shape [1, 1] holds " \
               "one score per row: no class axis" in str(info.value)
        assert "score it with a callable metric(outputs, labels)" in str(info.value)
    # the advice applied: a callable scoring p > 0.5 against the labels
    ref_p = np.array([1 / (1 + np.exp(-(s["x"] @ w)[0, 0])) for s in samples])
    labels = [int(p > 0.5) for p in ref_p[:15]] + [1 - int(p > 0.5) for p in ref_p[15:]]

    def binary_accuracy(outputs, labels):
        p = np.array([o["p"].reshape(-1)[0] for o in outputs])
        return float(np.mean((p > 0.5) == np.array(labels)))

    with pytest.raises(DatasetFailure) as info:
        check_dataset(faulty, samples, metric=binary_accuracy, labels=labels)
    result = info.value.dataset
    dev_p = ref_p - 1.0  # the -1 offset the fault adds to every p
    assert result.reference == pytest.approx(0.75)
    assert result.device == pytest.approx(np.mean((dev_p > 0.5) == np.array(labels)))
    clean = load_device_model(EmulatorBackend(cache), model)
    assert check_dataset(clean, samples, metric=binary_accuracy, labels=labels).passed


def logsm_model(path):
    graph = h.make_graph([h.make_node("Softmax", ["x"], ["sm"], name="softmax", axis=-1),
                          h.make_node("Log", ["sm"], ["logp"], name="log")],
                         "logsm", [h.make_tensor_value_info("x", T.FLOAT, [1, 10])],
                         [h.make_tensor_value_info("logp", T.FLOAT, [1, 10])])
    return _save(graph, path)


@pytest.fixture
def logsm_case(tmp_path, monkeypatch):
    """20 samples whose top class is 200 ahead: the others' fp32 softmax is 0, log -inf."""
    monkeypatch.chdir(tmp_path)
    model = logsm_model(tmp_path / "logsm.onnx")
    rng = np.random.default_rng(2)
    (tmp_path / "logsm").mkdir()
    labels = {}
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    for i in range(20):
        x = rng.uniform(0, 5, (1, 10)).astype(np.float32)
        x[0, i % 10] = 200.0
        np.savez(tmp_path / "logsm" / f"l{i:02d}.npz", x=x)
        labels[f"l{i:02d}"] = i % 10
        ref = session.run(None, {"x": x})[0]
        assert np.isneginf(ref).sum() == 9 and int(ref.argmax()) == i % 10
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    return model


def test_minus_inf_logits_are_values_a_correct_device_passes(logsm_case, capsys):
    def run(*args):
        return main(["dataset", "logsm.onnx", "logsm", "--cache-dir", "cache"] + list(args))

    assert run("--metric", "agreement") == 0
    out = capsys.readouterr().out
    assert "dataset accuracy PASSED: agreement 1.0000 on the device vs 1.0000 reference" in out
    assert "flipped top-1: none" in out and "NaN" not in out
    assert run("--metric", "top1", "--labels", "labels.json") == 0
    assert "top1 1.0000 on the device vs 1.0000 reference" in capsys.readouterr().out


def test_a_nan_device_fails_and_is_named(logsm_case, cache):
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.backends.emulator.faults import Fault
    from pytest_ascend_accuracy.dataset import load_device_model

    om = load_device_model(EmulatorBackend(cache, faults=[Fault.on_op("log", "nan", 1.0)]),
                           logsm_case)
    samples = sorted(str(p) for p in (logsm_case.parent / "logsm").glob("*.npz"))
    labels = json.loads((logsm_case.parent / "labels.json").read_text())
    assert all(np.isnan(om.outputs(dict(np.load(s)))["logp"]).any() for s in samples)
    with pytest.raises(DatasetFailure) as info:
        check_dataset(om, logsm_case.parent / "logsm", metric="top1", labels=labels)
    text = str(info.value)
    assert "top1 0.0000 on the device vs 1.0000 reference (drop 1.0000" in text
    assert "NaN/Inf in the device outputs (a row with NaN counts as wrong; an Inf the " \
           "reference lacks is scored as a value) (20): l00, l01" in text


def log_model(path):
    graph = h.make_graph([h.make_node("Log", ["x"], ["y"], name="log")], "logx",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1, 4])])
    return _save(graph, path)


def test_a_reference_holding_nan_is_an_error_naming_the_samples(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    log_model(tmp_path / "logx.onnx")
    (tmp_path / "s").mkdir()
    for i in range(6):
        x = np.array([[1.0, 2.0, 3.0, 0.5]], np.float32)
        if i in (1, 4):
            x[0, 0] = -1.0  # log(-1): NaN in the fp32 reference itself
        np.savez(tmp_path / "s" / f"s{i}.npz", x=x)
        ref = ort.InferenceSession("logx.onnx").run(None, {"x": x})[0]
        assert np.isnan(ref).any() == (i in (1, 4))
    assert main(["dataset", "logx.onnx", "s", "--metric", "agreement"]) == 2
    captured = capsys.readouterr()
    assert "PASSED" not in captured.out
    assert "the onnxruntime fp32 reference's output 'y' holds NaN in 2 row(s): s1, s4; metric " \
           "agreement cannot score them" in captured.err


def test_bool_labels_are_refused(device, spiky):
    """``labels=[True]`` was read as class 1: a list of flags is no list of classes."""
    samples, labels = spiky_samples()
    assert check_dataset(device(spiky, "high_precision"), samples, labels=labels).passed
    flags = [lab == 1 for lab in labels]
    for bad in (flags, np.array(flags)):
        with pytest.raises(ConfigError, match="label of sample '0' is (True|False|np.False_), a "
                                              "bool, not a class index"):
            check_dataset(device(spiky, "high_precision"), samples, labels=bad)


ERROR_RATE = """
import numpy as np
def error_rate(outputs, labels):
    top = [int(np.argmax(o["logits"].reshape(-1))) for o in outputs]
    return float(np.mean(np.array(top) != np.array(labels)))
"""


def test_the_command_reads_a_lower_is_better_metric_the_right_way_round(spiky, tmp_path,
                                                                        monkeypatch, capsys):
    """An error rate (lower is better) 0.6 on the device vs 0.5 passed as "drop -0.1"."""
    samples, labels = spiky_samples()
    (tmp_path / "s").mkdir()
    for i, sample in enumerate(samples):
        np.savez(tmp_path / "s" / f"s{i:02d}.npz", **sample)
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    (tmp_path / "rates.py").write_text(ERROR_RATE)
    monkeypatch.chdir(tmp_path)
    session = ort.InferenceSession(str(spiky))
    ref = np.mean([int(session.run(None, s)[0].argmax()) != lab
                   for s, lab in zip(samples, labels)])
    assert ref == 0.5

    def run(*args):
        return main(["dataset", str(spiky), "s", "--labels", "labels.json", "--metric",
                     "rates.py:error_rate"] + list(args))

    assert run("--higher-is-better", "false") == 1
    assert "error_rate 0.6000 on the device vs 0.5000 reference (lower is better: rise 0.1000 " \
           "> max_drop 0.0100)" in capsys.readouterr().out
    assert run() == 0  # read as higher is better, the worse device passes: why the option is
    assert run("--higher-is-better", "false", "--mode", "high_precision") == 0
    assert run("--metric", "top1", "--higher-is-better", "false") == 2
    assert "metric top1 is better higher" in capsys.readouterr().err
