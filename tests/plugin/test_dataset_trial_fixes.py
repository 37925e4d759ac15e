"""Dataset checks inside pytest, as a user trial met them: a loss metric read the wrong way round
passed a far worse device, the traced op was not the one ``check_accuracy`` names for the same
sample (no scale guard), a reference holding NaN scored nothing and read PASSED, the mode
``--accuracy-diagnose`` prints could not be pasted into ``ascend-accuracy dataset --mode``, a
marker's max_drop was silently not the dataset tolerance, YAML typos named no near name, and
the summary named a YAML item by its file."""
from __future__ import annotations

import json
import re

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from pytest_ascend_accuracy.cli import main


#: a conftest injecting $FAULT (op:effect:amount) into the session's emulator, as the trial did
FAULT_CONFTEST = '''
import os
from pytest_ascend_accuracy import backends
from pytest_ascend_accuracy.backends.emulator.faults import Fault
_MAKE = backends.make_backend
def _faulted(*args, **kwargs):
    spec = os.environ.get("FAULT")
    if not spec:
        return _MAKE(*args, **kwargs)
    op, effect, amount = spec.split(":")
    return _MAKE(*args, faults=[Fault.on_op(op, effect=effect, amount=float(amount))], **kwargs)
def pytest_configure(config):
    backends.make_backend = _faulted
def pytest_unconfigure(config):
    backends.make_backend = _MAKE
'''


def _save(graph, path):
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


def clf_project(pytester):
    """models/clf.onnx: x[1,16] -> fc1 -> relu1 -> fc2 -> softmax (prob [1, 10]); 30 samples
    in samples/ and labels.json (the reference's own top-1)."""
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((16, 32)).astype(np.float32)
    w2 = rng.standard_normal((32, 10)).astype(np.float32)
    graph = h.make_graph([h.make_node("MatMul", ["x", "W1"], ["h1"], name="fc1"),
                          h.make_node("Relu", ["h1"], ["r1"], name="relu1"),
                          h.make_node("MatMul", ["r1", "W2"], ["logits"], name="fc2"),
                          h.make_node("Softmax", ["logits"], ["prob"], name="softmax", axis=-1)],
                         "clf", [h.make_tensor_value_info("x", T.FLOAT, [1, 16])],
                         [h.make_tensor_value_info("prob", T.FLOAT, [1, 10])],
                         [nh.from_array(w1, "W1"), nh.from_array(w2, "W2")])
    (pytester.path / "models").mkdir()
    _save(graph, pytester.path / "models" / "clf.onnx")
    (pytester.path / "samples").mkdir()
    session = ort.InferenceSession(str(pytester.path / "models" / "clf.onnx"))
    labels = {}
    for i in range(30):
        x = rng.standard_normal((1, 16)).astype(np.float32)
        np.savez(pytester.path / "samples" / f"s{i:02d}.npz", x=x)
        labels[f"s{i:02d}"] = int(session.run(None, {"x": x})[0].argmax())
    (pytester.path / "labels.json").write_text(json.dumps(labels))
    pytester.makeconftest(FAULT_CONFTEST)
    return labels


LOSS_TEST = '''
import json
import numpy as np
from pytest_ascend_accuracy import accuracy

LABELS = json.load(open("labels.json"))

def nll(outputs, labels):
    """mean negative log-likelihood: lower is better"""
    p = np.stack([o["prob"].reshape(-1) for o in outputs])
    return float(np.mean(-np.log(np.clip(p[np.arange(len(labels)), labels], 1e-12, 1))))

@accuracy(modes=["high_precision"])
def test_loss(ascend_model, check_dataset):
    r = check_dataset(ascend_model("models/clf.onnx"), "samples",
                      labels=[LABELS[k] for k in sorted(LABELS)], metric=nll, max_drop=0.05,
                      {extra})
    print("figures", r.reference, r.device)
'''


def _nll(probs, labels):
    p = np.stack([q.reshape(-1) for q in probs])
    return float(np.mean(-np.log(np.clip(p[np.arange(len(labels)), labels], 1e-12, 1))))


