"""``diagnose``'s fusion rule search (a user trial on PP-OCRv4 det): when fusion off fails at a
BatchNorm past float16's range and a keep_dtype set restores it under fusion off, the fusion
rules are still searched, with that set kept, and the rule(s) plus the set are the fix; the
ops a rule verdict names are the ops it fused, not every op whose result changed."""
import json

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from pytest_ascend_accuracy.backends.emulator import EmulatorBackend, Fault  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.core.modes import FUSION_OFF, Mode  # noqa: E402
from pytest_ascend_accuracy.triage.flow import diagnose  # noqa: E402

RULE = "GraphFusion:ConvBatchnormFusionPass"
FAULT = [Fault.on_rule("ConvBatchnormFusionPass")]


@pytest.fixture
def cache(tmp_path):
    return Cache(tmp_path / "cache")


def run(model, cache, **kw):
    return diagnose(model, backend=EmulatorBackend(cache, faults=FAULT), cache=cache, **kw)


def conv_bn_fc():
    """Conv + BatchNorm (variance 1e9, past float16's range: harmless folded into the Conv, all
    zero once the BatchNorm runs on its own in float16) + Relu, pooled into a MatMul + Add:
    three fusion rules apply, one of them faulty."""
    rng = np.random.default_rng(0)
    c = 8
    inits = [numpy_helper.from_array(v.astype(np.float32), n) for n, v in (
        ("wc", rng.standard_normal((c, 3, 3, 3)) * 0.3), ("g", np.full(c, 3e4)),
        ("b", np.zeros(c)), ("m", np.zeros(c)), ("v", np.full(c, 1e9)),
        ("wf", rng.standard_normal((c, 4)) * 0.5), ("bf", rng.standard_normal(4) * 0.1))]
    nodes = [helper.make_node("Conv", ["x", "wc"], ["c0"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c0", "g", "b", "m", "v"], ["bn"], name="bn"),
             helper.make_node("Relu", ["bn"], ["r"], name="relu"),
             helper.make_node("GlobalAveragePool", ["r"], ["p"], name="gap"),
             helper.make_node("Flatten", ["p"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "wf"], ["mm"], name="fc"),
             helper.make_node("Add", ["mm", "bf"], ["y"], name="fc_bias")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph(nodes, "conv_bn_fc", [x], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_the_rules_are_searched_with_the_keep_dtype_set_fusion_off_needed(cache):
    d = run(conv_bn_fc(), cache)
    assert d.step("fusion_off").first_failure == "bn"
    assert d.step("fusion_off+keep_dtype").passed is True
    assert d.restored_by == "fusion_rules+keep_dtype", d.verdict
    assert d.fix_mode == Mode(fusion_rules_off=(RULE,), keep_dtype=("bn",))
    assert (d.fusion_rules_off, d.keep_dtype) == ((RULE,), ("bn",))
    assert d.verdict.endswith(f"with fusion back on, switching off only the fusion rule(s) {RULE} "
                              f"(ops fused under default, not with it off: conv+bn+relu) with "
                              f"keep_dtype {{bn}} restores cosine 1.000000 too"), d.verdict
    assert not d.budget_exhausted
    # the other rules stay on: only the faulty one is named
    assert run(conv_bn_fc(), cache, mode=d.fix_mode).restored_by == "default"


def test_the_printed_fix_and_the_written_files_match_and_pass_pasted(tmp_path, capsys,
                                                                     monkeypatch):
    import onnx

    from pytest_ascend_accuracy.cli import main

    monkeypatch.chdir(tmp_path)
    onnx.save(conv_bn_fc(), "m.onnx")
    common = ["--cache-dir", "c", "--fault", "rule:ConvBatchnormFusionPass"]
    assert main(["diagnose", "m.onnx", *common, "--out", "fix"]) == 0
    out = capsys.readouterr().out
    assert ("  fix: mode rules_off(GraphFusion:ConvBatchnormFusionPass)+keep_dtype(bn); ATC: "
            "--precision_mode=force_fp16 --keep_dtype=fix/keep_dtype.cfg "
            "--fusion_switch_file=fix/fusion_switch.cfg\n") in out
    assert (tmp_path / "fix" / "atc_args.txt").read_text().splitlines() == [
        "--precision_mode=force_fp16", "--keep_dtype=fix/keep_dtype.cfg",
        "--fusion_switch_file=fix/fusion_switch.cfg"]
    assert (tmp_path / "fix" / "keep_dtype.cfg").read_text() == "bn\n"
    assert json.loads((tmp_path / "fix" / "fusion_switch.cfg").read_text()) == {
        "Switch": {"GraphFusion": {"ConvBatchnormFusionPass": "off"}}}
    yaml = '{fusion_rules_off: ["GraphFusion:ConvBatchnormFusionPass"], keep_dtype: ["bn"]}'
    assert f"in a YAML suite: modes: [{yaml}]" in out
    assert main(["diagnose", "m.onnx", *common, "--mode", yaml]) == 0
    assert "PASSES" in capsys.readouterr().out


def test_a_budget_spent_before_the_rule_search_keeps_fusion_off_and_the_set(cache):
    # default, high precision, every op kept, buffer off, fusion off, and the two under it
    d = run(conv_bn_fc(), cache, budget=7)
    assert d.restored_by == "fusion_off+keep_dtype", d.verdict
    assert d.fix_mode == FUSION_OFF | Mode(keep_dtype=("bn",))
    assert d.budget_exhausted
    assert d.verdict.endswith("(the budget ran out before the fusion rules were searched with "
                              "keep_dtype {bn}: rerun with --budget 14 to name the rules instead "
                              "of all fusion off)"), d.verdict
    assert run(conv_bn_fc(), cache, mode=d.fix_mode).restored_by == "default"


def test_a_rule_verdict_names_the_ops_the_rule_fused(cache):
    from pytest_ascend_accuracy.testing import models

    d = run(models.conv_bn_relu(), cache)
    assert d.restored_by == "fusion_rules"
    assert d.verdict.endswith(f"the fusion rule(s) to switch off: {RULE} (ops fused under "
                              f"default, not with it off: conv1+bn1+relu1, conv2+bn2+relu2)"), \
        d.verdict
    assert "fused ops:" not in d.verdict


def test_without_an_om_json_the_fused_ops_are_not_told():
    from types import SimpleNamespace

    from pytest_ascend_accuracy.triage.fusion_rules import unfused

    assert unfused(SimpleNamespace(om_json=None), SimpleNamespace(om_json=None)) is None
