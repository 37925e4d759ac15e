"""A user's check of a model whose output float16 holds only as subnormals, which the device
flushes (audit H324: a random-init MobileNetV3's SE Mul read cosine 1.000000 with float16's
close subnormals counted as equal, and failed the scale guard at an L2 norm of 0.4068x over
every position). The guard judges the positions the cosine judged compares: the check passes,
and a device that scales the op by 0.4 (cosine is blind to it) still fails it by the guard,
judged by the cosine or by rel_l2 with those positions as equal."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy

#: golden 2.9e-8 (float16 rounds it to 0) at 62 positions, 3.1e-8 (one step of its grid, 6e-8)
#: at 2: every position below float16's smallest normal, L2 norm 0.36x the golden's
FLUSHED = {"x": np.array([2.9e-4] * 62 + [3.1e-4] * 2, np.float32).reshape(1, 64)}
#: 60 such positions beside 4 of 3e-6, which hold nearly all the norm
MIXED = {"x": np.array([2.0e-4] * 60 + [3.0e-2] * 4, np.float32).reshape(1, 64)}


@accuracy(threshold=0.99)
def test_flushed(ascend_model, golden_dump, check_accuracy):
    check_accuracy(ascend_model("tiny.onnx").run(FLUSHED), golden_dump("tiny.onnx", FLUSHED))


@accuracy(threshold=0.99)
def test_mixed(ascend_model, golden_dump, check_accuracy):
    check_accuracy(ascend_model("tiny.onnx").run(MIXED), golden_dump("tiny.onnx", MIXED))


@accuracy(threshold=0.7, metric="rel_l2")
def test_mixed_rel_l2(ascend_model, golden_dump, check_accuracy):
    check_accuracy(ascend_model("tiny.onnx").run(MIXED), golden_dump("tiny.onnx", MIXED))
'''
#: the faulted device: its Mul scales its output by 0.4
FAULTED = '''
from pytest_ascend_accuracy import backends
from pytest_ascend_accuracy.backends.emulator.faults import Fault

_MAKE = backends.make_backend


def _faulted(*args, **kwargs):
    return _MAKE(*args, faults=[Fault.on_op("tiny_mul", effect="scale", amount=0.4)], **kwargs)


def pytest_configure(config):
    backends.make_backend = _faulted


def pytest_unconfigure(config):
    backends.make_backend = _MAKE
'''


def _model(path):
    """y = x * 1e-4 (a normal float16 value), named tiny_mul."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])
    k = numpy_helper.from_array(np.array(1e-4, np.float32), "k")
    graph = helper.make_graph([helper.make_node("Mul", ["x", "k"], ["y"], name="tiny_mul")],
                              "tiny", [x], [y], [k])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


def test_flushed_subnormals_pass_and_a_scaled_device_fails_by_the_guard(pytester):
    _model(pytester.path / "tiny.onnx")
    pytester.makepyfile(test_tiny=TEST)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(passed=3)

    pytester.makeconftest(FAULTED)
    faulted = pytester.runpytest("-p", "no:cacheprovider", "-k", "mixed")
    faulted.assert_outcomes(failed=2)
    faulted.stdout.fnmatch_lines_random([
        "FAILED test_tiny.py::test_mixed *: first failing op tiny_mul (scale: L2 norm 0.3*x the "
        "golden's, outside 0.5-2x (the cosine judged, *, is blind to scale;*",
        # rel_l2 judged with the 60 flushed positions as equal: so is the norm
        "FAILED test_tiny.py::test_mixed_rel_l2 *: first failing op tiny_mul (scale: L2 norm "
        "0.3*x the golden's with the 60 positions the rel_l2 judged counts as equal (every "
        "position: 0.3*x), outside 0.5-2x (rel_l2 0.6* meets its threshold; msaccucmp's rel_l2 "
        "0.6*"])
