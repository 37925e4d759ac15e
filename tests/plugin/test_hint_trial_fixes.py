"""Hints a user trial pasted verbatim and found not to work, each pasted again here.

- ``ignore=["norm", "to_flat"]`` hid norm's 1e9 variance: the hint said "no float16 overflow
  seen" and offered fusion and buffer modes; ignored ops upstream of the failure are looked at;
"""
from test_hints_contract import parse_hint

TEST = '''
from pytest_ascend_accuracy import accuracy, {imports}
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy({marker})
def test_model(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/{model}.onnx")
    actual = ascend_model("models/{model}.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/{model}.onnx", inputs))
'''


def _test(marker, model="overflow", imports="accuracy"):
    return TEST.format(marker=marker, model=model, imports=imports)


def _pasted(pytester, exprs, imports, marker, model):
    """Each printed mode pasted into ``modes=[...]`` of the same test: the outcomes."""
    for k, expr in enumerate(exprs):
        pytester.makepyfile(**{f"test_pasted_{k}": _test(f"{marker}, modes=[{expr}]", model,
                                                         imports)})
    return pytester.runpytest("-p", "no:cacheprovider",
                              *[f"test_pasted_{k}.py" for k in range(len(exprs))])


def test_an_ignored_op_upstream_of_the_failure_is_looked_at_for_float16_range(
        pytester, models_dir):
    marker = 'threshold=0.95, ignore=["norm", "to_flat"]'
    pytester.makepyfile(test_model=_test(marker))
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    text = failed.stdout.str()
    assert "no float16 overflow seen" not in text
    failed.stdout.fnmatch_lines(["next step: golden operands leave the float16 range (norm "
                                 "input:4 reaches |1e+09|; norm is ignored but feeds the failing "
                                 "ops)*"])
    exprs, _, imports = parse_hint(text)
    assert exprs[0] == "keep_dtype(['norm'])"
    _pasted(pytester, exprs, imports, marker, "overflow").assert_outcomes(passed=len(exprs))