def test_a_loss_metric_with_higher_is_better_false_fails_a_worse_device(pytester, monkeypatch):
    labels = clf_project(pytester)
    ids = sorted(labels)
    xs = [np.load(pytester.path / "samples" / f"{k}.npz")["x"] for k in ids]
    session = ort.InferenceSession(str(pytester.path / "models" / "clf.onnx"))
    ref_nll = _nll([session.run(None, {"x": x})[0] for x in xs], [labels[k] for k in ids])
    # the logits scaled by 0.25 on the device: a flatter softmax, so the labels (the
    # reference's own top-1) get less probability: a higher loss
    monkeypatch.setenv("FAULT", "fc2:scale:0.25")
    pytester.makepyfile(test_loss=LOSS_TEST.replace("{extra}", "higher_is_better=False"))
    result = pytester.runpytest("-p", "no:cacheprovider", "-s")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    found = re.search(r"nll (\d+\.\d+) on the device vs (\d+\.\d+) reference \(lower is better: "
                      r"rise (\d+\.\d+) > max_drop 0\.0500\)", text)
    assert found, text
    dev, ref, rise = (float(g) for g in found.groups())
    assert ref == pytest.approx(ref_nll, abs=1e-4) and dev > ref + 0.05
    w1, w2 = (nh.to_array(t) for t in onnx.load(str(pytester.path / "models" / "clf.onnx"))
              .graph.initializer)
    flat = [np.exp(z - z.max()) / np.exp(z - z.max()).sum()
            for z in (np.maximum(x @ w1, 0) @ w2 * 0.25 for x in xs)]
    assert dev == pytest.approx(_nll(flat, [labels[k] for k in ids]), abs=5e-3)
    assert rise == pytest.approx(dev - ref, abs=2e-4)
    result.stdout.fnmatch_lines(["*clf [[]high_precision[]] nll * device vs * reference (lower is "
                                 "better: rise * > 0.05)*"])
    # the default reads it the old way round: the worse device passes (drop < 0)
    pytester.makepyfile(test_loss=LOSS_TEST.replace("{extra}", ""))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    # no fault: the same loss within max_drop passes with higher_is_better=False too
    monkeypatch.delenv("FAULT")
    pytester.makepyfile(test_loss=LOSS_TEST.replace("{extra}", "higher_is_better=False"))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_higher_is_better_false_is_refused_for_a_built_in_metric(pytester):
    clf_project(pytester)
    pytester.makepyfile(test_top1='''
import json
def test_top1(ascend_model, check_dataset):
    check_dataset(ascend_model("models/clf.onnx"), "samples", labels=json.load(open("labels.json")),
                  higher_is_better=False)
''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*higher_is_better: metric top1 is better higher*; "
                                 "higher_is_better=False is for a callable metric where lower "
                                 "is better, such as a loss*"])


def biasnet_project(pytester):
    """The trial's biasnet (fc1 -> relu1 -> bias Add -> relu2 -> fc2) and 40 samples."""
    rng = np.random.default_rng(11)
    w1 = rng.standard_normal((16, 32)).astype(np.float32)
    b1 = (rng.standard_normal(32) * 4).astype(np.float32)
    w2 = rng.standard_normal((32, 10)).astype(np.float32)
    graph = h.make_graph([h.make_node("Mul", ["x", "one"], ["xp"], name="pre"),
                          h.make_node("MatMul", ["xp", "W1"], ["h"], name="fc1"),
                          h.make_node("Relu", ["h"], ["hr"], name="relu1"),
                          h.make_node("Add", ["hr", "b1"], ["hb"], name="bias"),
                          h.make_node("Relu", ["hb"], ["r"], name="relu2"),
                          h.make_node("MatMul", ["r", "W2"], ["logits"], name="fc2")],
                         "biasnet", [h.make_tensor_value_info("x", T.FLOAT, [1, 16])],
                         [h.make_tensor_value_info("logits", T.FLOAT, [1, 10])],
                         [nh.from_array(np.ones((1, 16), np.float32), "one"),
                          nh.from_array(w1, "W1"), nh.from_array(b1, "b1"),
                          nh.from_array(w2, "W2")])
    (pytester.path / "models").mkdir()
    _save(graph, pytester.path / "models" / "biasnet.onnx")
    (pytester.path / "bias").mkdir()
    for i in range(40):
        np.savez(pytester.path / "bias" / f"s{i:02d}.npz",
                 x=rng.standard_normal((1, 16)).astype(np.float32))
    pytester.makeconftest(FAULT_CONFTEST)


SCALE_TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy

@accuracy(threshold=0.95{marker})
def test_bias(ascend_model, check_dataset):
    check_dataset(ascend_model("models/biasnet.onnx"), "bias", metric="agreement")

@accuracy(threshold=0.95{marker})
def test_one_sample(ascend_model, golden_dump, check_accuracy):
    x = dict(np.load("bias/{sample}.npz"))
    m = "models/biasnet.onnx"
    check_accuracy(ascend_model(m).run(x), golden_dump(m, x))
'''
TRACED = re.compile(r"first flipped sample (s\d\d): first operator below the threshold: (\w+) ")
CHECKED = re.compile(r"FAILED test_scale.py::test_one_sample \[biasnet, default\]: first failing "
                     r"op (\w+) \((\w+)")


def test_the_dataset_trace_names_the_op_check_accuracy_names(pytester, monkeypatch):
    """The trace judged without the scale guard: it named 'bias' where check_accuracy of the
    same sample named fc1relu1 (its L2 norm 0.3x the golden's, cosine 1.0)."""
    biasnet_project(pytester)
    monkeypatch.setenv("FAULT", "relu1:scale:0.3")
    for marker, guard in (("", True), (", scale_tolerance=None", False)):
        pytester.makepyfile(test_scale=SCALE_TEST.format(marker=marker, sample="s00"))
        first = pytester.runpytest("-p", "no:cacheprovider", "-k", "test_bias").stdout.str()
        sample, traced = TRACED.search(first).groups()
        pytester.makepyfile(test_scale=SCALE_TEST.format(marker=marker, sample=sample))
        result = pytester.runpytest("-p", "no:cacheprovider")
        result.assert_outcomes(failed=2)
        op, reason = CHECKED.search(result.stdout.str()).groups()
        assert TRACED.search(result.stdout.str()).groups() == (sample, op)
        # the guard's advice, scale_tolerance=None, applied: another op, named alike by both
        assert (reason == "scale") == guard and (op == "fc1relu1") == guard


CLOSE_TEST = '''
import json
from pytest_ascend_accuracy import accuracy

@accuracy({marker})
def test_overflow(ascend_model, check_dataset):
    check_dataset(ascend_model("models/overflow.onnx"), "ovf", labels=json.load(open("ovf.json")))
'''


def overflow_project(pytester):
    """x * 1e5 -> MatMul(1e-5 weights) -> Softmax: x*1e5 leaves float16's range."""
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((16, 10)) * 1e-5).astype(np.float32)
    graph = h.make_graph([h.make_node("Mul", ["x", "S"], ["xs"], name="scale"),
                          h.make_node("MatMul", ["xs", "W"], ["logits"], name="fc"),
                          h.make_node("Softmax", ["logits"], ["prob"], name="softmax", axis=-1)],
                         "overflow", [h.make_tensor_value_info("x", T.FLOAT, [1, 16])],
                         [h.make_tensor_value_info("prob", T.FLOAT, [1, 10])],
                         [nh.from_array(np.array(1e5, np.float32), "S"), nh.from_array(w, "W")])
    (pytester.path / "models").mkdir()
    _save(graph, pytester.path / "models" / "overflow.onnx")
    (pytester.path / "ovf").mkdir()
    session = ort.InferenceSession(str(pytester.path / "models" / "overflow.onnx"))
    labels = {}
    for i in range(12):
        x = rng.uniform(-0.5, 0.5, (1, 16)).astype(np.float32)
        np.savez(pytester.path / "ovf" / f"o{i:02d}.npz", x=x)
        labels[f"o{i:02d}"] = int(session.run(None, {"x": x})[0].argmax())
    (pytester.path / "ovf.json").write_text(json.dumps(labels))


