"""A hint that, pasted, printed itself again: a BatchNorm with a 1e9 variance, a 1x1 Conv with a
bias of -19 and a Sigmoid ``prob`` (golden below 6e-08), converted ``HIGH_PRECISION |
FUSION_OFF``, failed at prob (cosine 0.612952 < 0.95, float32) and printed ``keep prob in float32:
modes=[HIGH_PRECISION | FUSION_OFF | keep_dtype(['prob'])]`` ("prob output:0 underflows to 0").
High precision outputs prob in float32 already, so that mode converts it as the failing run did:
pasted, it failed the same (cosine 0.612952) and printed the same hint. The compare's allowance
for values below float16's smallest normal is for a float16 actual (``compare/tiny_values.py``);
in float32 the cosine of values that small measures the float32 rounding on either side
(onnxruntime's Sigmoid there: multiples of 2**-25). The hint now names no op the run outputs in
float32 already (``report.fp16_fix_ops.float32_already``) and judges prob by its size, a per_op
``max_abs`` of float16's smallest normal (``report.tiny_float32``), which passes pasted in Python,
YAML, ``assert_accuracy`` and the ``ascend-accuracy`` command. The sibling runs without high
precision: tests/plugin/test_hint_underflow_tiny_sigmoid_pasted.py, test_hint_cube_tiny_sigmoid.py.
"""
import re

import pytest

from pytest_ascend_accuracy.errors import ConfigError
from test_hint_cube_tiny_sigmoid import TEST, tiny_map

HP = "HIGH_PRECISION | FUSION_OFF"

MARKED = '''
from pytest_ascend_accuracy import accuracy, HIGH_PRECISION, FUSION_OFF, keep_dtype
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95, modes=[HIGH_PRECISION | FUSION_OFF], per_op={per_op})
def test_map(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/tiny_map.onnx")
    actual = ascend_model("models/tiny_map.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/tiny_map.onnx", inputs))
'''

SUITE = '''
models:
  - name: tiny_map
    model: models/tiny_map.onnx
    threshold: 0.95
    modes: [high_precision+fusion_off]
    per_op: {per_op}
'''

REASON = ("next step: prob's golden values all lie below float16's smallest normal (|5.96e-08|) "
          "and this run outputs it in float32 already, so the cosine measures the float32 "
          "rounding of values that small on either side")


def _hint(text: str) -> str:
    return text[text.index("next step:"):].split("\n", 1)[0]


def test_a_float32_sigmoid_below_float16s_normal_range_gets_a_per_op_hint_that_passes_pasted(
        pytester):
    tiny_map(pytester.mkdir("models"), bias=-19.0)
    pytester.makepyfile(test_map=TEST.format(imports="HIGH_PRECISION, FUSION_OFF", modes=HP))
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["FAILED *: first failing op prob (cosine 0.612952 < 0.95)"])
    hint = _hint(failed.stdout.str())
    assert hint.startswith(REASON), hint
    assert "which no precision mode or keep_dtype changes" in hint, hint
    # the old loop: no mode, no keep_dtype naming the op the run outputs in float32 already
    assert "keep_dtype" not in hint.split("changes:", 1)[1] and "modes=[" not in hint, hint
    assert "keep these ops in float32" not in failed.stdout.str()
    python = re.search(r"@accuracy\(per_op=(\{.*?\}\})\)", hint).group(1)
    yaml = re.search(r"\(YAML: per_op: (\{.*?\}\});", hint).group(1)
    assert python == "{'prob': {'max_abs': 6.1e-05}}" and yaml == "{prob: {max_abs: 6.1e-05}}"
    # pasted: the marker's per_op and the YAML entry pass; the keep_dtype mode printed before
    # fails as the run did, and now gets this hint instead of itself
    pytester.makepyfile(test_map=MARKED.format(per_op=python),
                        test_old=TEST.format(imports="HIGH_PRECISION, FUSION_OFF, keep_dtype",
                                             modes=f"{HP} | keep_dtype(['prob'])"))
    (pytester.path / "accuracy_pasted.yaml").write_text(SUITE.format(per_op=yaml))
    pasted = pytester.runpytest("-p", "no:cacheprovider")
    pasted.assert_outcomes(passed=2, failed=1)
    pasted.stdout.fnmatch_lines(["FAILED test_old.py::*: first failing op prob (cosine 0.612952 "
                                 "< 0.95)"])
    again = _hint(pasted.stdout.str())
    assert again.startswith(REASON) and "modes=[" not in again, again


