"""A diagnosis whose fix keeps (nearly) every op in float32 says so (``triage.kept_share``).

T2: torchvision Faster R-CNN's diagnosis read ``RESTORED`` with a 953-op keep_dtype, every op
of the model, and exited 0, though what failed was the order after RPN TopKs that only
reordered near ties. On a detector built in code (``near_tie_detector``), a budget that ends
the search at "every op kept" now heads ``RESTORED only by keeping 9 of 9 ops in float32 (the
whole model)``, names the selection, and gives the ignore entries that judge the rest, which
pasted (API and command line) make the check pass. A smaller fix reads as before. The command
still exits 0: the fix passes pasted (docs/cli.md)."""
import re
import shlex

import pytest

pytest.importorskip("onnxruntime")

from near_tie_detector import AFTER, near_tie_detector  # noqa: E402
from pytest_ascend_accuracy.cli import app as cli  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.triage.flow import diagnose  # noqa: E402
from pytest_ascend_accuracy.triage.report import text, to_dict  # noqa: E402


@pytest.fixture
def cache(tmp_path):
    return Cache(tmp_path / "cache")


def test_a_fix_of_every_op_says_so_and_names_the_selection(cache):
    d = diagnose(near_tie_detector(), threshold=0.99, budget=3, cache=cache)
    assert d.fixed and d.whole_model and d.ops_total == 9 and len(d.keep_dtype) == 9
    head = text(d).splitlines()[0]
    assert head == ("ascend-accuracy diagnosis of near_tie_detector: RESTORED only by keeping 9 "
                    "of 9 ops in float32 (the whole model)")
    assert ("; that fix keeps 9 of the 9 ops the run names in float32, the whole model: it "
            "passes pasted, but the model then runs in float32 wherever it matters") in d.verdict
    assert ("what fails is the order after topk:output:1, a selection (TopK) whose differing "
            "indices all reorder ties or near ties") in d.verdict
    assert d.ignore_instead == AFTER
    assert to_dict(d)["whole_model"] is True and to_dict(d)["ops_total"] == 9
    # the ignore entries pasted: the check judges the rest, and passes
    again = diagnose(near_tie_detector(), threshold=0.99, budget=3, cache=cache,
                     ignore=list(d.ignore_instead))
    assert again.restored_by == "default"


def test_a_smaller_fix_reads_as_before(cache):
    d = diagnose(near_tie_detector(), threshold=0.99, budget=16, cache=cache)
    assert d.fixed and 0 < len(d.keep_dtype) < 9 and not d.whole_model
    assert text(d).splitlines()[0].endswith(": RESTORED")
    assert "the whole model" not in d.verdict and d.ignore_instead == ()


def test_the_command_exits_0_and_its_ignore_flags_pasted_pass(tmp_path, capsys):
    import onnx

    model = tmp_path / "det.onnx"
    onnx.save(near_tie_detector(), str(model))
    argv = ["diagnose", str(model), "--threshold", "0.99", "--cache-dir", str(tmp_path / "c")]
    assert cli.main([*argv, "--budget", "3"]) == 0  # a fix, which passes pasted (docs/cli.md)
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith(
        "RESTORED only by keeping 9 of 9 ops in float32 (the whole model)")
    flags = re.search(r"\(that hides them\): (.*) on the command line;", out).group(1)
    assert cli.main([*argv, *shlex.split(flags)]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith(": PASSES")


def test_a_fix_that_completes_the_modes_own_list_counts_both(tmp_path, cache):
    """Audit 33: a CLI diagnosis started from a pasted 19-op list and ended keeping all 20 ops,
    headed plain RESTORED: only the op the search added was counted."""
    import onnx

    from pytest_ascend_accuracy import keep_dtype
    from pytest_ascend_accuracy.testing import models

    onnx.save(models.two_overflows(), str(tmp_path / "two.onnx"))
    given = ["fc1/MatMul", "fc1/Add", "to_channels", "norm_a", "to_flat", "fc2/MatMul",
             "fc2/Add"]
    d = diagnose(str(tmp_path / "two.onnx"), mode=keep_dtype(given), threshold=0.95,
                 cache=cache)
    assert d.keep_dtype == ("norm_b",) and d.whole_model
    assert text(d).splitlines()[0] == ("ascend-accuracy diagnosis of two: RESTORED only by "
                                       "keeping 8 of 8 ops in float32 (the whole model)")
