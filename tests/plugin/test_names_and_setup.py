"""Names a user gives either do what they say or are refused with the closest real names;
setup mistakes read as one short paragraph (issue 12)."""
import pytest

from pytest_ascend_accuracy.core.modes import FUSION_OFF, Mode, keep_dtype
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.testing import models as tiny_models

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy, keep_dtype
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/block.onnx"


@accuracy(modes=[keep_dtype(["enc_blk_0:norm"])])
def test_sanitized_keep_dtype(ascend_model):
    ascend_model(M)


def test_optype_in_onnx_spelling_is_applied_in_ascend_spelling(ascend_model):
    handle = ascend_model(M, keep_dtype=["OpType::BatchNormalization"])
    assert handle.mode.config_files()["keep_dtype.cfg"] == "OpType::BatchNorm\\n"


def test_unknown_optype(ascend_model):
    ascend_model(M, keep_dtype=["OpType::BNInference"])


@accuracy(per_op={"enc/blk.0:nrom": 0.5})
def test_unknown_per_op(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(M)
    check_accuracy(ascend_model(M, "high_precision").run(inputs), golden_dump(M, inputs))


@accuracy(per_op={"enc_blk_0:norm": 0.1})
def test_sanitized_per_op(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(M)
    check_accuracy(ascend_model(M, "high_precision").run(inputs), golden_dump(M, inputs))


@accuracy(per_op={"enc/blk.0:norm": 0.1}, ignore=["fc2/*"])
def test_real_per_op_and_glob_ignore_work(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(M)
    check_accuracy(ascend_model(M, "high_precision").run(inputs), golden_dump(M, inputs))


def test_insert_op_conf(ascend_model):
    ascend_model(M, insert_op_conf="a.cfg")


def test_unknown_atc_option(ascend_model):
    ascend_model(M, op_select_implmode="high_precision")


def test_neutral_atc_option(ascend_model):
    ascend_model(M, log="info")


def test_missing_model(ascend_model):
    ascend_model("models/nope.onnx")


def test_unknown_mode(ascend_model):
    ascend_model(M, "fusion-off")


def test_wrong_input_name(ascend_model):
    ascend_model(M).run({"image": np.zeros((1, 16), np.float32)})


def test_inf_on_one_side(check_accuracy):
    actual = DumpSet.from_arrays({"a": [np.array([1, 2, np.inf, 4], np.float16)]})
    golden = DumpSet.from_arrays({"a": [np.array([1, 2, 3, 4], np.float32)]})
    check_accuracy(actual, golden)
'''


def test_names_are_checked_and_setup_mistakes_are_one_paragraph(pytester, block_model):
    pytester.makepyfile(test_names=TEST)
    run = pytester.runpytest("-p", "no:cacheprovider", "-rf")
    run.assert_outcomes(passed=3, failed=10)
    out = run.stdout.str()
    run.stdout.fnmatch_lines([
        "ascend-accuracy configuration error: *keep_dtype entry 'enc_blk_0:norm' is not an op of "
        "model 'block' (that is the name as dump file names write it); closest: 'enc/blk.0:norm'*",
        "ascend-accuracy configuration error: *keep_dtype entry 'OpType::BNInference' (a "
        "finished graph's name for ONNX BatchNormalization; ATC matches keep_dtype on the graph as "
        "parsed, before that): no op of type 'BNInference' in model 'block'; closest: "
        "'OpType::BatchNorm'*",
        "ascend-accuracy configuration error: *per_op entry 'enc/blk.0:nrom' is not an op of "
        "model 'block'; closest: 'enc/blk.0:norm'*",
        "ascend-accuracy configuration error: *per_op entry 'enc_blk_0:norm' is not an op of "
        "model 'block' (that is the name as dump file names write it); closest: 'enc/blk.0:norm'*",
        "ascend-accuracy configuration error: *insert_op_conf=... is not taken as an ATC option: "
        "pass the AIPP file as aipp=*",
        "ascend-accuracy configuration error: *ATC option op_select_implmode=... is refused on "
        "every backend*",
        "ascend-accuracy configuration error: *ONNX model 'models/nope.onnx' not found*",
        "ascend-accuracy configuration error: *unknown mode 'fusion-off'; closest: fusion_off*",
        "ascend-accuracy configuration error: *no model input named 'image'; inputs: x*",
    ])
    # one paragraph: no traceback through the plugin's frames
    assert "accuracy_check.py" not in out and "op_catalogue.py" not in out
    # Inf on one side is said in the summary, not "cosine 0.99... < 0.95"
    run.stdout.fnmatch_lines(["FAILED test_names.py::test_inf_on_one_side *: first failing op a "
                              "(NaN/Inf on one side at 1 position)"])


def test_mode_renders_optype_entries_in_ascend_spelling_and_pasteable_forms():
    # the types ATC's ONNX parser gives (keep_dtype is matched on the graph as parsed)
    mode = FUSION_OFF | keep_dtype(["p2o.Conv.0", "OpType::Conv", "OpType::MatMul"])
    assert mode.keep_dtype == ("p2o.Conv.0", "OpType::Conv2D", "OpType::BatchMatMulV2")
    assert mode.keeps_fp32("x", "Conv") and mode.keeps_fp32("y", "MatMul")
    assert not mode.keeps_fp32("z", "Gemm")  # MatMulV2 as parsed
    assert mode.python_expr() == ("FUSION_OFF | keep_dtype(['p2o.Conv.0', 'OpType::Conv2D', "
                                  "'OpType::BatchMatMulV2'])")
    assert mode.python_imports() == ["FUSION_OFF", "keep_dtype"]
    assert mode.yaml_form() == ('{base: fusion_off, keep_dtype: ["p2o.Conv.0", '
                                '"OpType::Conv2D", "OpType::BatchMatMulV2"]}')
    assert Mode(precision_mode="force_fp32").python_expr() == "Mode(precision_mode='force_fp32')"


def test_yaml_and_mode_mapping_share_one_parser():
    import yaml

    from pytest_ascend_accuracy.core.modes import mode_from_spec

    mode = FUSION_OFF | keep_dtype(["a.b"])
    assert mode_from_spec(yaml.safe_load(mode.yaml_form())) == mode
    with pytest.raises(ConfigError, match="unknown mode key; closest: base; known: base"):
        mode_from_spec({"bsae": "fusion_off"}, "--mode")


def test_cli_diagnose_mode_refuses_unknown_names(tmp_path, capsys):
    import onnx

    from pytest_ascend_accuracy.cli import main

    model = tiny_models.overflow_model()
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    code = main(["diagnose", str(path), "--mode", "{base: fusion_off, keep_dtype: [nrom]}",
                 "--cache-dir", str(tmp_path / "c")])
    assert code == 2
    assert "keep_dtype entry 'nrom' is not an op of model 'm'; closest: 'norm'" in capsys.readouterr().err


def test_cli_compare_refuses_unknown_per_op_names_and_html_hint_matches(tmp_path, capsys):
    import numpy as np

    from pytest_ascend_accuracy.cli import main
    from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter

    for side, value in (("golden", 7e4), ("actual", np.inf)):
        with NpyDumpWriter(tmp_path / side) as w:
            w.write_op("enc/blk.0:norm", [], [np.array([1, 2, value, 4], np.float32)])
    args = ["compare", str(tmp_path / "actual"), str(tmp_path / "golden")]
    assert main(args + ["--ignore", "enc/blk.0:nrom"]) == 2
    assert "ignore entry 'enc/blk.0:nrom' is not an op of the dumps; closest: " \
           "'enc/blk.0:norm'" in capsys.readouterr().err
    assert main(args + ["--html", str(tmp_path / "r.html")]) == 1
    hint = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("next step:"))
    import html

    assert html.escape(hint) in (tmp_path / "r.html").read_text(encoding="utf-8")


FOLDED = '''
import onnx
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.testing import models

SHAPE = {"x": [1, 4]}


def _check(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    onnx.save(models.if_model(), "if_model.onnx")
    inputs = accuracy_inputs("if_model.onnx", input_shape=SHAPE)
    check_accuracy(ascend_model("if_model.onnx", input_shape=SHAPE).run(inputs),
                   golden_dump("if_model.onnx", inputs, input_shape=SHAPE))


@accuracy(per_op={"shape": 0.9})
def test_folded_per_op(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    _check(ascend_model, golden_dump, check_accuracy, accuracy_inputs)


@accuracy(ignore=["is_*", "shape:output:0"])
def test_folded_ignore(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    _check(ascend_model, golden_dump, check_accuracy, accuracy_inputs)


@accuracy(per_op={"[sr]*": 0.9})  # shape (folded) and relu (compared): it applies
def test_a_glob_matching_a_compared_op_too(ascend_model, golden_dump, check_accuracy,
                                          accuracy_inputs):
    _check(ascend_model, golden_dump, check_accuracy, accuracy_inputs)
'''


def test_a_name_of_ops_folded_at_conversion_is_refused_not_silently_unjudged(pytester):
    """``per_op={"p2o.Shape.2": ...}`` on PP-OCR rec passed without a word: the model has that
    op, but ATC computes it at conversion and the device never runs it, so no threshold on it
    is ever judged (a user trial). The JUnit coverage counts only the ops the device ran."""
    pytester.makepyfile(test_folded=FOLDED)
    result = pytester.runpytest("--junitxml=j.xml")
    result.assert_outcomes(failed=2, passed=1)
    result.stdout.fnmatch_lines([
        "ascend-accuracy configuration error: test_folded.py::test_folded_per_op: per_op entry "
        "'shape' names only ops never compared here (shape): folded at conversion: the converter "
        "computed them, the device never runs or dumps them; it would judge nothing, so remove it",
        "*ignore entry 'is_*' names only ops never compared here (is_one): folded at conversion*"])
    # one output of a folded op: the same reason (it said no device op matched, a trial)
    pytester.makepyfile(test_folded=FOLDED.replace('ignore=["is_*", ', 'ignore=['))
    slot = pytester.runpytest("-k", "folded_ignore")
    slot.stdout.fnmatch_lines(["*ignore entry 'shape:output:0' names only ops never compared here "
                               "(shape): folded at conversion*"])
    junit = (pytester.path / "j.xml").read_text()
    assert 'name="accuracy_coverage" value="1.0000"' in junit  # 3 of 6 golden ops are folded


def test_a_marker_applied_in_the_test_body_is_refused_not_ignored(pytester, models_dir):
    """``request.applymarker(accuracy(metric="rel_l2", threshold=0.02))`` in the body came after
    the settings were read: the check judged cosine >= 0.95 and passed (a user trial)."""
    pytester.makepyfile("""
        from pytest_ascend_accuracy import accuracy
        from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

        def test_late(request, ascend_model, golden_dump, check_accuracy):
            request.applymarker(accuracy(metric="rel_l2", threshold=0.02))
            m = "models/passing_mlp.onnx"
            check_accuracy(ascend_model(m).run(make_inputs(m)), golden_dump(m, make_inputs(m)))
    """)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["ascend-accuracy configuration error: *::test_late: an accuracy "
                                 "marker was applied after the test's setup (request.applymarker "
                                 "in the test body)*: put @accuracy(...) on the test*"])