def test_the_mode_accuracy_diagnose_prints_runs_pasted_into_the_dataset_command(
        pytester, capsys, monkeypatch):
    overflow_project(pytester)
    pytester.makepyfile(test_ovf=CLOSE_TEST.format(marker=""))
    result = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose")
    result.assert_outcomes(failed=1)
    fix = re.search(r"\(YAML: modes: \[(\{keep_dtype: \[[^]]*\]\})\]", result.stdout.str())
    assert fix, result.stdout.str()
    monkeypatch.chdir(pytester.path)

    def dataset(*args):
        return main(["dataset", "models/overflow.onnx", "ovf", "--labels", "ovf.json"]
                    + list(args))

    assert dataset() == 1
    assert dataset("--mode", fix.group(1)) == 0
    assert "dataset accuracy PASSED" in capsys.readouterr().out
    # the summary names the fixed mode as keep_dtype(scale,fc): that spelling runs pasted too
    pytester.makepyfile(test_ovf=CLOSE_TEST.format(marker="modes=[keep_dtype(['scale', 'fc'])]")
                        .replace("import accuracy", "import accuracy, keep_dtype"))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    printed = re.search(r"  overflow \[(.+)\] top1", result.stdout.str()).group(1)
    assert printed == "keep_dtype(scale,fc)"
    assert dataset("--mode", printed) == 0
    assert "mode keep_dtype(scale,fc)" in capsys.readouterr().out
    assert dataset("--mode", "keep_dtype(scale,fcc)") == 2  # checked against the model's ops
    assert "'fcc'" in capsys.readouterr().err


