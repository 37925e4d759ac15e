"""A Log fed a floor float16 flushes to 0 is named with the op making the floor (audit 33:
onnx_asr's whisper front-end floors its mel power at 1e-10; the device's Log gave -Inf on
every padded frame, and the hint said no golden operand left float16's range, offering high
precision, which pasted failed at the same op). Any flushed value of a Log's argument or a
divisor counts, whatever its share of the tensor (``compare.zero_singular``)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.compare.zero_singular import flushed_into_singular

pytest.importorskip("onnxruntime")


def floored_log(path, between: bool = False):
    """log(clip((x @ w) ** 2, min=1e-10)), clamped to its max - 8 as whisper's front-end is
    (``between``: a Transpose between the Clip and the Log, as a review built it)."""
    inits = [numpy_helper.from_array(np.array(1e-10, np.float32), "floor"),
             numpy_helper.from_array(np.full((16, 16), 0.1, np.float32), "w"),
             numpy_helper.from_array(np.array(8.0, np.float32), "eight")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="mel"),
             helper.make_node("Mul", ["m", "m"], ["p"], name="power"),
             helper.make_node("Clip", ["p", "floor", ""], ["c"], name="floor_clip"),
             helper.make_node("Transpose", ["c"], ["ct"], name="swap", perm=[1, 0]),
             helper.make_node("Log", ["ct" if between else "c"], ["l"], name="log"),
             helper.make_node("ReduceMax", ["l"], ["mx"], name="rmax", keepdims=1),
             helper.make_node("Sub", ["mx", "eight"], ["lo"], name="lo"),
             helper.make_node("Max", ["l", "lo"], ["y"], name="clamp")]
    if not between:
        nodes.pop(3)
    graph = helper.make_graph(nodes, "floored", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       [16, 4] if between else [4, 16])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


TEST = """
import numpy as np
{imports}
{marker}
def test_padded(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    x[2:] = 0  # padding: power 0, floored at 1e-10
    inputs = accuracy_inputs("floored.onnx", inputs={{"x": x}})
    check_accuracy(ascend_model("floored.onnx").run(inputs), golden_dump("floored.onnx", inputs))
"""


@pytest.mark.parametrize("between, keep", [
    (False, "['log', 'floor_clip']"),
    (True, "['log', 'swap', 'floor_clip']"),  # a review: the Clip was left out, pasted failed
])
def test_the_hint_names_the_log_and_the_floor_and_pasted_it_passes(pytester, between, keep):
    floored_log(pytester.path / "floored.onnx", between)
    pytester.makepyfile(test_padded=TEST.format(imports="", marker=""))
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert ("next step: golden values leave the float16 range (log input:0 underflows to 0 "
            "(|1e-10|); ") in out
    # the -Inf never reaches the output, which the clamp floors at its max - 8 (whisper's)
    assert any(line.startswith("model outputs: clamp (output y: cosine 1.000000; rel_l2 ")
               and line.endswith(" passes its threshold; the check fails at ops before it")
               for line in result.stdout.lines)
    mode = next(line.strip() for line in result.stdout.lines
                if line.strip().startswith("modes=[keep_dtype("))
    assert mode == f"modes=[keep_dtype({keep})]"
    pytester.makepyfile(test_padded=TEST.format(
        imports="from pytest_ascend_accuracy import accuracy, keep_dtype",
        marker=f"@accuracy({mode})"))
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=1)


def test_only_a_singular_slot_counts_any_flushed_value():
    values = np.array([1e-10, 0.5, 0.7, 0.0], np.float32)
    assert flushed_into_singular("Log", "input:0", values) == pytest.approx(1e-10)
    assert flushed_into_singular("RealDiv", "input:1", values) == pytest.approx(1e-10)
    assert flushed_into_singular("Div", "input:0", values) is None  # a dividend: no Inf
    assert flushed_into_singular("Mul", "input:0", values) is None
    assert flushed_into_singular("Log", "input:0", np.array([1e-6, 0.0], np.float32)) is None


def test_a_floor_reaching_the_log_through_a_concat_is_kept_with_every_carrier(pytester):
    """A re-review: Log(Concat(Transpose(Clip), Transpose(Clip))) got ['log', 'concat'], which
    pasted failed at the Log: each Concat input holding a flushed value is followed up."""
    inits = [numpy_helper.from_array(np.array(1e-10, np.float32), "floor"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half")]
    nodes = [helper.make_node("Sub", ["x", "half"], ["c"], name="center"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Mul", ["r", "r"], ["p"], name="power"),
             helper.make_node("Clip", ["p", "floor", ""], ["cl"], name="clip"),
             helper.make_node("Transpose", ["cl"], ["t1"], name="t1", perm=[1, 0]),
             helper.make_node("Transpose", ["cl"], ["t2"], name="t2", perm=[1, 0]),
             helper.make_node("Concat", ["t1", "t2"], ["cc"], name="concat", axis=0),
             helper.make_node("Log", ["cc"], ["y"], name="log")]
    graph = helper.make_graph(nodes, "concat_floor", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 4])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              str(pytester.path / "cf.onnx"))
    body = """
        {imports}
        {marker}
        def test_cf(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("cf.onnx", seed=0)
            check_accuracy(ascend_model("cf.onnx").run(inputs), golden_dump("cf.onnx", inputs))
    """
    pytester.makepyfile(test_cf=body.format(imports="", marker=""))
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    mode = next(line.strip() for line in result.stdout.lines
                if line.strip().startswith("modes=[keep_dtype("))
    assert mode == "modes=[keep_dtype(['log', 'concat', 't1', 't2', 'clip'])]", mode
    pytester.makepyfile(test_cf=body.format(
        imports="from pytest_ascend_accuracy import accuracy, keep_dtype",
        marker=f"@accuracy({mode})"))
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=1)


MAGNITUDE = """
    import numpy as np
    {imports}
    {marker}
    def test_mag(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
        x = np.random.default_rng(0).uniform(0.5, 1.0, {shape}).astype(np.float32)
        x[..., 0] = {tiny}
        inputs = accuracy_inputs("mag.onnx", inputs={{"x": x}})
        check_accuracy(ascend_model("mag.onnx").run(inputs), golden_dump("mag.onnx", inputs))
"""


def _magnitude(path, between=(), concat=False):
    """``Log(Square(BETWEEN(Sqrt(ReduceSum(x * x)))))``, x [4, 2, 8]: basic-pitch's
    log-magnitude without its 1e-10 floor, ``between`` a list of (op type, constant or None)
    between the root and the square; ``concat``: the root Concat-ed with a louder copy's."""
    inits = [numpy_helper.from_array(np.array([1], np.int64), "axis"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two")]
    nodes = [helper.make_node("Mul", ["x", "x"], ["p"], name="pow"),
             helper.make_node("ReduceSum", ["p", "axis"], ["s"], name="sum", keepdims=0),
             helper.make_node("Sqrt", ["s"], ["r"], name="sqrt")]
    last = "r"
    for k, (op, value) in enumerate(between):
        ins = [last] if value is None else [last, f"c{k}"]
        if value is not None:
            inits.append(numpy_helper.from_array(np.array(value, np.float32), f"c{k}"))
        nodes.append(helper.make_node(op, ins, [f"b{k}"], name=f"{op.lower()}{k}",
                                      **({"perm": [1, 0]} if op == "Transpose" else {})))
        last = f"b{k}"
    if concat:
        nodes += [helper.make_node("Mul", ["x", "two"], ["x2"], name="louder"),
                  helper.make_node("Mul", ["x2", "x2"], ["p2"], name="pow2"),
                  helper.make_node("ReduceSum", ["p2", "axis"], ["s2"], name="sum2", keepdims=0),
                  helper.make_node("Sqrt", ["s2"], ["r2"], name="sqrt2"),
                  helper.make_node("Concat", [last, "r2"], ["cat"], name="stack", axis=0)]
        last = "cat"
    nodes += [helper.make_node("Mul", [last, last], ["q"], name="square"),
              helper.make_node("Log", ["q"], ["y"], name="log")]
    graph = helper.make_graph(nodes, "magnitude", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def _hint_then_pasted(pytester, mode=None):
    """(the printed keep_dtype mode, or ``mode``; its next step; the pasted run's outcome)."""
    body = MAGNITUDE.replace("{shape}", "(4, 2, 8)").replace("{tiny}", "7.0e-5")
    pytester.makepyfile(test_mag=body.format(imports="", marker=""))
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    step = next(line for line in result.stdout.lines if line.startswith("next step: "))
    printed = next(line.strip() for line in result.stdout.lines
                   if line.strip().startswith("modes=[keep_dtype("))
    pytester.makepyfile(test_mag=body.format(
        imports="from pytest_ascend_accuracy import accuracy, keep_dtype",
        marker=f"@accuracy({mode or printed})"))
    pasted = pytester.runpytest("-p", "no:randomly").parseoutcomes()
    return printed, step, pasted


def test_a_value_flushed_before_a_sqrt_keeps_the_ops_that_flush_it(pytester):
    """basic-pitch's log-magnitude (audit 34): a bin whose ``|x|^2`` sums to 9.8e-9 is flushed
    at the Mul and the ReduceSum, and the Sqrt of that 0 is 0 where the golden has 9.9e-5, a
    normal float16: the hint kept the Log and the Square, which pasted failed. The walk goes on
    to every op holding or taking a flushed value (the Sqrt for the sum it takes), through a
    Transpose and a scale by a constant (a review), each named with its own figure."""
    _magnitude(pytester.path / "mag.onnx", between=[("Transpose", None), ("Mul", 0.5)])
    printed, step, pasted = _hint_then_pasted(pytester)
    assert printed == ("modes=[keep_dtype(['log', 'square', 'mul1', 'transpose0', 'sqrt', "
                       "'sum', 'pow'])]"), printed
    assert pasted == {"passed": 1}
    assert "mul1 output:0 is computed from values float16 flushes to 0 at sum output:0" in step
    # the list printed before, pasted: -Inf at the Log
    assert _hint_then_pasted(pytester, "modes=[keep_dtype(['log', 'square'])]")[2] == {
        "failed": 1}


def test_a_concat_the_walk_does_not_follow_is_said(pytester):
    """A review: ``Square(Concat(Sqrt(sum1), Sqrt(sum2)))`` got ``['log', 'square']``, which
    pasted failed, with nothing saying the list stopped short."""
    _magnitude(pytester.path / "mag.onnx", concat=True)
    printed, step, pasted = _hint_then_pasted(pytester)
    assert ("the walk up from the flushed value stopped at stack (a Concat), which holds, takes "
            "or joins values float16 flushes too: it and the ops computing its inputs are not "
            "listed") in step, step
    assert "where it still fails, run with --accuracy-diagnose" in step


def test_a_log_after_the_first_failures_is_read_before_saying_the_golden_is_in_range(pytester):
    """basic-pitch on a pure tone (audit 34) failed first at ops of tiny values, and its Log,
    fed values float16 flushes, turned -Inf past the first three failing rows, which alone
    had their golden operands read: the next step said "the golden values stay within float16
    (and no golden operand looked at leaves its range)". The NaN/Inf op's own operands are
    read, and the step names what leaves the range there."""
    k = np.ones(8, np.float32)
    k[0] = 1e-4
    inits = [numpy_helper.from_array(np.array(3.0, np.float32), "three"),
             numpy_helper.from_array(k, "k")]
    nodes = [helper.make_node("Mul", ["x", "three"], ["a"], name="pre1"),
             helper.make_node("Mul", ["a", "three"], ["b"], name="pre2"),
             helper.make_node("Mul", ["b", "three"], ["c"], name="pre3"),
             helper.make_node("Mul", ["x", "k"], ["s"], name="small"),
             helper.make_node("Mul", ["s", "s"], ["q"], name="square"),
             helper.make_node("Log", ["q"], ["y"], name="log")]
    graph = helper.make_graph(nodes, "late_log", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [4, 8]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              str(pytester.path / "late.onnx"))
    pytester.makepyfile(test_late="""
        import numpy as np
        from pytest_ascend_accuracy import accuracy

        @accuracy(threshold=0.9999999999)
        def test_late(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            x = np.random.default_rng(0).uniform(0.5, 1.0, (4, 8)).astype(np.float32)
            inputs = accuracy_inputs("late.onnx", inputs={"x": x})
            check_accuracy(ascend_model("late.onnx").run(inputs), golden_dump("late.onnx", inputs))
    """)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    step = next(line for line in result.stdout.lines if line.startswith("next step: "))
    assert step.startswith("next step: values turn NaN/Inf at log, where golden values leave "
                           "the float16 range (log input:0 underflows to 0 (|"), step
    assert "stay within float16" not in step and "no golden operand" not in step


def test_ops_handing_on_a_graph_input_that_float16_flushes_are_kept(pytester):
    """A review: ``Log(Square(Transpose(x)))`` with quiet input bins of 1e-8 got ``['log',
    'square']``: the Transpose reading the input, float16 in the run, flushed them first."""
    nodes = [helper.make_node("Transpose", ["x"], ["t"], name="swap", perm=[1, 0]),
             helper.make_node("Mul", ["t", "t"], ["q"], name="square"),
             helper.make_node("Log", ["q"], ["y"], name="log")]
    graph = helper.make_graph(nodes, "quiet", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              str(pytester.path / "mag.onnx"))
    body = MAGNITUDE.replace("{shape}", "(4, 8)").replace("{tiny}", "1.0e-8")
    pytester.makepyfile(test_mag=body.format(imports="", marker=""))
    result = pytester.runpytest("-p", "no:randomly")
    mode = next(line.strip() for line in result.stdout.lines
                if line.strip().startswith("modes=[keep_dtype("))
    assert mode == "modes=[keep_dtype(['log', 'square', 'swap'])]", mode
    pytester.makepyfile(test_mag=body.format(
        imports="from pytest_ascend_accuracy import accuracy, keep_dtype",
        marker=f"@accuracy({mode})"))
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=1)


def _case(pytester, nodes, inits, outputs, marker="", tiny=None):
    """Run ``nodes`` (input x [4, 8] in [0.5, 1), its first column ``tiny`` where given) once;
    (the printed mode or "", next step, the test file's template)."""
    graph = helper.make_graph(nodes, "case", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              str(pytester.path / "mag.onnx"))
    body = MAGNITUDE.replace("{shape}", "(4, 8)").replace(
        "x[..., 0] = {tiny}", "pass" if tiny is None else f"x[..., 0] = {tiny}")
    pytester.makepyfile(test_mag=body.format(imports="from pytest_ascend_accuracy import "
                                             "accuracy, keep_dtype", marker=marker))
    result = pytester.runpytest("-p", "no:randomly")
    lines = result.stdout.lines
    mode = next((line.strip() for line in lines if line.strip().startswith("modes=[")), "")
    return mode, next(line for line in lines if line.startswith("next step: ")), body


@pytest.mark.parametrize("order", [["r", "k"], ["k", "r"]])
def test_a_scale_whose_constant_makes_the_flushed_value_is_kept(pytester, order):
    """A re-review: ``Mul(relu, k)`` with ``k[0] = 1e-8`` before ``Log(Square(.))`` was taken
    as a scale handing values on, and dropped with the chain: the list failed pasted (either
    operand order: tf2onnx writes the constant first)."""
    k = np.ones(8, np.float32)
    k[0] = 1e-8
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="act"),
             helper.make_node("Mul", order, ["s"], name="small"),
             helper.make_node("Mul", ["s", "s"], ["q"], name="square"),
             helper.make_node("Log", ["q"], ["y"], name="log")]
    mode, _, body = _case(pytester, nodes, {"k": k}, ["y"])
    assert mode == "modes=[keep_dtype(['log', 'square', 'small'])]", mode
    pytester.makepyfile(test_mag=body.format(
        imports="from pytest_ascend_accuracy import accuracy, keep_dtype",
        marker=f"@accuracy({mode})"))
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=1)


def test_a_late_cube_op_past_65504_keeps_its_probe_and_names_the_weight(pytester):
    """A review: reading a late NaN/Inf op's operands turned a MatMul's 7e4 weight into "no op
    list is known to fix it"; its Cube probe stays, its reason naming the weight."""
    w = np.full((8, 8), 0.1, np.float32)
    w[0, 0] = 7.0e4
    nodes = [helper.make_node("Mul", ["x", "three"], ["a"], name="pre1"),
             helper.make_node("Mul", ["a", "three"], ["b"], name="pre2"),
             helper.make_node("Mul", ["b", "three"], ["c"], name="pre3"),
             helper.make_node("Mul", ["x", "tenth"], ["xs"], name="shrink"),
             helper.make_node("MatMul", ["xs", "W"], ["y"], name="mm")]
    mode, step, _ = _case(pytester, nodes, {"three": 3.0, "W": w, "tenth": 0.1}, ["c", "y"],
                          marker="@accuracy(threshold=0.9999999999)")
    assert mode == "modes=[keep_dtype(['mm'])]", mode
    assert step.startswith("next step: values turn NaN/Inf at mm, where golden values leave the "
                           "float16 range (mm input:1 reaches |7e+04|); mm runs on the Cube "
                           "unit"), step


def _pasted(pytester, body, mode) -> dict:
    pytester.makepyfile(test_mag=body.format(
        imports="from pytest_ascend_accuracy import accuracy, keep_dtype",
        marker=f"@accuracy({mode})"))
    return pytester.runpytest("-p", "no:randomly").parseoutcomes()


@pytest.mark.parametrize("case", ["constant_first", "graph_input_rescaled"])
def test_the_walk_goes_through_scales_of_every_spelling(pytester, case):
    """A final review: ``Mul(0.5, mag)`` (tf2onnx writes the constant first), a flushed graph
    input rescaled into range (``Mul(x, 100)``) and a gain fed at run time were each claimed
    walked by a commit but tested by none; pasted, each list passes (the run-time gain:
    ``fw/gain.py`` of that review, checked by hand)."""
    tiny = "1.0e-4" if case != "graph_input_rescaled" else "1.0e-8"
    half = {"constant_first": ["half", "r"]}.get(case)
    if half:
        nodes = [helper.make_node("Mul", ["x", "x"], ["p"], name="pow"),
                 helper.make_node("Sqrt", ["p"], ["r"], name="sqrt"),
                 helper.make_node("Mul", half, ["m"], name="scale")]
    else:
        nodes = [helper.make_node("Mul", ["x", "big"], ["m"], name="scale")]
    nodes += [helper.make_node("Mul", ["m", "m"], ["q"], name="square"),
              helper.make_node("Log", ["q"], ["y"], name="log")]
    mode, step, body = _case(pytester, nodes, {"half": 0.5, "big": 100.0}, ["y"], tiny=tiny)
    expected = {"constant_first": "['log', 'square', 'scale', 'sqrt', 'pow']",
                "graph_input_rescaled": "['log', 'square', 'scale']"}[case]
    assert mode == f"modes=[keep_dtype({expected})]", (mode, step)
    assert _pasted(pytester, body, mode) == {"passed": 1}


def test_a_concat_behind_a_transpose_is_said_where_the_walk_stops(pytester):
    """A re-review: ``Square(Concat(Transpose(Sqrt(sum1)), Sqrt(sum2)))`` printed no stop."""
    nodes = [helper.make_node("Mul", ["x", "x"], ["p"], name="pow"),
             helper.make_node("Sqrt", ["p"], ["r"], name="sqrt"),
             helper.make_node("Transpose", ["r"], ["t"], name="swap", perm=[1, 0]),
             helper.make_node("Mul", ["x", "half"], ["x2"], name="quieter"),
             helper.make_node("Mul", ["x2", "x2"], ["p2"], name="pow2"),
             helper.make_node("Sqrt", ["p2"], ["r2"], name="sqrt2"),
             helper.make_node("Transpose", ["r2"], ["t2"], name="swap2", perm=[1, 0]),
             helper.make_node("Concat", ["t", "t2"], ["c"], name="stack", axis=0),
             helper.make_node("Mul", ["c", "c"], ["q"], name="square"),
             helper.make_node("Log", ["q"], ["y"], name="log")]
    _, step, _ = _case(pytester, nodes, {"half": 0.5}, ["y"], tiny="1.0e-4")
    assert "the walk up from the flushed value stopped at stack (a Concat)" in step, step


def test_a_cube_op_making_the_flushed_value_is_kept_and_not_walked_past(pytester):
    """A re-review: ``Log(Square(Mul(Transpose(MatMul(x, W)), 0.5)))`` with ``W[:, 0] = 1e-9``
    printed a list without the MatMul, which pasted failed; kept, it passes."""
    w = np.random.default_rng(1).uniform(0.5, 1.0, (8, 8)).astype(np.float32)
    w[:, 0] = 1e-9
    nodes = [helper.make_node("MatMul", ["x", "W"], ["m"], name="mm"),
             helper.make_node("Transpose", ["m"], ["t"], name="swap", perm=[1, 0]),
             helper.make_node("Mul", ["t", "k"], ["s"], name="scale"),
             helper.make_node("Mul", ["s", "s"], ["q"], name="square"),
             helper.make_node("Log", ["q"], ["y"], name="log")]
    mode, step, body = _case(pytester, nodes, {"W": w, "k": 0.5}, ["y"])
    assert mode == "modes=[keep_dtype(['log', 'square', 'scale', 'swap', 'mm'])]", (mode, step)
    assert _pasted(pytester, body, mode) == {"passed": 1}
