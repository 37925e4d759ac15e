"""The ``diagnose`` command ``compare`` prints starts from the mode the dump was converted with
(its om json's ``atc_cmdline``): without it, a fusion-off dump's pointer diagnosed the default
conversion and said PASSES (a diagnose trial). ``core.atc_cmdline`` reads the command line."""
import json
import re
import shlex

import pytest

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.core.atc_cmdline import input_shape_of, mode_of_cmdline
from pytest_ascend_accuracy.core.modes import BUFFER_OFF, FUSION_OFF, HIGH_PRECISION, Mode

pytest.importorskip("onnxruntime")


def test_the_mode_of_an_atc_command_line(tmp_path):
    assert mode_of_cmdline("atc --model=m.onnx --precision_mode=force_fp16") == (None, [])
    assert mode_of_cmdline("atc --precision_mode allow_fp32_to_fp16") == (HIGH_PRECISION, [])
    assert mode_of_cmdline("atc --precision_mode_v2=mixed_float16")[0] == Mode(
        precision_mode="allow_mix_precision")
    assert mode_of_cmdline("atc --buffer_optimize=off_optimize") == (BUFFER_OFF, [])
    (tmp_path / "keep.cfg").write_text("conv1\nOpType::BatchNorm\n")
    (tmp_path / "fusion.cfg").write_text(json.dumps(
        {"Switch": {"GraphFusion": {"ALL": "off"}, "UBFusion": {"ALL": "off"}}}))
    mode, left = mode_of_cmdline("atc --keep_dtype=keep.cfg --fusion_switch_file=fusion.cfg",
                                 [tmp_path])
    assert mode == Mode(fusion=False, keep_dtype=("conv1", "OpType::BatchNorm")) and left == []
    (tmp_path / "one_rule.cfg").write_text(json.dumps({"Switch": {"GraphFusion": {
        "ConvBatchnormFusionPass": "off"}}}))
    (tmp_path / "ub_rule.cfg").write_text(json.dumps({"Switch": {"UBFusion": {
        "TbeEltwiseFusionPass": "off"}}}))
    # single rules are named with how to give them, not carried: the emulator imitates a few
    # rules, and a pasted command naming another was refused (a review)
    mode, left = mode_of_cmdline("atc --fusion_switch_file=one_rule.cfg", [tmp_path])
    assert mode is None and left == [
        "--fusion_switch_file=one_rule.cfg (rules off: ConvBatchnormFusionPass; where the "
        "backend knows them: --mode '{fusion_rules_off: [\"ConvBatchnormFusionPass\"]}')"]
    assert "UBFusion:TbeEltwiseFusionPass" in mode_of_cmdline(
        "atc --fusion_switch_file=ub_rule.cfg", [tmp_path])[1][0]
    # ALL off with a rule switched back on is not fusion_off (a review)
    (tmp_path / "all_but.cfg").write_text(json.dumps({"Switch": {
        "GraphFusion": {"ALL": "off", "ConvBatchnormFusionPass": "on"},
        "UBFusion": {"ALL": "off"}}}))
    assert mode_of_cmdline("atc --fusion_switch_file=all_but.cfg", [tmp_path]) == (
        None, ["--fusion_switch_file=all_but.cfg"])
    # options that change no value are not named (a review)
    assert mode_of_cmdline("atc --display_model_info=1 --op_compiler_cache_mode=enable "
                           "--log=error --input_shape=x:1,16") == (None, [])
    assert input_shape_of("atc --model=m.onnx --input_shape=x:1,16;y:2") == "x:1,16;y:2"
    # what no mode here carries is named, never dropped (a review: op_select_implmode was)
    assert mode_of_cmdline("atc --model=m.onnx --framework=5 --soc_version=Ascend310P3 "
                           "--keep_dtype=gone.cfg --op_select_implmode=high_precision "
                           "--insert_op_conf=aipp.cfg", [tmp_path]) == (
        None, ["--keep_dtype=gone.cfg", "--op_select_implmode=high_precision",
               "--insert_op_conf=aipp.cfg"])


def _emulated(tmp_path, mode=None, *, proto=None, store_inputs=False, input_shape=None):
    """(ONNX model path, compare argv of the emulator's dump of it under ``mode`` against its
    stored golden, with the om json): the overflow model unless ``proto``."""
    from pytest_ascend_accuracy.testing import models
    from pytest_ascend_accuracy.testing.emulated_pair import emulated_pair

    pair = emulated_pair(tmp_path, proto if proto is not None else models.overflow_model(), mode,
                         name="overflow", store_inputs=store_inputs, input_shape=input_shape)
    return pair.model, pair.compare_argv()