def test_a_marker_max_drop_on_a_dataset_only_test_is_warned_of(pytester):
    clf_project(pytester)
    pytester.makepyfile(test_md='''
import json
from pytest_ascend_accuracy import accuracy

@accuracy(max_drop=0.3)
def test_md(ascend_model, check_dataset):
    check_dataset(ascend_model("models/clf.onnx"), "samples", metric="agreement")

@accuracy(max_drop=0.3, modes=["high_precision"])
def test_md_given(ascend_model, check_dataset):
    check_dataset(ascend_model("models/clf.onnx"), "samples", metric="agreement", max_drop=0.3)
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "-W", "always")
    result.assert_outcomes(passed=2)
    text = result.stdout.str()
    assert text.count("MarkerMaxDropWarning") == 2
    result.stdout.fnmatch_lines([
        "*test_md.py::test_md: @accuracy(max_drop=0.3) is the per-operator baseline's tolerance "
        "(each operator's cosine drop against its stored baseline, for check_accuracy), and this "
        "test ran check_dataset only, which it does not change: the dataset check held the "
        "metric's drop to check_dataset's own max_drop=0.01; pass check_dataset(..., "
        "max_drop=0.3) (YAML: dataset: {max_drop: 0.3}) to use it there, and leave it out of "
        "@accuracy"])


YAML_SUITE = '''
models:
  - name: classifier
    model: models/clf.onnx
    modes: [high_precision]
    dataset: {{samples: {samples}, labels: {labels}, metric: {metric}}}
'''


def test_yaml_dataset_names_the_closest_spellings_and_the_summary_the_item(pytester):
    clf_project(pytester)
    for (samples, labels, metric), line in [
            (("samples", "labels.json", "Top1"), "*dataset.metric: must be one of top1, top5, "
                                                 "agreement * got 'Top1'; closest: 'top1'"),
            (("sampels", "labels.json", "top1"), "*dataset.samples: required: a directory of "
                                                 "*, got 'sampels' (closest: samples*"),
            (("samples", "label.json", "top1"), "*dataset.labels: must be a .json or .npy file "
                                                "*, got 'label.json' (closest: labels.json)")]:
        pytester.makefile(".yaml", accuracy_ds=YAML_SUITE.format(samples=samples, labels=labels,
                                                                 metric=metric))
        result = pytester.runpytest("-p", "no:cacheprovider", "accuracy_ds.yaml")
        result.stdout.fnmatch_lines([line])
    pytester.makefile(".yaml", accuracy_ds=YAML_SUITE.format(samples="samples",
                                                             labels="labels.json", metric="top1"))
    result = pytester.runpytest("-p", "no:cacheprovider", "accuracy_ds.yaml", "-k", "dataset")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["  classifier [[]high_precision[]] top1 1.0000 device vs 1.0000 "
                                 "reference (drop 0.0000 <= 0.01), 30 samples, 0 flipped"])


LOG_TEST = '''
def test_logx(ascend_model, check_dataset):
    check_dataset(ascend_model("logx.onnx"), "s", metric="agreement")
'''


def test_a_reference_holding_nan_never_reads_passed(pytester):
    graph = h.make_graph([h.make_node("Log", ["x"], ["y"], name="log")], "logx",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1, 4])])
    _save(graph, pytester.path / "logx.onnx")
    (pytester.path / "s").mkdir()
    for i in range(4):
        x = np.array([[1.0, 2.0, 3.0, 0.5]], np.float32)
        x[0, 0] = -1.0 if i == 2 else 1.0  # log(-1): NaN in the fp32 reference
        np.savez(pytester.path / "s" / f"s{i}.npz", x=x)
    pytester.makepyfile(test_logx=LOG_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=j.xml",
                                "--accuracy-report=rep")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the onnxruntime fp32 reference's output 'y' holds NaN in 1 "
                                 "row(s): s2; metric agreement cannot score them*"])
    assert "PASSED" not in result.stdout.str()
    assert 'dataset_passed" value="true' not in (pytester.path / "j.xml").read_text()
    assert not list(pytester.path.rglob("dataset.html"))
