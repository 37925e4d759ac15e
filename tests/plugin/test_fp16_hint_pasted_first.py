"""A keep_dtype hint printed for float16 underflow is a prediction made from the golden values
of the first few failing ops: it is printed as a fix only where it explains the first failure
(that op, or the producer of its flushed operand, is kept, with the ops fused with them). H324,
random-init torchvision CNNs: EfficientNet-B0 failed first at a Conv losing float16's subnormal
precision (cosine 0.986978) and got keep_dtype of two ops after it, which pasted failed at the
same Conv with the same cosine; MobileNetV3's hint kept a HardSwish but not the Conv fused with
it, whose output underflowed, and pasted failed at that HardSwish. Each printed mode is pasted
here as printed."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from test_hints_contract import parse_hint

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy{imports}


@accuracy(threshold=0.99{modes})
def test_{model}(ascend_model, golden_dump, check_accuracy):
    rng = np.random.default_rng(0)
    x = {inputs}
    inputs = {{"x": x.astype(np.float32)}}
    actual = ascend_model("models/{model}.onnx").run(inputs, dump=True)
    check_accuracy(actual, golden_dump("models/{model}.onnx", inputs))
'''
SUBNORMAL_X = "rng.uniform(0.7, 1.5, (1, 256))"
# 31 of 32 positions a channel: conv's output ~2.4e-8 (flushed by float16), one ~1e-7
FUSED_X = "rng.uniform(0.7, 0.9, (1, 8, 4, 4)); x[0, :, 0, 0] = rng.uniform(3, 4, 8)"


def _scalar(name, value):
    return helper.make_tensor(name, TensorProto.FLOAT, [], [value])


def _save(pytester, name, nodes, initializers, shape):
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    (pytester.path / "models").mkdir(exist_ok=True)
    onnx.save(model, str(pytester.path / "models" / f"{name}.onnx"))


def _subnormal(pytester):
    """to_sub outputs float16 subnormals (5e-8..7.5e-8: no value flushes), which amplify
    brings back to the normal range with their rounding (its first failure, cosine ~0.98);
    to_tiny's output then flushes to 0 and from_tiny gets zeros."""
    _save(pytester, "subnormal",
          [helper.make_node("Mul", ["x", "s"], ["a"], name="to_sub"),
           helper.make_node("Mul", ["a", "b"], ["c"], name="amplify"),
           helper.make_node("Mul", ["c", "t"], ["d"], name="to_tiny"),
           helper.make_node("Mul", ["d", "h"], ["y"], name="from_tiny")],
          [_scalar("s", 5e-8), _scalar("b", 6e4), _scalar("t", 2e-6), _scalar("h", 6e4)],
          [1, 256])


def _fused(pytester):
    """conv (fused with act, a HardSwish) outputs values float16 flushes; the fused pair
    passes by float16's allowance for values that small, amp (a Div by 1e-5) fails on act's
    flushed output."""
    w = (np.eye(8, dtype=np.float32) * 3e-8).reshape(8, 8, 1, 1)
    _save(pytester, "fused",
          [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
           helper.make_node("HardSwish", ["c"], ["a"], name="act"),
           helper.make_node("Div", ["a", "k"], ["y"], name="amp")],
          [numpy_helper.from_array(w, "w"), _scalar("k", 1e-5)], [1, 8, 4, 4])


def _file(model, inputs, expr=None, imports=""):
    return TEST.format(model=model, inputs=inputs, modes=f", modes=[{expr}]" if expr else "",
                       imports=f", {imports}" if imports else "")


def _hint(pytester, model, inputs):
    pytester.makepyfile(**{f"test_{model}": _file(model, inputs)})
    run = pytester.runpytest("-p", "no:cacheprovider", f"test_{model}.py")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    block = text[text.index("next step:"):]
    return text, block[:block.index("\n\n")] if "\n\n" in block else block


def _paste(pytester, model, inputs, exprs, imports):
    files = []
    for k, expr in enumerate(exprs):
        pytester.makepyfile(**{f"test_pasted_{k}": _file(model, inputs, expr, imports)})
        files.append(f"test_pasted_{k}.py")
    return pytester.runpytest("-p", "no:cacheprovider", *files)


def test_no_keep_dtype_fix_is_printed_where_no_finding_explains_the_first_failure(pytester):
    _subnormal(pytester)
    text, block = _hint(pytester, "subnormal", SUBNORMAL_X)
    assert "first failure in graph order: amplify (#1)" in text
    assert "keep_dtype" not in block  # to_tiny, from_tiny come after amplify: no fix
    assert "--accuracy-diagnose" in block
    # no op of it is fused and the emulator does not emulate buffer reuse: no mode to paste
    # (fusion off, offered before, repeated the verdict: tests/plugin/test_if_branch_range_hint)
    assert "so fusion off repeats this verdict" in block
    assert "\n  modes=[" not in block and "\n  or modes=[" not in block


def test_a_keep_dtype_hint_keeps_the_ops_fused_with_those_it_names(pytester):
    _fused(pytester)
    _, block = _hint(pytester, "fused", FUSED_X)
    exprs, _, imports = parse_hint(block)
    kept = eval(exprs[0][len("keep_dtype("):-1])  # noqa: S307  (a printed list of names)
    assert sorted(kept) == ["act", "amp", "conv"]  # act alone splits its fusion with conv
    assert "conv kept too, fused with those ops" in block
    pasted = _paste(pytester, "fused", FUSED_X, exprs, imports)
    pasted.assert_outcomes(passed=len(exprs))
