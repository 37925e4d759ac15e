"""Which nodes the emulator fuses, under which names, and when it must not."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from pytest_ascend_accuracy.backends.emulator.rewrite import emulate_graph  # noqa: E402
from pytest_ascend_accuracy.core.modes import DEFAULT, FUSION_OFF, Mode  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402

from .conftest import cosine, emulate, golden_values  # noqa: E402


def _groups(model, mode=DEFAULT):
    _, plan = emulate_graph(model, mode)
    return {op.name: (op.original_names, op.rules) for op in plan.ops}


def test_conv_bn_relu_fuses_into_named_groups_that_list_original_ops():
    groups = _groups(models.conv_bn_relu())
    assert groups["conv1relu1"] == (("conv1", "bn1", "relu1"),
                                    ("ConvBatchnormFusionPass", "TbeCommonRules0FusionPass"))
    assert groups["conv2relu2"][0] == ("conv2", "bn2", "relu2")
    assert list(groups) == ["conv1relu1", "conv2relu2", "gap", "flatten", "fc"]


def test_fusion_off_runs_every_op_separately():
    groups = _groups(models.conv_bn_relu(), FUSION_OFF)
    assert list(groups) == ["conv1", "bn1", "relu1", "conv2", "bn2", "relu2", "gap", "flatten", "fc"]
    assert all(members == (name,) and rules == () for name, (members, rules) in groups.items())


def test_single_rules_can_be_switched_off():
    no_bn = _groups(models.conv_bn_relu(), Mode(fusion_rules_off=("ConvBatchnormFusionPass",)))
    assert ["conv1", "bn1", "relu1"] == list(no_bn)[:3]
    no_ub = _groups(models.conv_bn_relu(), Mode(fusion_rules_off=("UBFusion:TbeCommonRules0FusionPass",)))
    assert no_ub["conv1"] == (("conv1", "bn1"), ("ConvBatchnormFusionPass",))
    assert no_ub["relu1"] == (("relu1",), ())


def test_transformer_patterns_layernorm_gelu_and_matmul_bias():
    groups = _groups(models.transformer_block())
    ln = groups["/ln1/ReduceMean"]
    assert ln == (("/ln1/ReduceMean", "/ln1/Sub", "/ln1/Pow", "/ln1/ReduceMean_1", "/ln1/Add", "/ln1/Sqrt",
                   "/ln1/Div", "/ln1/Mul", "/ln1/Add_1"), ("LayerNormFusionPass",))
    assert groups["/attn/q/MatMul"] == (("/attn/q/MatMul", "/attn/q/Add"), ("MatMulBiasAddFusionPass",))
    mlp = groups["/mlp/fc1/MatMul/mlp/act/Div"]
    assert mlp[0] == ("/mlp/fc1/MatMul", "/mlp/fc1/Add", "/mlp/act/Div", "/mlp/act/Erf", "/mlp/act/Add",
                      "/mlp/act/Mul", "/mlp/act/Mul_1")
    assert mlp[1] == ("MatMulBiasAddFusionPass", "GeluFusionPass", "ATbeMatmulElemwiseFusionPass")
    # Softmax and the attention MatMuls are not part of any pattern
    assert groups["/attn/Softmax"] == (("/attn/Softmax",), ())


def test_gelu_rule_off_leaves_the_gelu_ops_separate():
    groups = _groups(models.transformer_block(), Mode(fusion_rules_off=("GeluFusionPass",)))
    assert "/mlp/act/Erf" in groups and "/mlp/act/Mul_1" in groups


def test_a_member_output_used_outside_the_group_prevents_fusion():
    # conv output also feeds a second consumer: Conv+BN must not swallow it
    model = models.conv_bn_relu()
    g = model.graph
    g.node.append(helper.make_node("Relu", ["conv1_out"], ["side"], name="side"))
    g.output.append(helper.make_tensor_value_info("side", TensorProto.FLOAT, None))
    groups = _groups(model)
    assert groups["conv1"] == (("conv1",), ())
    assert groups["bn1"] == (("bn1",), ()) and groups["relu1"] == (("relu1",), ())
    assert groups["conv2relu2"][0] == ("conv2", "bn2", "relu2")  # the other block still fuses


def test_conv_bn_needs_constant_statistics():
    model = models.conv_bn_relu()
    g = model.graph
    # feed bn1's variance from a graph input: not foldable any more
    var = next(t for t in g.initializer if t.name == "bn1.var")
    g.initializer.remove(var)
    g.input.append(helper.make_tensor_value_info("bn1.var", TensorProto.FLOAT, [8]))
    groups = _groups(model)
    assert groups["conv1"] == (("conv1",), ())
    assert "bn1" in groups


def test_fused_conv_bn_keeps_a_huge_variance_out_of_fp16_as_atc_does():
    """The PP-OCRv4 lesson: BN variance 1e8 overflows fp16 unless Conv+BN is folded."""
    model = models.conv_bn_relu()
    for t in model.graph.initializer:
        if t.name == "bn1.var":
            t.CopyFrom(numpy_helper.from_array(np.full(8, 1e8, np.float32), "bn1.var"))
        if t.name == "bn1.scale":
            t.CopyFrom(numpy_helper.from_array(np.full(8, 1e4, np.float32), "bn1.scale"))
    x = make_inputs(model)
    gold = golden_values(model, x)
    _, fused = emulate(model, DEFAULT, x)
    _, separate = emulate(model, FUSION_OFF, x)
    assert cosine(fused["conv1relu1"][0], gold["relu1"][0]) > 0.999
    bn_out = separate["bn1"][0].astype(np.float32)
    assert cosine(bn_out, gold["bn1"][0]) < 0.5  # variance -> inf: every value collapses to the bias


def test_unknown_rule_names_are_reported():
    _, plan = emulate_graph(models.passing_mlp(), Mode(fusion_rules_off=("NoSuchFusionPass",)))
    assert plan.info["unknown_fusion_rules"] == ["NoSuchFusionPass"]


def test_a_rule_the_emulator_does_not_imitate_is_refused_with_the_closest(tmp_path):
    """A misspelled rule switched nothing off and the check passed as if it had (a reviewer's
    Mode, YAML and diagnose --mode all did): converting names the closest rules instead."""
    import pytest

    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.errors import ConfigError

    backend = EmulatorBackend(Cache(tmp_path))
    model = models.conv_bn_relu()
    with pytest.raises(ConfigError, match=r"'ConvBatchnormFusionPas': the emulator imitates no "
                                          r"fusion rule of that name.*closest: "
                                          r"'ConvBatchnormFusionPass'"):
        backend.convert(model, Mode(fusion_rules_off=("ConvBatchnormFusionPas",)))
    with pytest.raises(ConfigError, match=r"ConvBatchnormFusionPass is a GraphFusion rule, not "
                                          r"UBFusion.*closest: "
                                          r"'GraphFusion:ConvBatchnormFusionPass'"):
        backend.convert(model, Mode(fusion_rules_off=("UBFusion:ConvBatchnormFusionPass",)))
    # a bare UBFusion rule name would go into the switch file's GraphFusion section, where ATC
    # does not switch it off: the emulator would, and the two would disagree
    with pytest.raises(ConfigError, match=r"TbeCommonRules0FusionPass is a UBFusion rule: a bare "
                                          r"name .*closest: 'UBFusion:TbeCommonRules0FusionPass'"):
        backend.convert(model, Mode(fusion_rules_off=("TbeCommonRules0FusionPass",)))
    for rules in (("ConvBatchnormFusionPass",), ("GraphFusion:ConvBatchnormFusionPass",),
                  ("UBFusion:TbeCommonRules0FusionPass",)):
        backend.convert(model, Mode(fusion_rules_off=rules))


def test_a_misspelled_ubfusion_rule_is_offered_with_its_section(tmp_path):
    """'UBFusion:TbeCommonRule0FusionPass' (one letter off) was offered the bare
    'TbeCommonRules0FusionPass' as closest, which pasted was refused in turn ("a bare name goes
    into the fusion switch file's GraphFusion section"): every offered name converts pasted."""
    import re

    import pytest

    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.errors import ConfigError

    backend = EmulatorBackend(Cache(tmp_path))
    model = models.conv_bn_relu()
    for typo in ("UBFusion:TbeCommonRule0FusionPass", "TbeCommonRule0FusionPass",
                 "GraphFusion:ConvBatchnormFusionPas", "ATbeMatmulElemwiseFusion"):
        with pytest.raises(ConfigError) as raised:
            backend.convert(model, Mode(fusion_rules_off=(typo,)))
        offered = re.findall(r"'([^']+)'", str(raised.value).split("closest: ")[1].split(" (")[0])
        assert offered, str(raised.value)
        for name in offered:
            backend.convert(model, Mode(fusion_rules_off=(name,)))