def test_compares_diagnose_pointer_carries_the_dumps_mode_and_pasted_it_passes(tmp_path, capsys):
    """Against a stored golden of op outputs only whose model is gone (its operands unknown):
    the generic pointer, in the dump's mode; pasted, the diagnosis restores."""
    import shutil

    model, compare = _emulated(tmp_path, FUSION_OFF)
    moved = tmp_path / "elsewhere" / "golden"  # (its record names ../overflow.onnx: not there)
    shutil.copytree(compare[2], moved)
    compare[2] = str(moved)
    assert cli.main(compare) == 1
    out = capsys.readouterr().out
    command = re.search(r"(ascend-accuracy diagnose \S+ --mode \S+)", out)
    assert command and command.group(1).endswith("--mode fusion_off"), out
    argv = shlex.split(command.group(1).replace("MODEL.onnx", shlex.quote(str(model))))[1:]
    assert cli.main(argv + ["--cache-dir", str(tmp_path / "cache")]) == 0  # restored
    diagnosis = capsys.readouterr().out
    assert "RESTORED" in diagnosis and "fusion_off fails at op norm" in diagnosis, diagnosis


def test_a_stored_golden_of_outputs_only_has_its_operands_read_through_its_model(tmp_path,
                                                                                 capsys):
    """Where the stored golden's record names its model, still there: the failing op's golden
    operands are read from the outputs feeding them (as the plugin reads them), so the CLI
    finds norm's 1e9 variance and gives its keep_dtype fix in the dump's mode, which pasted
    passes (it said their operands were not checked and pointed to a diagnosis)."""
    model, compare = _emulated(tmp_path, FUSION_OFF)
    assert cli.main(compare) == 1
    out = capsys.readouterr().out
    assert "next step: golden operands leave the float16 range (norm input:4 reaches |1e+09|)" \
        in out, out
    command = re.search(r"(ascend-accuracy diagnose \S+ --mode '[^']*')", out)
    assert command and command.group(1).endswith(
        "--mode '{base: fusion_off, keep_dtype: [\"norm\"]}'"), out
    argv = shlex.split(command.group(1))[1:]
    assert cli.main(argv + ["--cache-dir", str(tmp_path / "cache")]) == 0
    assert capsys.readouterr().out.startswith("ascend-accuracy diagnosis of overflow: PASSES")


def test_the_high_precision_alternative_keeps_the_dumps_mode_too(tmp_path, capsys):
    """"(or --mode high_precision)" diagnosed the default conversion of a fusion-off dump (a
    review): the alternative is the dump's mode in high precision."""
    _, compare = _emulated(tmp_path, FUSION_OFF, store_inputs=True)
    assert cli.main(compare) == 1
    out = capsys.readouterr().out
    assert "--mode '{base: fusion_off, keep_dtype: [\"norm\"]}'" in out, out
    assert "(or --mode high_precision+fusion_off) passes with exit status 0" in out, out


def test_compare_with_the_om_json_shows_and_takes_the_models_own_names(tmp_path, capsys):
    """A stored golden's files spell op names sanitized (fc2_Add); with the om json the compare
    shows the model's (fc2/Add), as the plugin does, and refuses the sanitized spelling in
    --per-op, which the printed diagnose command would then pass to a refusal (a PP-OCR
    trial)."""
    from pytest_ascend_accuracy.testing import models

    proto = models.overflow_model()
    for node in proto.graph.node:  # PP-OCR's dotted names: p2o.Conv.0
        node.name = node.name.replace("/", ".").replace("to_flat", "to.flat")
    _, base = _emulated(tmp_path, proto=proto)
    assert cli.main(base + ["--per-op", "to_flat=0.05"]) == 2  # (an unfused op's golden name)
    assert ("per_op entry 'to_flat' is not an op of the dumps (that is the name as dump file "
            "names write it); closest: 'to.flat'") in capsys.readouterr().err
    assert cli.main(base + ["--per-op", "to.flat=0.05", "--csv", str(tmp_path / "r.csv")]) == 1
    assert "fc2_" not in capsys.readouterr().out
    text = (tmp_path / "r.csv").read_text()
    assert "fc2.Add" in text and "fc2_Add" not in text


