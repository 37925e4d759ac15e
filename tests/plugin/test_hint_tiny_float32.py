"""A hint that, pasted, printed itself again, and its successor's claims: a BatchNorm with a 1e9
variance, a 1x1 Conv ``head`` with a bias of -19 and a Sigmoid ``prob`` (golden below 6e-08),
converted ``HIGH_PRECISION | FUSION_OFF``, fails at prob (cosine 0.612952 < 0.95, float32). It
printed ``keep_dtype(['prob'])``, which converts prob as the run did (high precision outputs it in
float32 already: ``report.fp16_fix_ops.float32_already``), then "no precision mode or keep_dtype
changes it: judge it by its size", while ``--accuracy-diagnose`` found
``keep_dtype(['head'])`` restoring cosine 1.000000: head runs on the Cube unit, which high
precision still runs in float16. The hint now keeps such float16 producers in float32
(``report.tiny_float32.float16_upstream``); only a float32 output computed from float32 values
alone, within float32's epsilon at 1.0 (2**-23) of the golden, is judged by its size: a per_op
``max_abs`` of 1.2e-07, merged into the check's own per_op entries, which passes pasted in
Python, ``assert_accuracy`` and the ``ascend-accuracy`` command (a bound of 6.1e-05 passed a
layout bug whose error was 95% of the golden's peak; a printed ``per_op={'prob': ...}`` dropped
the check's own entry for another op, which failed pasted). The emulator computes a float32
Sigmoid as onnxruntime does, so the float32-alone case is built from arrays.
"""
import re

import numpy as np
import pytest

from pytest_ascend_accuracy.errors import ConfigError
from test_hint_cube_tiny_sigmoid import TEST, tiny_map

HP = "HIGH_PRECISION | FUSION_OFF"

#: the Conv feeding prob kept in float32: the fix the hint offers (diagnose finds the same)
KEPT_HEAD = "HIGH_PRECISION | FUSION_OFF | keep_dtype(['head'])"

#: a check of from-array dumps: ``logit`` (float32, its own per_op entry, which it needs: rel_l2
#: 5e-4) feeding ``prob`` (float32, golden below float16's smallest normal, 2**-25 x 1..64, as
#: onnxruntime's float32 Sigmoid near 0 gives: float16 holds none of the odd ones, so they are
#: float32's own values, not float16's passed on, which are judged as float16's:
#: tests/compare/test_tiny_values_held_in_float32.py; none flushes to 0, off by 2**-24)
ARRAYS = '''
import numpy as np
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.dump.model import DumpSet

GOLDEN = (np.arange(1, 65, dtype=np.float32) * 2.0 ** -25)
TYPES = {{"logit": "Add", "prob": "Sigmoid"}}


@accuracy(metric="rel_l2", threshold=1e-4, per_op={per_op})
def test_arrays(check_accuracy):
    logit = np.linspace(-20, -18, 64).astype(np.float32)
    golden = DumpSet.from_arrays({{"logit": [logit], "prob": [GOLDEN]}}, op_types=TYPES)
    prob = GOLDEN.copy()
    prob[::2] += np.float32(2.0 ** -24)
    actual = DumpSet.from_arrays({{"logit": [(logit * np.float32(1 + 5e-4)).astype({dtype})],
                                  "prob": [prob]}}, op_types=TYPES)
    check_accuracy(actual, golden)
'''

MARKED = '''
from pytest_ascend_accuracy import accuracy, HIGH_PRECISION, FUSION_OFF, keep_dtype
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95, modes=[HIGH_PRECISION | FUSION_OFF], per_op={per_op})
def test_map(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/tiny_map.onnx")
    actual = ascend_model("models/tiny_map.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/tiny_map.onnx", inputs))
'''

REASON = ("next step: prob's golden values all lie below float16's smallest normal (|5.96e-08|) "
          "and this run outputs it in float32, but head upstream of it outputs float16 (a Cube "
          "op stays float16 in high precision)")


def _hint(text: str) -> str:
    return text[text.index("next step:"):].split("\n", 1)[0]


def test_a_float32_sigmoid_fed_by_a_float16_conv_gets_the_conv_kept_which_passes_pasted(
        pytester):
    tiny_map(pytester.mkdir("models"), bias=-19.0)
    pytester.makepyfile(test_map=TEST.format(imports="HIGH_PRECISION, FUSION_OFF", modes=HP))
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["FAILED *: first failing op prob (cosine 0.612952 < 0.95)"])
    text = failed.stdout.str()
    assert _hint(text).startswith(REASON), _hint(text)
    assert "judge it by its size" not in text and "no precision mode" not in text, text
    block = text[text.index("next step:"):]
    assert f"  modes=[{KEPT_HEAD}]" in block.splitlines(), block
    # pasted: the kept Conv passes; the keep_dtype(['prob']) printed before fails as the run did
    # and gets the same advice, not itself
    pytester.makepyfile(test_map=TEST.format(imports="HIGH_PRECISION, FUSION_OFF, keep_dtype",
                                             modes=KEPT_HEAD),
                        test_old=TEST.format(imports="HIGH_PRECISION, FUSION_OFF, keep_dtype",
                                             modes=f"{HP} | keep_dtype(['prob'])"))
    pasted = pytester.runpytest("-p", "no:cacheprovider")
    pasted.assert_outcomes(passed=1, failed=1)
    pasted.stdout.fnmatch_lines(["FAILED test_old.py::*: first failing op prob (cosine 0.612952 "
                                 "< 0.95)"])
    again = pasted.stdout.str()
    assert _hint(again).startswith(REASON), again
    assert f"  modes=[{HP} | keep_dtype(['prob', 'head'])]" in again.splitlines(), again


