"""A check that failed only because ops were "not compared" (no golden tensor) is a coverage
failure: ``diagnose`` stops after the first run and gives the check's remedy, pasted as printed
(audit H110: four conversions, then "check the operator implementations against the
reference" of ops nothing was compared for)."""
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
    """conv_bn_relu, its seed-0 inputs and a golden that lacks the last op (``fc``) the device
    dumps, as a golden made without that op's output does."""
    cache = Cache(tmp_path / "cache")
    model = models.conv_bn_relu()
    inputs = make_inputs(model, seed=0)
    full = golden_dump(model, inputs, cache=cache)
    golden = DumpSet([op for op in full.ops if op.name != "fc"], kind=full.kind, root=full.root,
                     model_name=full.model_name, meta=dict(full.meta))
    return cache, model, inputs, golden


def run(case, **kw):
    cache, model, inputs, golden = case
    return diagnose(model, inputs, backend=EmulatorBackend(cache), cache=cache, golden=golden,
                    **kw)


def test_a_coverage_failure_stops_at_once_and_names_the_ops(case):
    d = run(case, budget=8)
    assert d.conversions == 1, d.verdict  # the first run alone: no mode was tried
    assert [s.step for s in d.steps] == ["default"]
    assert d.restored_by is None and d.fix_mode is None
    assert "check the operator implementations" not in d.verdict
    assert d.verdict.startswith("not diagnosed: the check failed on coverage, not accuracy: "
                                "1 op not compared (fc: no golden op matches its name"), d.verdict
    assert "no conversion mode changes which tensors the golden holds" in d.verdict
    assert "or compare with a golden that holds its outputs" in d.verdict
    text = triage_report.text(d)
    assert "check the operator implementations" not in text


def test_the_command_line_remedy_pasted_passes(case):
    d = run(case, budget=8)
    added = re.search(r"add (.*?) to the command", d.verdict).group(1)
    words = shlex.split(added)
    assert words == ["--ignore", "fc"], d.verdict
    pasted = run(case, budget=8, ignore=words[1::2])
    assert pasted.restored_by == "default", pasted.verdict
    # the Python spelling printed beside it
    python = re.search(r"diagnose\(\.\.\., ignore=(\[.*?\])\)", d.verdict)
    listed = ast.literal_eval(python.group(1))
    assert run(case, budget=8, ignore=listed).restored_by == "default"


def test_the_plugin_remedy_keeps_the_checks_own_ignore_entries(case):
    d = run(case, budget=8, ignore=["relu1"], budget_option=PLUGIN_BUDGET_OPTION)
    assert d.conversions == 1, d.verdict
    listed = ast.literal_eval(re.search(r"@accuracy\(ignore=(\[.*?\])\)", d.verdict).group(1))
    assert listed == ["relu1", "fc"], d.verdict
    assert 'YAML: ignore: ["relu1", "fc"]' in d.verdict
    assert run(case, budget=8, ignore=listed).restored_by == "default"


def test_a_value_failure_beside_an_op_not_compared_is_still_diagnosed(case):
    """Not only ops not compared: the flow goes on, as before, with the op not compared set
    aside (``tests/test_triage_aside.py``)."""
    from pytest_ascend_accuracy.backends.emulator import Fault

    cache, model, inputs, golden = case
    d = diagnose(model, inputs, backend=EmulatorBackend(cache, faults=[Fault.on_op(
        "conv2", effect="noise", amount=1.0)]), cache=cache, golden=golden, budget=2)
    assert not d.verdict.startswith("not diagnosed"), d.verdict
    assert "1 op not compared (fc: " in d.verdict and "was set aside" in d.verdict
    assert d.conversions > 1