def test_the_pointer_carries_the_dumps_input_shape(tmp_path, capsys):
    """A model with a dynamic batch: the printed command lacked --input-shape, and pasted it was
    refused ("dimension 0 ('batch') is dynamic"; a review; PP-OCR det is such a model)."""
    from pytest_ascend_accuracy.testing import models

    proto = models.overflow_model()
    x = proto.graph.input[0]
    x.type.tensor_type.shape.dim[0].dim_param = "batch"
    x.type.tensor_type.shape.dim[0].ClearField("dim_value")
    model, compare = _emulated(tmp_path, FUSION_OFF, proto=proto, input_shape="x:1,16")
    assert cli.main(compare) == 1
    command = re.search(r"(ascend-accuracy diagnose \S+ .*?--input-shape \S+)",
                        capsys.readouterr().out)
    assert command, "no --input-shape"
    argv = shlex.split(command.group(1).replace("MODEL.onnx", shlex.quote(str(model))))[1:]
    assert cli.main(argv + ["--cache-dir", str(tmp_path / "cache")]) == 0


def test_judge_applies_the_recorded_threshold_and_per_op(tmp_path, capsys):
    """judge of a compare.json whose check failed at threshold 0.99 said "accuracy PASSED: ...
    cosine >= 0.95" (a docs trial): the recorded default threshold and per_op apply unless
    given, and the note says so."""
    _, compare = _emulated(tmp_path)
    saved = tmp_path / "r.json"
    assert cli.main(compare + ["--threshold", "0.3", "--per-op", "fc2/MatMul=0.05",
                               "--scale-tolerance", "none", "--json", str(saved)]) == 0
    capsys.readouterr()
    assert cli.main(["judge", str(saved)]) == 0
    out = capsys.readouterr().out
    assert "judged with the policy recorded in" in out and "cosine >= 0.3" in out, out
    assert "fc2/MatMul: cosine >= 0.05" in out, out
    assert cli.main(["judge", str(saved), "--no-recorded-policy"]) == 1  # today's defaults
    # each recorded piece applies unless its own option is given
    assert cli.main(["judge", str(saved), "--per-op", "fc2/MatMul=0.3"]) == 1


def test_judge_takes_the_recorded_metric_with_a_given_threshold_and_a_given_metric_wins(
        tmp_path, capsys):
    """A result judged at kl: ``judge --threshold T`` judged cosine >= T, and ``--metric cosine``
    was taken for "not given" (a review)."""
    _, compare = _emulated(tmp_path)
    saved = tmp_path / "kl.json"
    cli.main(compare + ["--metric", "kl", "--threshold", "100", "--scale-tolerance", "none",
                        "--json", str(saved)])
    capsys.readouterr()
    assert cli.main(["judge", str(saved), "--threshold", "1e-12"]) == 1  # kl <= 1e-12 fails
    out = capsys.readouterr().out
    assert "kl <= 1e-12" in out and "metric kl (--threshold/--metric)" in out, out
    assert cli.main(["judge", str(saved), "--metric", "cosine", "--threshold", "0.05",
                     "--scale-tolerance", "none"]) == 0
    assert "cosine >= 0.05" in capsys.readouterr().out


def test_a_single_rule_not_carried_is_named_with_a_mode_that_pastes(tmp_path, capsys):
    """A dump converted with one fusion rule off: the printed command does not carry the rule
    (a backend may not know it) but names the --mode that gives it; pasted with the emulator,
    which imitates that rule, diagnose takes it."""
    from pytest_ascend_accuracy.backends.emulator.faults import Fault
    from pytest_ascend_accuracy.testing import models
    from pytest_ascend_accuracy.testing.emulated_pair import emulated_pair

    pair = emulated_pair(tmp_path, models.conv_bn_relu(),  # a failing dump: a fault at fc
                         Mode(fusion_rules_off=("ConvBatchnormFusionPass",)), name="cbr",
                         faults=[Fault("op", "fc", "noise")])
    assert cli.main(pair.compare_argv()) == 1
    out = capsys.readouterr().out
    given = re.search(r"where the backend knows them: --mode '([^']+)'\)", out)
    assert given, out
    assert cli.main(["diagnose", str(pair.model), "--mode", given.group(1),
                     "--cache-dir", str(tmp_path / "cache")]) in (0, 1)  # taken, not refused
    assert "fusion_rules_off" not in capsys.readouterr().err
