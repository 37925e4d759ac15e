"""The CLI's scale guard (review): `ascend-accuracy compare` passed dumps the plugin failed by its
scale guard (scale_tolerance=2 by default), `judge` ignored the policy the plugin recorded in its
compare.json, and the failure text named an option the CLI did not have; the block's metric
line said "no threshold passes it" of a cosine that met its threshold."""
import json

import pytest

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.report.json_report import write_json


@pytest.fixture
def dumps(dump_pair):
    """Conv_0 exact; Add/1 at 0.4x the golden (cosine 1, L2 norm 0.4x: outside 0.5-2x)."""
    return dump_pair(0.4)


def _saved(dumps, path, **policy):
    """A compare.json as the plugin writes it: the result and the verdict of its policy."""
    result = compare_dumps(load_dump(str(dumps[0])), load_dump(str(dumps[1])))
    write_json(result, path, result.judge(0.95, **policy) if policy else None)
    return str(path)


def test_the_default_scale_tolerance_is_the_plugins():
    from pytest_ascend_accuracy.plugin.marker_spec import DEFAULT_SCALE_TOLERANCE  # as the marker

    assert cli.DEFAULT_SCALE_TOLERANCE == DEFAULT_SCALE_TOLERANCE == 2.0


def test_compare_fails_a_tensor_out_of_scale_as_the_plugin_does(dumps, capsys):
    actual, golden = map(str, dumps)
    assert cli.main(["compare", actual, golden, "--threshold", "0.05"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0] == (
        "accuracy FAILED: 1 of 2 tensors fail cosine >= 0.05 or the scale guard (L2 norm within "
        "0.5-2x the golden's); first failure in graph order: Add/1 (#1)")
    assert "scale_tolerance= tunes this, --scale-tolerance on the command line)" in out
    assert cli.main(["compare", actual, golden, "--scale-tolerance", "3"]) == 0  # 0.4 in 1/3-3
    assert cli.main(["compare", actual, golden, "--scale-tolerance", "none"]) == 0
    assert capsys.readouterr().out.startswith("accuracy PASSED: 2 tensors meet cosine >= 0.95")


@pytest.mark.parametrize("value", ["0", "1", "0.5", "-2", "nan", "inf", "off", "two"])
def test_scale_tolerance_at_most_1_or_not_a_number_is_refused(dumps, capsys, value):
    actual, golden = map(str, dumps)
    for argv in (["compare", actual, golden], ["judge", golden + "/missing.json"]):
        assert cli.main([*argv, "--scale-tolerance", value]) == 2
        err = capsys.readouterr().err
        assert err == (f"ascend-accuracy: error: --scale-tolerance: expected a factor > 1 (e.g. "
                       f"2: the L2 norm within 0.5-2x the golden's) or none to turn the guard "
                       f"off, got {value!r}\n")


def test_the_block_says_a_scale_failure_meets_its_threshold(dumps, capsys):
    actual, golden = map(str, dumps)
    assert cli.main(["compare", actual, golden]) == 1
    out = capsys.readouterr().out
    assert "  cosine         1.000000 (meets 0.95; fails the scale guard)" in out.splitlines()
    assert "no threshold passes it" not in out


def test_judge_applies_the_scale_guard_recorded_or_given(dumps, tmp_path, capsys):
    plugin_json = _saved(dumps, tmp_path / "compare.json", scale_tolerance=2.0)  # the plugin's
    assert cli.main(["judge", plugin_json]) == 1  # the plugin's verdict, with no note
    out = capsys.readouterr().out
    assert "or the scale guard" in out.splitlines()[0] and "judged with the policy" not in out
    assert cli.main(["judge", plugin_json, "--scale-tolerance", "none"]) == 0

    off = _saved(dumps, tmp_path / "off.json", scale_tolerance=None)  # scale_tolerance=None
    capsys.readouterr()
    assert cli.main(["judge", off]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"judged with the policy recorded in {off}: scale guard off (--scale-tolerance); pass "
        "the option, or --no-recorded-policy, to judge otherwise")
    assert cli.main(["judge", off, "--scale-tolerance", "2"]) == 1
    assert "judged with the policy" not in capsys.readouterr().out

    bare = _saved(dumps, tmp_path / "bare.json")  # no verdict recorded: the default guard
    assert cli.main(["judge", bare]) == 1


def test_judge_applies_the_recorded_ignore_list_unless_given(dumps, tmp_path, capsys):
    saved = _saved(dumps, tmp_path / "compare.json", ignore=("Add*",), scale_tolerance=2.0)
    assert json.loads(open(saved).read())["verdict"]["policy"]["ignore"] == ["Add*"]
    assert cli.main(["judge", saved]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "accuracy PASSED: 1 tensor meets cosine >= 0.95 (1 ignored)"
    assert lines[-1] == (f"judged with the policy recorded in {saved}: ignore ['Add*'] "
                         "(--ignore); pass the option, or --no-recorded-policy, to judge "
                         "otherwise")
    assert cli.main(["judge", saved, "--ignore", "Conv_0"]) == 1  # the user's list replaces it
    capsys.readouterr()
    # nothing ignored at all: there was no way but editing the file (a review)
    assert cli.main(["judge", saved, "--no-recorded-policy"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("accuracy FAILED: 1 of 2 tensors fail") and "recorded" not in out


def test_diagnose_judges_under_the_scale_guard_too(tmp_path, capsys):
    """diagnose judged without it: a model failing the plugin's check on scale alone was
    'PASSES: the default conversion already meets the threshold'."""
    import onnx

    from pytest_ascend_accuracy.testing.models import overflow_model

    model = tmp_path / "ovf.onnx"
    onnx.save(overflow_model(), str(model))
    common = ["diagnose", str(model), "--threshold", "0.05", "--cache-dir", str(tmp_path / "c")]
    assert cli.main(common) == 0
    assert "diagnosis of ovf: RESTORED" in capsys.readouterr().out
    assert cli.main(common + ["--scale-tolerance", "none"]) == 0
    assert "the default conversion already meets the threshold" in capsys.readouterr().out