def test_the_library_and_the_command_say_the_same_and_pass_pasted(tmp_path, capsys):
    """``assert_accuracy`` and ``ascend-accuracy compare`` printed the keep_dtype too (the
    CLI's with a ``diagnose --mode`` line keeping prob, which converts as the dump did)."""
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.cli import app as cli
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.core.modes import FUSION_OFF, HIGH_PRECISION
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
    from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy

    tiny_map(tmp_path, bias=-19.0)
    model = str(tmp_path / "tiny_map.onnx")
    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache)
    inputs = make_inputs(model)
    actual = backend.run(backend.convert(model, HIGH_PRECISION | FUSION_OFF), inputs,
                         dump_dir=tmp_path / "dump")
    golden = golden_dump(model, inputs, cache=cache)
    with pytest.raises(AccuracyFailure) as exc:
        assert_accuracy(actual, golden, 0.95)
    hint = _hint(str(exc.value))
    assert hint.startswith(REASON) and "keep_dtype" not in hint.split("changes:", 1)[1], hint
    per_op = re.search(r"assert_accuracy\(\.\.\., per_op=(\{.*\})\)$", hint).group(1)
    assert_accuracy(actual, golden, 0.95, per_op=eval(per_op))  # noqa: S307  (pasted)

    dumps = [str(actual.root), str(golden.root)]
    assert cli.main(["compare", *dumps]) == 1
    hint = _hint(capsys.readouterr().out)
    assert hint.startswith(REASON) and "keep_dtype" not in hint.split("changes:", 1)[1], hint
    options = hint.split("from the golden: ", 1)[1].split()
    assert options == ["--per-op", "prob=max_abs:6.1e-05"], hint
    assert cli.main(["compare", *dumps, *options]) == 0


def test_per_op_names_its_own_metric_in_the_marker_and_is_validated_as_one():
    from pytest_ascend_accuracy.compare.thresholds import Threshold
    from pytest_ascend_accuracy.plugin.marker_spec import validate_per_op

    assert validate_per_op({"prob": {"max_abs": 6.1e-05}, "head": 0.9}, "t") == (
        ("prob", Threshold(6.1e-05, "max_abs")), ("head", 0.9))
    assert validate_per_op({"prob": Threshold(0.5, "rel_l2")}, "t") == (
        ("prob", Threshold(0.5, "rel_l2")),)
    for bad, says in (({"max_ab": 1e-4}, "unknown metric 'max_ab'"),
                      ({"max_abs": -1.0}, "per_op['prob']['max_abs'] for max_abs must be a "
                                          "finite number >= 0"),
                      ({"cosine": 2.0}, "per_op['prob']['cosine'] must be within [0, 1]"),
                      ({"max_abs": 1e-4, "cosine": 0.9}, "one {metric: number} entry"),
                      ({"max_abs": "small"}, "must be a number")):
        with pytest.raises(ConfigError, match=re.escape(says)):
            validate_per_op({"prob": bad}, "t")


def test_a_per_op_entry_of_its_own_metric_is_spelled_so_in_printed_commands():
    """The diagnose and judge commands the CLI prints carry the compare's per_op entries: one of
    another metric as ``NAME=METRIC:T``, which ``--per-op`` reads back the same (printed as
    ``prob=6.1e-05``, it would have judged prob by a cosine of 6.1e-05)."""
    import numpy as np

    from pytest_ascend_accuracy.cli.app import per_op_arg
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.compare.thresholds import Policy
    from pytest_ascend_accuracy.dump.model import DumpSet
    from pytest_ascend_accuracy.report.cli_commands import cli_judge_options

    dump = DumpSet.from_arrays({"prob": [np.ones(4, np.float32)], "x": [np.ones(4, np.float32)]})
    per_op = {"prob": {"max_abs": 6.1e-05}, "x": 0.9}
    verdict = compare_dumps(dump, dump).judge(Policy.build(0.95, per_op, scale_tolerance=2.0))
    options = cli_judge_options(verdict)
    assert options == " --per-op prob=max_abs:6.1e-05 --per-op x=0.9", options
    assert per_op_arg(options.split()[1::2]) == per_op


def test_a_check_failing_a_per_op_entry_of_its_own_metric_says_that_metric(pytester):
    """The summary line and the JUnit property name the failing entry's metric: they said
    ``prob (cosine 0.0000001 < 1e-12)`` and ``accuracy_first_failing_cosine``, the marker's
    metric beside the max_abs figure."""
    tiny_map(pytester.mkdir("models"), bias=-19.0)
    pytester.makepyfile(test_map=MARKED.format(per_op="{'prob': {'max_abs': 1e-12}}"))
    run = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=junit.xml",
                             "-o", "junit_family=xunit1")
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines(["FAILED *: first failing op prob (max_abs 0.0000001 > 1e-12)"])
    junit = (pytester.path / "junit.xml").read_text()
    assert 'name="accuracy_first_failing_max_abs"' in junit
    assert "accuracy_first_failing_cosine" not in junit
