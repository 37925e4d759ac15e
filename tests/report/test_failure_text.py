"""The fixed failure block and passing summary, asserted as exact text."""
import numpy as np
import pytest

from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy
from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.failure_text import (
    default_hint, failure_text, printable, summary_text, table)


def f16(v):
    return np.array(v, np.float16)


def f32(v):
    return np.array(v, np.float32)


def _dumps():
    actual = DumpSet.from_arrays(
        {"Conv_0": [f16([1, 2, 3, 4])], "conv1_relu": [f16([1, 2, 3, 4])],
         "Add_2": [f16([1, 1, 1, -1])], "Mul_3": [f16([1, np.nan, 3, 4])]},
        op_types={"Conv_0": "Conv2D", "conv1_relu": "Conv2D", "Add_2": "Add", "Mul_3": "Mul"},
        original_names={"conv1_relu": ["/m/Conv_1", "/m/Relu_1"]})
    golden = DumpSet.from_arrays(
        {"Conv_0": [f32([1, 2, 3, 4])], "_m_Conv_1": [f32([0, 0, 0, 0])],
         "_m_Relu_1": [f32([1, 2, 3, 5])], "Add_2": [f32([1, 1, 1, 1])],
         "Mul_3": [f32([1, 2, 3, 4])], "Shape_9": [f32([4])]})
    return actual, golden


EXPECTED = """\
accuracy FAILED: 3 of 4 tensors fail cosine >= 0.999; first failure in graph order: conv1_relu (#1)

first failing operator (#1 in graph order):
  dump name      conv1_relu
  original ops   /m/Conv_1, /m/Relu_1
  golden         /m/Relu_1 output:0 (matched by fused)
  op type        Conv2D
  dtypes         float16 (golden float32)
  shape          (4,)
  cosine         0.993999 < 0.999 (threshold that would pass this op: 0.993999; no threshold \
alone passes the check (Mul_3: NaN/Inf on one side at 1 position))
  max abs error  1.000000
  max rel error  0.200000
  NaN/Inf        actual 0 NaN, 0 +Inf, 0 -Inf; golden 0 NaN, 0 +Inf, 0 -Inf

next worst operators (2 of 2):
  #  op     type    cosine    rel_l2   max_abs  why
  3  Mul_3  Mul   1.000000  0.000000  0.000000  NaN/Inf on one side at 1 position
  2  Add_2  Add   0.500000  1.000000  2.000000  cosine < 0.999

coverage: 6 golden ops: 4 compared, 1 inside fused ops, 1 unmatched (Shape_9); 0 actual ops unmatched
full report: out/report.csv
next step: values leave the float16 range at Mul_3 (NaN/Inf in the actual output or |golden| > \
65504), but not at or before the first failing op (conv1_relu): no op list is known to fix it; to \
find one by running, diagnose(model, inputs, threshold=...) names the ops to keep in float32 (from \
pytest_ascend_accuracy.triage.flow import diagnose)"""


def test_failure_block_exact_text():
    r = compare_dumps(*_dumps())
    assert failure_text(r, r.judge(0.999), csv_path="out/report.csv") == EXPECTED


def test_assert_accuracy_raises_the_block_and_keeps_the_data(tmp_path):
    actual, golden = _dumps()
    csv = tmp_path / "report.csv"
    with pytest.raises(AccuracyFailure) as exc:
        assert_accuracy(actual, golden, 0.999, csv_path=csv, hint="run triage")
    err = exc.value
    assert isinstance(err, AssertionError)
    assert str(err) == EXPECTED.replace("out/report.csv", str(csv)).rsplit("\nnext step:", 1)[0] \
        + "\nnext step: run triage"
    assert err.verdict.first_failure.op_name == "conv1_relu"
    assert err.result.judge(0.0, ignore=["Mul_3"]).passed
    assert csv.read_text().startswith("Index,OpType,NPUDump,")


def test_assert_accuracy_passes_and_returns_the_result():
    actual, golden = _dumps()
    r = assert_accuracy(actual, golden, 0.4, ignore=["Mul*"])
    assert [x.op_name for x in r.rows] == ["Conv_0", "conv1_relu", "Add_2", "Mul_3"]


