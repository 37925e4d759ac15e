"""A Hugging Face style attention mask (``Where(mask, scores, torch.finfo(float32).min)``, then
Softmax and MatMul) as a user checks it: it passed nowhere (audit H324: every GPT-2 and BERT
export failed at the mask's ``Where``, "NaN/Inf on one side only", the float16 device holding
-inf where the float32 golden holds -3.4e38), though both mask alike. It passes now and says
which positions it did not judge; a device wrong after the mask, or in it, still fails, and so
does a MatMul whose float32 golden reaches 1e6 where the float16 device overflows."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

TEST = """
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.99)
def test_model(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("{model}", seed=0)
    check_accuracy(ascend_model("{model}").run(inputs), golden_dump("{model}", inputs))
"""

#: a device wrong in one op: F20_FAULT=NAME:effect:amount
FAULT_CONFTEST = """
import os
from pytest_ascend_accuracy import backends
from pytest_ascend_accuracy.backends.emulator.faults import Fault

_MAKE = backends.make_backend
FAULT = os.environ.get("F20_FAULT")


def _faulted(*args, **kwargs):
    name, effect, amount = FAULT.split(":")
    return _MAKE(*args, faults=[Fault("op", name, effect, float(amount))], **kwargs)


def pytest_configure(config):
    if FAULT:
        backends.make_backend = _faulted


def pytest_unconfigure(config):
    backends.make_backend = _MAKE
"""

#: the masked positions: 28 above the diagonal of each 8x8 head, 2 heads
MASKED = 56


def _model(nodes, inits, out_shape):
    graph = helper.make_graph(
        nodes, "attn", [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 2, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _attention():
    """Where(causal mask, scores, float32 min) -> Softmax -> MatMul with V, float32."""
    rng = np.random.default_rng(0)
    causal = np.tril(np.ones((8, 8), bool)).reshape(1, 1, 8, 8)
    return _model([helper.make_node("Where", ["causal", "scores", "min"], ["masked"], name="where"),
                   helper.make_node("Softmax", ["masked"], ["probs"], name="softmax", axis=-1),
                   helper.make_node("MatMul", ["probs", "v"], ["y"], name="mm")],
                  [numpy_helper.from_array(causal, "causal"),
                   numpy_helper.from_array(np.array(np.finfo(np.float32).min, np.float32), "min"),
                   numpy_helper.from_array(rng.standard_normal((8, 4)).astype(np.float32), "v")],
                  [1, 2, 8, 4])


def _overflowing_matmul():
    """scores x W with W of 2e5: the float32 golden reaches 1e6, float16 overflows to inf."""
    w = np.full((8, 4), 2e5, np.float32)
    return _model([helper.make_node("MatMul", ["scores", "w"], ["y"], name="mm")],
                  [numpy_helper.from_array(w, "w")], [1, 2, 8, 4])


@pytest.fixture
def project(pytester):
    onnx.save(_attention(), str(pytester.path / "attn.onnx"))
    onnx.save(_overflowing_matmul(), str(pytester.path / "ovf.onnx"))
    pytester.makeconftest(FAULT_CONFTEST)
    return pytester


def test_the_mask_passes_and_says_its_stand_in_positions(project):
    project.makepyfile(test_model=TEST.format(model="attn.onnx"))
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines([
        f"*test_model.py:7: MaskStandInWarning: mask stand-in compared as equal: where "
        f"({MASKED} of 128 positions). The golden holds float32's -max (-3.4e38, as "
        "torch.finfo(torch.float32).min gives an attention mask) or +max there and the device "
        "the infinity of that sign*both mask alike, so those positions are not judged; every "
        "other position is. -W 'ignore:mask stand-in compared as equal' silences this"])


def test_the_filter_the_note_prints_silences_it(project):
    """Its advice pasted: -W 'ignore:mask stand-in compared as equal'."""
    project.makepyfile(test_model=TEST.format(model="attn.onnx"))
    result = project.runpytest("-p", "no:cacheprovider", "-W",
                               "ignore:mask stand-in compared as equal")
    result.assert_outcomes(passed=1)
    assert "MaskStandInWarning" not in result.stdout.str()


@pytest.mark.parametrize("fault, first, why", [
    ("softmax:noise:0.5", "softmax", "cosine   *0.9* < 0.99*"),
    ("where:scale:3", "where", "why *scale: L2 norm 3x the golden's, outside 0.5-2x (the cosine "
                               "judged, 1.000000, is blind to scale;*")])
def test_a_device_wrong_after_or_in_the_mask_still_fails(project, monkeypatch, fault, first,
                                                         why):
    """Noise in Softmax; the Where's scores times 3 (its masked positions stay -inf): the
    positions left out are the stand-in's only, the others are judged (the scale guard fails
    the Where by them)."""
    monkeypatch.setenv("F20_FAULT", fault)
    project.makepyfile(test_model=TEST.format(model="attn.onnx"))
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"accuracy FAILED: * first failure in graph order: {first} *",
                                 f"*{why}"])


def test_a_matmul_overflowing_float16_still_fails(project):
    project.makepyfile(test_model=TEST.format(model="ovf.onnx"))
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["accuracy FAILED: * first failure in graph order: mm *",
                                 "*why*NaN/Inf on one side only at *"])
    assert "MaskStandInWarning" not in result.stdout.str()
