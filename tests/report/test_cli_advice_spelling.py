"""The ``ascend-accuracy`` command's advice is spelled for the command and works pasted into it.

``compare``/``judge`` printed Python-API advice (``mode="fusion_off"``, ``keep_dtype=[...]``,
``name them in ignore=``) no command takes; a shape mismatch nobody read got "no float16
overflow"; ``judge --metric max_rel`` listed the closest tensors without a max_rel column;
``diagnose`` out of budget must name ``--budget N`` and continue when it is pasted. The advice
is built as the command builds it (``failure_text``/``default_hint`` with ``cli=True``) and
each command it gives runs through ``cli.main``.
"""
import re
import shlex

import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.fp16_range import golden_inputs_past_fp16
from pytest_ascend_accuracy.compare.thresholds import Policy
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.report.failure_text import CLI_MODEL, default_hint, failure_text
from pytest_ascend_accuracy.report.hints import next_step

pytest.importorskip("onnxruntime")


def _emulated(tmp_path, name):
    """(model path, device dump, stored golden with op inputs) of a tiny model, default mode."""
    from pytest_ascend_accuracy.testing import models
    from pytest_ascend_accuracy.testing.emulated_pair import emulated_pair

    pair = emulated_pair(tmp_path, getattr(models, name)(), name=name, store_inputs=True)
    return pair.model, pair.dump, pair.golden


def _cli_hint(actual, golden, threshold=0.95):
    """The ``next step:`` text ``ascend-accuracy compare`` prints for these dumps."""
    g = load_dump(golden)
    result = compare_dumps(load_dump(actual), g, kl=False)
    verdict = result.judge(Policy.build(threshold, None, (), "cosine", 2.0))  # as the command
    ranges = golden_inputs_past_fp16(g, (f.row.golden_name for f in verdict.failures
                                         if f.row.golden_name))
    return default_hint(verdict, ranges, result, cli=True), verdict


def _commands(hint):
    """Every ``ascend-accuracy diagnose ...`` command in the hint, as argv for ``cli.main``."""
    found = re.findall(r"(ascend-accuracy diagnose .+?) (?:\(or (--mode \S+)\)|passes|walks)", hint)
    return [(shlex.split(cmd)[1:], alt) for cmd, alt in found]


def _run(argv, model, tmp_path, capsys):
    argv = [str(model) if a == CLI_MODEL else a for a in argv]
    code = cli.main(argv + ["--cache-dir", str(tmp_path / "cache")])
    return code, capsys.readouterr().out


def test_keep_dtype_advice_is_a_diagnose_command_that_passes(tmp_path, capsys):
    model, actual, golden = _emulated(tmp_path, "two_overflows")
    hint, _ = _cli_hint(actual, golden)
    assert "keep_dtype=[" not in hint and 'mode="' not in hint
    (argv, alt), = _commands(hint)
    assert argv == ["diagnose", CLI_MODEL, "--mode", '{keep_dtype: ["norm_a", "norm_b"]}']
    code, out = _run(argv, model, tmp_path, capsys)
    assert code == 0 and "PASSES" in out.splitlines()[0]
    assert alt == "--mode high_precision"
    code, out = _run(argv[:2] + alt.split(), model, tmp_path, capsys)
    assert code == 0 and "PASSES" in out.splitlines()[0]


def test_no_overflow_advice_is_a_diagnose_command_that_names_the_fix(tmp_path, capsys):
    model, actual, golden = _emulated(tmp_path, "passing_mlp")
    hint, _ = _cli_hint(actual, golden, threshold=0.9999999)
    assert 'mode="' not in hint
    (argv, _), = _commands(hint)
    assert argv == ["diagnose", CLI_MODEL, "--threshold", "0.9999999"]
    code, out = _run(argv, model, tmp_path, capsys)
    assert code == 0 and out.splitlines()[0].endswith("RESTORED"), out


def test_not_compared_advice_names_the_commands_ignore_and_passes_pasted(dumps, capsys):
    from pytest_ascend_accuracy.dump.layout import AscendDumpWriter
    import shutil

    actual, golden = dumps
    shutil.rmtree(actual)
    y = np.linspace(-1, 1, 48, dtype=np.float32).reshape(1, 3, 4, 4)
    with AscendDumpWriter(actual) as w:  # the golden's Conv_0, and an op it has no tensor of
        w.write_op("Conv2D", "Conv_0", [], [y.astype(np.float16)])
        w.write_op("Mul", "extra/mul", [], [y.astype(np.float16)])
    result = compare_dumps(load_dump(str(actual)), load_dump(str(golden)), kl=False)
    verdict = result.judge(0.95)
    text = failure_text(result, verdict, cli=True)
    assert "ignore=" not in text
    assert text.splitlines()[0].endswith("name each in --ignore NAME to accept that)")
    hint = text.splitlines()[-1]
    assert hint.endswith("or accept them unchecked with --ignore extra/mul")
    pasted = shlex.split(hint.rpartition(" with ")[2])
    assert cli.main(["compare", str(actual), str(golden), *pasted]) == 0
    # the Python spelling stays where it is the caller's (assert_accuracy, the plugin)
    assert "name them in ignore= to accept that" in failure_text(result, verdict)