def test_assert_accuracy_uses_per_op_thresholds_and_other_metrics():
    actual, golden = _dumps()
    assert_accuracy(actual, golden, 0.999, per_op={"conv1_relu": 0.99, "Add_*": 0.5},
                    ignore=["Mul_3"])
    with pytest.raises(AccuracyFailure, match=r"rel_l2         1.000000 > 0.2 \(threshold that "
                                              r"would pass: 1.000000\)"):
        assert_accuracy(actual, golden, 0.2, metric="rel_l2", ignore=["Mul_3"])


def test_assert_accuracy_computes_kl_only_when_judged_or_written(tmp_path):
    """KL is a third of the compare's work: computed when a threshold judges by it or the CSV
    is written; a result without it refuses to be judged by it instead of skipping every row."""
    import math

    from pytest_ascend_accuracy.compare.thresholds import Threshold
    from pytest_ascend_accuracy.errors import ConfigError

    actual, golden = _dumps()
    plain = assert_accuracy(actual, golden, 0.4, ignore=["Mul*"])
    assert plain.meta["kl"] is False
    assert all(math.isnan(r.metrics.kl) for r in plain.rows if r.metrics is not None)
    with pytest.raises(ConfigError, match="KL divergence was not computed"):
        plain.judge(0.5, metric="kl")
    with pytest.raises(ConfigError, match="KL divergence was not computed"):
        plain.judge(0.4, per_op={"Add_2": Threshold(0.5, "kl")}, ignore=["Mul*"])
    by_kl = assert_accuracy(actual, golden, 10.0, metric="kl", ignore=["Mul*"])
    assert by_kl.meta["kl"] is True
    assert by_kl.judge(10.0, metric="kl", ignore=["Mul*"]).passed
    rows = [r for r in by_kl.rows if r.metrics is not None and not r.metrics.mismatch]
    assert rows and all(math.isfinite(r.metrics.kl) for r in rows)
    written = assert_accuracy(actual, golden, 0.4, ignore=["Mul*"], csv_path=tmp_path / "c.csv")
    assert written.meta["kl"] is True
    assert written.judge(10.0, metric="kl", ignore=["Mul*"]).passed


def test_assert_accuracy_hides_its_frame_from_pytest_tracebacks():
    actual, golden = _dumps()
    try:
        assert_accuracy(actual, golden, 0.999)
    except AccuracyFailure as exc:
        tb = exc.__traceback__
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    own = [f for f in frames if f.f_code.co_name == "assert_accuracy"]
    assert own and all(f.f_locals.get("__tracebackhide__") is True for f in own)


def test_assert_accuracy_loads_paths(tmp_path):
    from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter
    with NpyDumpWriter(tmp_path / "g") as w:
        w.write_op("a/b", [], [f32([1, 2, 3])])
    with NpyDumpWriter(tmp_path / "x") as w:
        w.write_op("a/b", [], [f32([1, 2, 3.5])])
    with pytest.raises(AccuracyFailure, match="first failure in graph order: a_b"):
        assert_accuracy(tmp_path / "x", str(tmp_path / "g"), 0.9999)
    with pytest.raises(TypeError, match="expected a DumpSet or a path to a dump, got int"):
        assert_accuracy(1, tmp_path / "g")


def test_fp16_overflow_hint_names_original_ops():
    actual = DumpSet.from_arrays({"fused": [f16([1, np.inf, 3])]},
                                 original_names={"fused": ["BatchNormalization_1", "Relu_2"]})
    golden = DumpSet.from_arrays({"Relu_2": [f32([1, 7e4, 3])]})
    r = compare_dumps(actual, golden)
    v = r.judge(0.95)
    # the Inf's position holds the golden's 7e4, which the metrics leave out: the golden tensor
    # itself tells the overflow (as the callers read it, failing_ops_past_fp16)
    from pytest_ascend_accuracy.compare.fp16_range import failing_ops_past_fp16

    assert default_hint(v, failing_ops_past_fp16(golden, v, r.rows)) == (
        "golden values leave the float16 range (Relu_2 output:0 reaches |7e+04|), and so do "
        "failing values (NaN/Inf in the actual output or |golden| > 65504): convert in "
        "mode HIGH_PRECISION, or keep these ops in float32 in mode "
        "keep_dtype(['BatchNormalization_1', 'Relu_2']) (from pytest_ascend_accuracy import "
        "HIGH_PRECISION, keep_dtype)")


