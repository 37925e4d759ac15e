"""A failure that mixes ops "not compared" (no golden tensor) with value failures is diagnosed
with those ops set aside: they fail under every mode, so no mode could pass and the flow ended
"no conversion mode restores accuracy ... check the operator implementations" where keep_dtype
fixed every value failure (F6, the gap F4's coverage stop left). The fix is found, and the
verdict names the ops set aside with the check's remedy; the fix and the ignore pasted together
pass (both spellings: the command's --ignore and the plugin's ignore list)."""
import ast
import re
import shlex

import pytest

pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.backends.emulator import EmulatorBackend  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.dump.model import DumpSet  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402
from pytest_ascend_accuracy.triage import report as triage_report  # noqa: E402
from pytest_ascend_accuracy.triage.flow import PLUGIN_BUDGET_OPTION, diagnose  # noqa: E402


@pytest.fixture
def case(tmp_path):
    """The overflow model (``norm``'s variance past float16: keep_dtype fixes it), its seed-0
    inputs and a golden lacking ``to_channels``, an op the device runs on its own."""
    cache = Cache(tmp_path / "cache")
    model = models.overflow_model()
    inputs = make_inputs(model, seed=0)
    full = golden_dump(model, inputs, cache=cache)
    golden = DumpSet([op for op in full.ops if op.name != "to_channels"], kind=full.kind,
                     root=full.root, model_name=full.model_name, meta=dict(full.meta))
    return cache, model, inputs, golden


def run(case, **kw):
    cache, model, inputs, golden = case
    return diagnose(model, inputs, backend=EmulatorBackend(cache), cache=cache, golden=golden,
                    budget=16, **kw)


def test_the_value_failures_are_fixed_with_the_ops_not_compared_set_aside(case):
    d = run(case)
    assert d.restored_by == "keep_dtype", d.verdict
    assert d.keep_dtype == ("norm",)
    assert d.set_aside == ("to_channels",) and d.ignore_with_fix == ("to_channels",)
    assert "check the operator implementations" not in d.verdict
    assert ("1 op not compared (to_channels: no golden op matches its name, original names or "
            "output origin) was set aside") in d.verdict, d.verdict
    assert "so paste this beside the fix: add --ignore to_channels to the command" in d.verdict
    # step 1 shows the check's own verdict, the op not compared in it
    assert "to_channels" in d.steps[0].failing
    text = triage_report.text(d)
    assert ("  with the ops set aside ignored: --ignore to_channels on the command line; in a "
            "test: ignore=['to_channels']; in a YAML suite: ignore: [\"to_channels\"]") in text
    assert triage_report.to_dict(d)["set_aside"] == ["to_channels"]


def test_the_fix_and_the_command_lines_ignore_pasted_pass(case):
    d = run(case)
    words = shlex.split(re.search(r"add (.*?) to the command", d.verdict).group(1))
    assert words == ["--ignore", "to_channels"], d.verdict
    pasted = run(case, mode=d.fix_mode, ignore=words[1::2])
    assert pasted.restored_by == "default", pasted.verdict
    python = ast.literal_eval(re.search(r"diagnose\(\.\.\., ignore=(\[.*?\])\)",
                                        d.verdict).group(1))
    assert run(case, mode=d.fix_mode, ignore=python).restored_by == "default"
    # each alone still fails: the fix leaves the op not compared, the ignore the overflow
    assert run(case, mode=d.fix_mode).restored_by is None
    assert run(case, ignore=words[1::2]).restored_by != "default"


def test_the_plugins_ignore_keeps_the_checks_own_entries_and_pasted_passes(case):
    d = run(case, ignore=["fc2/Add"], budget_option=PLUGIN_BUDGET_OPTION)
    assert d.restored_by == "keep_dtype", d.verdict
    listed = ast.literal_eval(re.search(r"@accuracy\(ignore=(\[.*?\])\)", d.verdict).group(1))
    assert listed == ["fc2/Add", "to_channels"] == list(d.ignore_with_fix), d.verdict
    assert 'YAML: ignore: ["fc2/Add", "to_channels"]' in d.verdict
    assert run(case, mode=d.fix_mode, ignore=listed).restored_by == "default"


def test_no_mode_restoring_says_the_ops_were_set_aside_without_a_fix_to_paste_beside(tmp_path):
    from pytest_ascend_accuracy.backends.emulator import Fault

    cache = Cache(tmp_path / "cache")
    model = models.conv_bn_relu()
    inputs = make_inputs(model, seed=0)
    full = golden_dump(model, inputs, cache=cache)
    golden = DumpSet([op for op in full.ops if op.name != "fc"], kind=full.kind, root=full.root,
                     model_name=full.model_name, meta=dict(full.meta))
    d = diagnose(model, inputs, backend=EmulatorBackend(cache, faults=[Fault.on_op(
        "conv2", effect="noise", amount=1.0)]), cache=cache, golden=golden, budget=16)
    assert d.restored_by is None
    assert "(1 op(s): conv2relu2)" in d.verdict, d.verdict  # fc is not among the ops blamed
    assert ("1 op not compared (fc: no golden op matches its name, original names or output "
            "origin) was set aside") in d.verdict
    assert "beside the fix" not in d.verdict
    assert "until it is ignored: add --ignore fc to the command" in d.verdict