def test_unread_tensors_get_no_overflow_talk(dumps):
    from pytest_ascend_accuracy.dump.layout import AscendDumpWriter
    import shutil

    actual, golden = dumps
    shutil.rmtree(actual)
    y = np.linspace(-1, 1, 48, dtype=np.float32).reshape(1, 3, 4, 4)
    with AscendDumpWriter(actual) as w:
        w.write_op("Conv2D", "Conv_0", [], [y.astype(np.float16)])
        w.write_op("Add", "Add/1", [], [np.ones((1, 3, 3, 4), np.float16)])  # 36 vs 48 values
    result = compare_dumps(load_dump(str(actual)), load_dump(str(golden)), kl=False)
    verdict = result.judge(0.95)
    for hint in (default_hint(verdict, (), result, cli=True), default_hint(verdict, (), result),
                 next_step(verdict).text()):
        assert "overflow" not in hint and "float16" not in hint, hint
        assert "the failing tensors were not read (Add/1: shape (1, 3, 3, 4) vs golden" in hint


def test_judge_by_max_rel_shows_the_max_rel_column(dumps, tmp_path, capsys):
    actual, golden = dumps
    saved = tmp_path / "r.json"
    cli.main(["compare", str(actual), str(golden), "--json", str(saved)])
    capsys.readouterr()
    assert cli.main(["judge", str(saved), "--metric", "max_rel", "--threshold", "1e9"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[lines.index("closest to the threshold (max_rel):") + 1]
    assert header.split() == ["#", "op", "type", "cosine", "rel_l2", "max_abs", "max_rel"]


def test_diagnose_out_of_budget_names_budget_and_pasting_it_continues(tmp_path, capsys):
    from pytest_ascend_accuracy.testing import models

    model = tmp_path / "two_overflows.onnx"
    onnx.save(models.two_overflows(), str(model))
    extra = ["--budget", "1"]
    for _ in range(5):
        code, out = _run(["diagnose", str(model), *extra], model, tmp_path, capsys)
        rerun = re.search(r"rerun with (--budget \d+) to continue from the cache", out)
        if rerun is None:
            break
        assert "--accuracy-diagnose-budget" not in out
        extra = rerun.group(1).split()  # pasted as printed
    assert code == 0 and "RESTORED" in out.splitlines()[0]


def test_diagnose_out_of_budget_goes_on_when_the_same_command_is_run_again(tmp_path, capsys):
    """The budget counts new conversions only, as the budget line says (audit 32 read "rerun
    with --budget 64" as the only way on): the same command, run again, gets further."""
    from pytest_ascend_accuracy.testing import models

    model = tmp_path / "two_overflows.onnx"
    onnx.save(models.two_overflows(), str(model))
    for _ in range(8):
        code, out = _run(["diagnose", str(model), "--budget", "1"], model, tmp_path, capsys)
        if "the budget ran out" not in out:
            break
        assert ("(the budget counts new conversions only: the same command goes on as well, "
                "1 more at a time)") in out
    assert code == 0 and "RESTORED" in out.splitlines()[0]


@pytest.mark.parametrize("options", [
    ["--metric", "kl", "--threshold", "0.01"],  # diagnose judged KL it had not computed: exit 2
    ["--ignore", "norm_b", "--per-op", "to_flat=0.0"],  # dropped: it failed first on norm_b
])
def test_the_compares_own_judging_options_reach_the_pasted_diagnose(tmp_path, capsys, options):
    """The advice repeats the compare's --metric/--threshold/--per-op/--ignore, and the pasted
    command judges by them (code review: --metric kl exited 2, --ignore was dropped)."""
    model, actual, golden = _emulated(tmp_path, "two_overflows")
    assert cli.main(["compare", actual, golden, *options]) == 1
    hint = next(line for line in capsys.readouterr().out.splitlines()
                if line.startswith("next step:"))
    (argv, _), = _commands(hint)
    for option in options[::2]:
        assert option in argv, hint
    code, out = _run(argv, model, tmp_path, capsys)
    assert code == 0, out  # what the advice promises: "passes with exit status 0"