def test_no_overflow_hint_suggests_fusion_and_buffer_modes():
    r = compare_dumps(DumpSet.from_arrays({"a": [f16([1, -1])]}),
                      DumpSet.from_arrays({"a": [f32([1, 1])]}))
    assert default_hint(r.judge(0.95)).startswith(
        "no float16 overflow seen: compare with mode=\"fusion_off\" and mode=\"buffer_off\"")


def test_table_is_capped_and_names_are_escaped():
    golden = {f"op{i}": [f32([1, 1, 1, 1])] for i in range(9)}
    actual = {f"op{i}": [f16([1, 1, 1, -1])] for i in range(9)}
    actual["bad\nname"] = actual.pop("op8")
    golden["bad\nname"] = golden.pop("op8")
    r = compare_dumps(DumpSet.from_arrays(actual), DumpSet.from_arrays(golden))
    text = failure_text(r, r.judge(0.9), worst=3)
    assert "next worst operators (3 of 8):" in text
    assert "  ... and 5 more (see the full report)" in text
    assert "\nname" not in text  # the newline inside the op name is escaped
    assert "full report: not written (pass csv_path=...)" in text


def test_summary_text_lists_the_tensors_closest_to_the_threshold():
    r = compare_dumps(*_dumps())
    v = r.judge(0.4, ignore=["Mul_3"])
    assert summary_text(r, v) == """\
accuracy PASSED: 3 tensors meet cosine >= 0.4 (1 ignored)

closest to the threshold (cosine):
  #  op          type      cosine    rel_l2   max_abs
  2  Add_2       Add     0.500000  1.000000  2.000000
  1  conv1_relu  Conv2D  0.993999  0.160128  1.000000
  0  Conv_0      Conv2D  1.000000  0.000000  0.000000

coverage: 6 golden ops: 4 compared, 1 inside fused ops, 1 unmatched (Shape_9); 0 actual ops unmatched"""


def test_printable_and_table_helpers():
    assert printable("a\tb\x00c") == "a\\tb\\x00c"
    assert printable("x" * 10, 6) == "xxx..."
    assert table([["1", "ab"], ["10", "c"]], ["#", "name"]) == [
        "   #  name", "   1  ab", "  10  c"]


def test_a_threshold_is_printed_as_given_however_many_nines():
    """0.99999999999 printed as 1 (':.10g'): 'fail cosine >= 1', '0.9999999 < 1' (review
    helper)."""
    from pytest_ascend_accuracy.compare.thresholds import Threshold, beside, threshold_text

    assert [threshold_text(v) for v in (0.95, 0.9999999, 0.99999999999, 1.0, 0.0)] == [
        "0.95", "0.9999999", "0.99999999999", "1", "0"]
    assert Threshold(0.99999999999, "cosine").describe() == "cosine >= 0.99999999999"
    assert f"{beside(0.9999999, 0.99999999999)} < {threshold_text(0.99999999999)}" == \
        "0.9999999 < 0.99999999999"


def test_the_hint_when_only_golden_tensors_are_missing_names_them_not_fusion():
    """A golden dump without one op's file: the check failed on "not compared" alone and the
    hint said "no float16 overflow ... compare with mode=fusion_off" (no value was read, and a
    CLI user has no modes) -- a user review with real om json files."""
    import numpy as np

    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.dump.model import DumpSet
    from pytest_ascend_accuracy.report.failure_text import default_hint

    y = np.ones(4, np.float32)
    actual = DumpSet.from_arrays({"conv_fused": [y.astype(np.float16)], "relu": [y.astype(np.float16)]},
                                 original_names={"conv_fused": ["conv"], "relu": ["relu"]})
    golden = DumpSet.from_arrays({"relu": [y]})  # conv's file is missing
    verdict = compare_dumps(actual, golden).judge(0.95)
    assert not verdict.passed
    hint = default_hint(verdict)
    assert hint.startswith("the golden holds no tensor for conv_fused: check that the golden "
                           "dump has their outputs"), hint
    # assert_accuracy has no om_json= (5c831fc): the load_dump call it takes
    assert 'load_dump(DIR, om_json="model.json")' in hint and "assert_accuracy" in hint
    assert "--ignore NAME" in hint and "fusion_off" not in hint


