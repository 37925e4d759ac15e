"""The float16-range hint named an op whose golden values all lie below float16's smallest
normal, and failed pasted: a BatchNorm with a 1e9 variance, a 1x1 Conv with a bias of -19 and a
Sigmoid (golden below 6e-08), fusion off, read ``keep_dtype(['norm', 'prob'])`` (prob's output
flushes to 0 in float16) beside high precision. Both failed pasted at prob (cosine 0.612952 in
float32): kept in float32 it is judged by its plain cosine, without float16's allowance for values
that small (``compare/tiny_values.py``), while ``keep_dtype(['norm'])`` passes (prob float16,
judged with the allowance). The hint now leaves such an op out, says so, and offers no high
precision (``failure_kinds.tiny_failing``); an op whose flushed output another op takes as an
operand stays named (``RangeFinding.feeds``: tests/plugin/test_hint_underflow.py)."""
from test_hint_cube_tiny_sigmoid import TEST, tiny_map
from test_hints_contract import parse_hint


def test_an_underflowing_sigmoid_below_float16s_normal_range_is_left_out_and_the_hint_passes(
        pytester):
    tiny_map(pytester.mkdir("models"), bias=-19.0)  # prob below 6e-08
    pytester.makepyfile(test_map=TEST.format(imports="FUSION_OFF", modes="FUSION_OFF"))
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    text = failed.stdout.str()
    block = text[text.index("next step:"):]
    exprs, _, imports = parse_hint(block)
    assert exprs == ["FUSION_OFF | keep_dtype(['norm'])"], block
    assert "HIGH_PRECISION" not in block, block
    assert ("(norm input:4 reaches |1e+09|); prob is left out (golden below float16's smallest "
            "normal, |5.96e-08|: kept in float32 it is judged without float16's allowance for "
            "values that small)") in block, block
    # pasted: the printed mode passes; the list printed before (prob kept too) fails at prob
    pytester.makepyfile(test_map=TEST.format(
        imports=imports, modes=f"{exprs[0]}, FUSION_OFF | keep_dtype(['norm', 'prob'])"))
    pasted = pytester.runpytest("-p", "no:cacheprovider")
    pasted.assert_outcomes(passed=1, failed=1)
    pasted.stdout.fnmatch_lines(["FAILED *fusion_off+keep_dtype(norm,prob)*: first failing op "
                                 "prob *"])
