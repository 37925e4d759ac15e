"""The summary grid of a test whose mode keeps many ops in float32 (a pasted diagnosis fix):
the column title gives the mode's lists by count, so the grid stays readable, and so does the
failure line's [model, mode] beside a test id that still spells the mode in full (A1: a pasted
313-op fix made the grid's header one line of 19,310 characters, the row under it unreadable)."""
from pytest_ascend_accuracy.plugin.session import CheckRecord
from pytest_ascend_accuracy.plugin.terminal_report import summary_lines
from pytest_ascend_accuracy.report.mode_titles import GRID_TITLE_MAX, grid_titles

OPS = [f"/model.{i}/act/Op" for i in range(40)]


def _chain(path):
    import onnx
    from onnx import TensorProto, helper

    nodes, prev = [], "x"
    for i, name in enumerate(OPS):
        nodes.append(helper.make_node("Sigmoid" if i % 2 == 0 else "Relu", [prev], [f"t{i}"],
                                      name=name))
        prev = f"t{i}"
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 8])
    graph = helper.make_graph(nodes, "chain", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


TEST = '''
from pytest_ascend_accuracy import FUSION_OFF, accuracy, keep_dtype

OPS = {ops!r}


@accuracy(threshold=0.99, modes=["default", FUSION_OFF | keep_dtype(OPS)])
def test_chain(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("chain.onnx", seed=0)
    check_accuracy(ascend_model("chain.onnx").run(inputs), golden_dump("chain.onnx", inputs))
'''


def test_a_pasted_long_keep_dtype_mode_reads_as_a_count_in_the_grid(pytester):
    _chain(pytester.path / "chain.onnx")
    pytester.makepyfile(TEST.format(ops=OPS))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    lines = result.outlines
    at = lines.index("2 accuracy checks: 2 passed, 0 failed (1 model x 2 modes)")
    assert lines[at + 1:at + 3] == ["  model  default  fusion_off+keep_dtype(40 ops)",
                                    "  chain  passed   passed"]
    full = "fusion_off+keep_dtype(" + ",".join(OPS) + ")"
    assert any(f"test_chain[{full}] PASSED" in line for line in
               pytester.runpytest("-p", "no:cacheprovider", "-v").outlines)


def rec(mode, passed=True):
    return CheckRecord(nodeid=f"t.py::t[{mode}]", model="m", mode=mode, passed=passed)


def test_modes_alike_once_counted_are_numbered_and_spelled_out_below_the_grid():
    a = "keep_dtype(" + ",".join(OPS[:9]) + ")"
    b = "keep_dtype(" + ",".join(OPS[9:18]) + ")"
    short = "fusion_off+keep_dtype(" + OPS[0] + ")"  # within the limit: as it is
    assert len(short) <= GRID_TITLE_MAX < len(a)
    lines = summary_lines([rec("default"), rec(a), rec(b, False), rec(short)], backend="b",
                          cache_stats={})
    assert lines[2:6] == [  # (the records in their test ids' order)
        f"  model  default  {short}  keep_dtype(9 ops) #1  keep_dtype(9 ops) #2",
        "  m      passed   " + "passed".ljust(len(short)) + "  passed                FAILED",
        f"  keep_dtype(9 ops) #1: {a}",
        f"  keep_dtype(9 ops) #2: {b}"]
    # the failure line's test id spells the mode; the brackets beside it give it short
    assert f"FAILED t.py::t[{b}] [m, keep_dtype(9 ops)]" in lines


def test_fusion_rules_off_count_as_rules_and_one_op_as_an_op():
    rules = "rules_off(" + ",".join(f"Rule{i}FusionPass" for i in range(3)) + ")"
    one = "keep_dtype(" + "/a/very/long/op/name/" * 3 + ")"
    assert grid_titles([rules, one]) == (["rules_off(3 rules)", "keep_dtype(1 op)"], [])
