"""A check of a batch fails where a sample alone would fail, naming the sample, and its printed
fix passes pasted (audit 35: a batch of two Smart Turn clips passed an end-of-turn probability
that doubled, 0.114 -> 0.221, at cosine 0.9996; compare/batch_samples.py). The model has a
symbolic batch, x [N, 4] -> MatMul -> Sigmoid -> y [N, 1] (fused: ``logitprob``); the faulted
device adds 0.1 to each probability: sample 0's moves by 10% (0.9933 -> 1.093), sample 1's by 84%
(0.1192 -> 0.2192), and the batch's cosine is 0.9969."""
import re

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy

X = np.array([[5.0] * 4, [-2.0] * 4], np.float32)  # logits 5 and -2


@accuracy(threshold=0.95{extra})
def test_batch(ascend_model, golden_dump, check_accuracy):
    inputs = {{"x": X}}
    check_accuracy(ascend_model("cls.onnx").run(inputs), golden_dump("cls.onnx", inputs))
'''
FAULTED = '''
from pytest_ascend_accuracy import backends
from pytest_ascend_accuracy.backends.emulator.faults import Fault

_MAKE = backends.make_backend


def _faulted(*args, **kwargs):
    return _MAKE(*args, faults=[Fault.on_op("prob", effect="offset", amount=0.1)], **kwargs)


def pytest_configure(config):
    backends.make_backend = _faulted


def pytest_unconfigure(config):
    backends.make_backend = _MAKE
'''
FIX = re.compile(r"(per_op=\{[^}]*\}) in a test \(YAML")


def _model(path):
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["l"], name="logit"),
         helper.make_node("Sigmoid", ["l"], ["y"], name="prob")], "cls",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 1])],
        [numpy_helper.from_array(np.full((4, 1), 0.25, np.float32), "w")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                ir_version=8), str(path))


def test_a_batch_fails_naming_the_sample_and_the_printed_fix_passes_pasted(pytester):
    _model(pytester.path / "cls.onnx")
    pytester.makepyfile(test_cls=TEST.format(extra=""))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)  # no fault: passes

    pytester.makeconftest(FAULTED)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    run.stdout.fnmatch_lines([
        "accuracy FAILED: 1 of 1 tensor fail cosine >= 0.95 (one value per sample: the "
        "relative error it allows); first failure in graph order: logitprob (#0)",
        "*why * one element: sample [[]1] of 2 along axis 0 (the inputs' dim 'batch') "
        "(golden 0.1192, device "
        "0.2192), judged as that sample alone: cosine tells only its sign; its relative error "
        "0.8392 is over the 0.3287 that cosine >= 0.95 allows *",
        "model outputs: logitprob (output y: sample [[]1] of 2: one element 0.1192 -> 0.2192, "
        "relative error 0.839) FAILS"])
    fixes = set(FIX.findall(text))
    assert fixes == {'per_op={"prob": 0.766005}'}, text
    pytester.makepyfile(test_cls=TEST.format(extra=", " + fixes.pop()))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