def test_the_library_and_the_command_keep_the_conv_too_and_pass_pasted(tmp_path, capsys):
    """``assert_accuracy`` and ``ascend-accuracy compare`` of the same dumps (the emulator's,
    its om json naming the mode) say the same: head kept in float32, which passes."""
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.cli import app as cli
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.core.modes import FUSION_OFF, HIGH_PRECISION, keep_dtype
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
    from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy

    tiny_map(tmp_path, bias=-19.0)
    model = str(tmp_path / "tiny_map.onnx")
    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache)
    inputs = make_inputs(model)
    mode = HIGH_PRECISION | FUSION_OFF
    actual = backend.run(backend.convert(model, mode), inputs, dump_dir=tmp_path / "dump")
    golden = golden_dump(model, inputs, cache=cache)
    with pytest.raises(AccuracyFailure) as exc:
        assert_accuracy(actual, golden, 0.95)
    hint = _hint(str(exc.value))
    assert hint.startswith(REASON) and "judge it by its size" not in hint, hint
    assert hint.endswith(f"converting in mode {KEPT_HEAD} (from pytest_ascend_accuracy import "
                         "HIGH_PRECISION, FUSION_OFF, keep_dtype)"), hint
    fixed = backend.run(backend.convert(model, mode | keep_dtype(["head"])), inputs,
                        dump_dir=tmp_path / "fixed")
    assert_accuracy(fixed, golden, 0.95)  # pasted

    # the om json names the mode (without it the mode is not known, and the hint is as before)
    dumps = [str(actual.root), str(golden.root), "--om-json", str(actual.meta["om_json"])]
    assert cli.main(["compare", *dumps]) == 1
    hint = _hint(capsys.readouterr().out)
    assert hint.startswith(REASON) and "judge it by its size" not in hint, hint
    command = re.search(r"(ascend-accuracy diagnose MODEL\.onnx .*?) passes", hint).group(1)
    assert " --mode " in command and "head" in command, command
    args = __import__("shlex").split(command)[1:]
    args[1] = model
    assert cli.main(args) == 0  # pasted (MODEL.onnx: the model the dump ran)


def test_a_float32_output_of_float32_values_alone_is_judged_by_its_size_keeping_per_op(pytester):
    """Nothing upstream outputs float16 and prob is off by 2**-24: the hint judges it by its
    size, the check's own ``per_op`` entry for logit kept (dropped, logit failed pasted)."""
    pytester.makepyfile(test_arrays=ARRAYS.format(per_op="{'logit': 1e-3}", dtype="np.float32"))
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["FAILED *: first failing op prob (rel_l2 *"])
    hint = _hint(failed.stdout.str())
    assert hint.startswith(
        "next step: prob's golden values all lie below float16's smallest normal (|1.91e-06|), "
        "this run outputs it in float32 and nothing upstream outputs float16, so the rel_l2 "
        "measures the float32 rounding of values that small on either side (max abs error "
        "5.96e-08, within float32's epsilon at 1.0, 2**-23), which no precision mode or "
        "keep_dtype changes: judge it by its size instead, at most float32's epsilon at 1.0 "
        "(2**-23, rounded up) from the golden"), hint
    python = re.search(r"@accuracy\(per_op=(\{.*?\}\})\)", hint).group(1)
    yaml = re.search(r"\(YAML: per_op: (\{.*?\}\});", hint).group(1)
    assert python == "{'logit': 0.001, 'prob': {'max_abs': 1.2e-07}}", hint
    assert yaml == "{logit: 0.001, prob: {max_abs: 1.2e-07}}", hint
    pytester.makepyfile(test_arrays=ARRAYS.format(per_op=python, dtype="np.float32"))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    # logit output in float16: its rounding, not float32's, may be prob's error
    pytester.makepyfile(test_arrays=ARRAYS.format(per_op="{'logit': 1e-3}", dtype="np.float16"))
    fed = pytester.runpytest("-p", "no:cacheprovider")
    fed.assert_outcomes(failed=1)
    text = fed.stdout.str()
    assert "but logit upstream of it outputs float16" in _hint(text), _hint(text)
    assert "judge it by its size" not in text and "  modes=[keep_dtype(['logit'])]" in text


