"""The diagnosis of a model that itself computes in float16 (a ``model.half()`` export, a Cast to
float16 before some ops): high precision and keep_dtype leave a float16 op float16 (ATC
--precision_mode; the emulator does the same), and buffer reuse and fusion off change no op's
precision, so the flow's modes cannot fix such an op's own overflow. It walked them all and
ended "no conversion mode restores accuracy ... check the operator implementations against the
reference", blaming the device for the model's own float16. It says which modes it tried, that
none changes a float16 op's precision, and the next step: export in float32 and check that
export, which, done as it says, names a keep_dtype fix that passes pasted."""
import re
import shlex

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.cli import app as cli  # noqa: E402


def attention(path, half):
    """MatMul by +-1e4 weights (scores past 65504 for inputs in [0, 1)), then Softmax; in
    float16 throughout (float16 initializers) where ``half``."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    dtype, elem = (np.float16, TensorProto.FLOAT16) if half else (np.float32, TensorProto.FLOAT)
    w = np.tile(np.r_[-np.ones(8), np.ones(8)] * 1e4, (16, 1)).astype(dtype)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["scores"], name="qk"),
         helper.make_node("Softmax", ["scores"], ["y"], name="softmax", axis=-1)],
        "attn", [helper.make_tensor_value_info("x", elem, [1, 8, 16])],
        [helper.make_tensor_value_info("y", elem, [1, 8, 16])],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def cast_square(path, half):
    """A float32 model; where ``half``, a Cast to float16 before its Mul by 1000, whose square
    (a Mul overflowing float16) feeds a Softmax, and a Cast back to float32 after it. Without
    the Casts: its float32 export."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, src = [], "x"
    if half:
        nodes.append(helper.make_node("Cast", ["x"], ["xh"], name="to_half",
                                      to=TensorProto.FLOAT16))
        src = "xh"
    k = np.full([16], 1000, np.float16 if half else np.float32)
    nodes += [helper.make_node("Mul", [src, "K"], ["m"], name="scale"),
              helper.make_node("Mul", ["m", "m"], ["sq"], name="square"),
              helper.make_node("Softmax", ["sq"], ["s" if half else "y"], name="softmax",
                               axis=-1)]
    if half:
        nodes.append(helper.make_node("Cast", ["s"], ["y"], name="to_float",
                                      to=TensorProto.FLOAT))
    graph = helper.make_graph(
        nodes, "castsq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16])],
        [numpy_helper.from_array(k, "K")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


#: (builder, the float16 model's file, its float32 export's)
#: a user's test file of one of these models (``{name}``: its file under models/), for the
#: plugin-level tests (tests/plugin/test_diagnose_float16_model.py, test_float16_model_hint.py)
PLUGIN_TEST = '''
from pytest_ascend_accuracy import accuracy{imports}


@accuracy(threshold=0.99{modes})
def test_model(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/{name}", seed=0)
    golden = golden_dump("models/{name}", inputs)
    check_accuracy(ascend_model("models/{name}").run(inputs, dump=True), golden)
'''

MODELS = {"half_export": (attention, "attn_half.onnx", "attn32.onnx"),
          "cast_to_float16": (cast_square, "castsq.onnx", "sq32.onnx")}

REASON = ("the ONNX model itself computes softmax in float16 (its golden is float16), which high "
          "precision and keep_dtype leave float16 (no mode makes it match its float16 golden)")
ADVICE = ("next step: export the model in float32 (or, where the model casts to float16 before "
          "softmax, drop that Cast) and check that export: against its float32 golden, a failure "
          "names the ops to keep in float32, or the mode, that fix it")


def _diagnose(capsys, *argv):
    code = cli.main(["diagnose", *argv])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_the_diagnosis_says_no_mode_can_and_its_next_step_done_as_said_is_fixed(
        kind, tmp_path, monkeypatch, capsys):
    build, half, f32 = MODELS[kind]
    monkeypatch.chdir(tmp_path)
    build(tmp_path / half, True)
    build(tmp_path / f32, False)
    argv = [half, "--cache-dir", "cache"]
    code, out = _diagnose(capsys, *argv)
    assert code == 1 and "diagnosis of" in out and ": NOT RESTORED" in out, out
    verdict = out.splitlines()[1]
    assert verdict.startswith("  no conversion mode restores accuracy, and none can: under "
                              "default the model differs from the golden network from op "
                              "softmax on"), verdict
    assert REASON in verdict and ADVICE in verdict, verdict
    assert "buffer reuse and fusion off change no op's precision either" in verdict
    tried = re.search(r"no mode tried passes \((.+?); the diagnosis's steps", verdict).group(1)
    for mode in ("high_precision", "keep_dtype(all ", "buffer_off", "fusion_off"):
        assert mode in tried, tried
    # the device is not blamed for the model's own float16
    assert "check the operator implementations" not in out
    told = re.search(r"; rerun this ascend-accuracy diagnose command with that export in place "
                     r"of (\S+) \(diagnose\(export, \.\.\.\) in Python\)$", verdict)
    assert told and told.group(1) == half, verdict
    # done as it says: the float32 export in place of the model, the command as it was
    code, out = _diagnose(capsys, *[f32 if a == half else a for a in argv])
    assert code == 0 and ": RESTORED" in out, out
    assert "float16 (its golden" not in out  # the float32 twin diagnoses as before
    assert re.search(r"^  default fails at op \w+; high precision (passes|does not pass).*; "
                     r"keep_dtype \{.+\} restores cosine 1\.000000 under fp16"
                     # a kept Cube op's chips, with no SoC (cube_keeps.py, audit 36 B F1)
                     r"(; this fix keeps Cube op .+ rerun with --soc-version=Ascend310P3 to "
                     r"check)?$", out, re.M), out
    yaml = re.search(r"in a YAML suite: modes: \[(.+)\]$", out, re.M).group(1)
    assert yaml.startswith("{keep_dtype: "), out
    # its fix, pasted, passes
    code, out = _diagnose(capsys, f32, "--cache-dir", "cache", "--mode", yaml)
    assert code == 0 and ": PASSES" in out, (shlex.quote(yaml), out)


def test_a_diagnosis_the_budget_stops_says_a_larger_one_changes_nothing(tmp_path):
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.triage.flow import diagnose

    attention(tmp_path / "attn_half.onnx", True)
    d = diagnose(str(tmp_path / "attn_half.onnx"), budget=2, cache=Cache(tmp_path / "cache"))
    assert d.budget_exhausted and d.restored_by is None
    assert d.verdict.startswith("stopped: conversion budget of 2 spent"), d.verdict
    assert (f"to continue from the cache; but {REASON}: a larger budget tries more modes, none "
            f"of which changes that; {ADVICE}; rerun this ascend-accuracy diagnose command with "
            f"that export in place of {tmp_path / 'attn_half.onnx'}") in d.verdict, d.verdict