def test_assert_accuracy_checks_per_op_and_ignore_names_as_the_plugin_and_cli_do():
    """assert_accuracy(per_op={"conv_*": ...}) for ops named Conv_*: the stricter threshold
    was lost and the check passed (user review); the plugin and the CLI refused it."""
    import numpy as np
    import pytest

    from pytest_ascend_accuracy.dump.model import DumpSet
    from pytest_ascend_accuracy.errors import ConfigError
    from pytest_ascend_accuracy.report.assertion import assert_accuracy

    y = np.linspace(1, 2, 16, dtype=np.float32)
    actual = DumpSet.from_arrays({"Conv_5": [(y + 0.01).astype(np.float16)]})
    golden = DumpSet.from_arrays({"Conv_5": [y]})
    for kwargs, entry in (({"per_op": {"conv_*": 0.99999999}}, "per_op entry 'conv_*'"),
                          ({"ignore": ["Conv_17"]}, "ignore entry 'Conv_17'")):
        with pytest.raises(ConfigError) as err:
            assert_accuracy(actual, golden, 0.95, **kwargs)
        assert entry in str(err.value) and "Conv_5" in str(err.value), str(err.value)
    assert_accuracy(actual, golden, 0.95, per_op={"Conv_*": 0.99})  # a real glob: judged


def test_an_integer_rows_cosine_line_says_it_is_compared_exactly():
    """T2: a TopK's indices row read "cosine 0.831747 (threshold 0.99; no threshold passes it)",
    as if a cosine threshold were what it missed: integer values are compared exactly."""
    idx = np.arange(100, dtype=np.int64).reshape(1, 100)
    moved = idx[:, ::-1].copy()  # (cosine 0.5: below the threshold too)
    r = compare_dumps(DumpSet.from_arrays({"topk": [moved]}),
                      DumpSet.from_arrays({"topk": [idx]}))
    text = failure_text(r, r.judge(0.99))
    line = next(x for x in text.splitlines() if x.startswith("  cosine"))
    assert line.endswith("(threshold 0.99; integer values are compared exactly: any difference "
                         "fails them, below)"), line
    assert "no threshold passes it" not in text


def test_long_op_names_in_the_tables_keep_their_ends():
    """Audit 33 (Magika, a jax2tf export): every row of the next-worst table read
    ``jax2tf_get_logits_/pjit_get_logits_/MagikaV2/...``, the part that tells ops apart cut."""
    name = "jax2tf_get_logits_/pjit_get_logits_/MagikaV2/LayerNorm_1/truediv_1"
    assert printable(name, 48, tail=True) == "..." + name[-45:]
    assert printable(name, 48, tail=True).endswith("/LayerNorm_1/truediv_1")
    assert printable(name, 48) == name[:45] + "..."  # other fields keep their start
    head = "jax2tf_get_logits_/pjit_get_logits_/MagikaV2/LayerNorm_1/"
    ops = {head + tail: [f16([1, 1, 1, -1])] for tail in ("truediv_1", "Sub", "Maximum")}
    result = compare_dumps(DumpSet.from_arrays(ops), DumpSet.from_arrays(
        {name: [f32([1, 1, 1, 1])] for name in ops}), kl=False)
    text = failure_text(result, result.judge(0.99))
    for tail in ("/LayerNorm_1/Sub ", "/LayerNorm_1/Maximum "):
        assert any(line.lstrip().split("  ")[0] and tail in line and "..." in line
                   for line in text.splitlines()), text