def _arrays(prob_actual, logit_dtype=np.float32, unit=2.0 ** -25):
    """From-array dumps as ``ARRAYS`` builds them, prob's golden ``unit`` x 1..64 and its
    actual ``prob_actual(golden)``."""
    from pytest_ascend_accuracy.dump.model import DumpSet

    golden_prob = np.arange(1, 65, dtype=np.float32) * np.float32(unit)
    logit = np.linspace(-20, -18, 64).astype(np.float32)
    types = {"logit": "Add", "prob": "Sigmoid"}
    golden = DumpSet.from_arrays({"logit": [logit], "prob": [golden_prob]}, op_types=types)
    actual = DumpSet.from_arrays({"logit": [(logit * np.float32(1 + 5e-4)).astype(logit_dtype)],
                                  "prob": [prob_actual(golden_prob).astype(np.float32)]},
                                 op_types=types)
    return actual, golden


def test_assert_accuracy_and_the_command_judge_by_size_only_within_float32_eps(tmp_path, capsys):
    """Within 2**-23: judged by its size, which passes pasted (assert_accuracy with the check's
    own per_op, the command adding ``--per-op``). Past it (noise of 1e-6, a transposed H/W
    layout of the tiny map: most of its peak), no such hint."""
    from pytest_ascend_accuracy.cli import app as cli
    from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy

    def off(g):
        out = g.copy()
        out[::2] += np.float32(2.0 ** -24)
        return out

    actual, golden = _arrays(off)
    with pytest.raises(AccuracyFailure) as exc:
        assert_accuracy(actual, golden, 1e-4, per_op={"logit": 1e-3}, metric="rel_l2")
    hint = _hint(str(exc.value))
    per_op = re.search(r"assert_accuracy\(\.\.\., per_op=(\{.*\})\)$", hint).group(1)
    assert per_op == "{'logit': 0.001, 'prob': {'max_abs': 1.2e-07}}", hint
    assert_accuracy(actual, golden, 1e-4, per_op=eval(per_op), metric="rel_l2")  # noqa: S307

    a, g = tmp_path / "a", tmp_path / "g"
    for root, dump in ((a, actual), (g, golden)):
        root.mkdir()
        for op in dump.ops:
            np.save(root / f"{op.name}.0.1.npy", op.outputs[0].load())
    judged = [str(a), str(g), "--metric", "rel_l2", "--threshold", "1e-4", "--per-op",
              "logit=1e-3"]
    assert cli.main(["compare", *judged]) == 1
    hint = _hint(capsys.readouterr().out)
    options = hint.split("(2**-23, rounded up) from the golden: ", 1)[1].split()
    assert options == ["--per-op", "prob=max_abs:1.2e-07"], hint
    assert cli.main(["compare", *judged, *options]) == 0

    # golden up to 64 x 2**-24 (3.8e-06, below float16's smallest normal), errors past 2**-23
    rng = np.random.default_rng(0)
    for name, wrong in (("noise", lambda g: rng.random(64).astype(np.float32) * 1e-6),
                        ("layout", lambda g: g.reshape(8, 8).T.reshape(64))):
        actual, golden = _arrays(wrong, unit=2.0 ** -24)
        with pytest.raises(AccuracyFailure) as exc:
            assert_accuracy(actual, golden, 0.95)
        assert "judge it by its size" not in str(exc.value), (name, _hint(str(exc.value)))


def test_per_op_metric_errors_name_the_entry_and_the_option(tmp_path, capsys):
    """They said ``threshold: unknown metric 'max_ab'``, which reads as the default's."""
    from pytest_ascend_accuracy.cli import app as cli
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.report.assertion import assert_accuracy

    actual, golden = _arrays(lambda g: g)
    for call in (lambda: assert_accuracy(actual, golden, 0.95, per_op={"prob": {"max_ab": 1e-4}}),
                 lambda: compare_dumps(actual, golden).judge(0.95,
                                                             per_op={"prob": {"max_ab": 1e-4}})):
        with pytest.raises(ConfigError, match=re.escape(
                "per_op['prob']: unknown metric 'max_ab'; closest: 'max_abs'")):
            call()
    for root, dump in ((tmp_path / "a", actual), (tmp_path / "g", golden)):
        root.mkdir()
        for op in dump.ops:
            np.save(root / f"{op.name}.0.1.npy", op.outputs[0].load())
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "g"),
                     "--per-op", "prob=max_ab:1e-4"]) != 0
    err = capsys.readouterr().err
    assert "--per-op prob=max_ab:1e-4: unknown metric 'max_ab'; closest: 'max_abs'" in err, err


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
    per_op = {"prob": {"max_abs": 1.2e-07}, "x": 0.9}
    verdict = compare_dumps(dump, dump).judge(Policy.build(0.95, per_op, scale_tolerance=2.0))
    options = cli_judge_options(verdict)
    assert options == " --per-op prob=max_abs:1.2e-07 --per-op x=0.9", options
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
