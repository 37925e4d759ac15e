"""Review of issue 12 ("advice that works"): hints and refusals found wrong by trying them as a
user would. Each test failed before its fix.

- the AIPP step-5 pointer was pasted over the first line of a mode hint in the terminal only
  (its mode lines stayed under it; HTML and JUnit kept the mode hint; YAML items had none);
- a failure whose only failures are ops without a golden tensor suggested fusion/buffer modes,
  not the ``ignore=`` its headline names;
- the "nothing matched" hint of a pytest test named ``mapping=`` / ``--mapping``, which neither
  ``check_accuracy`` nor pytest has;
- ``atc_convert(..., op_select_implmode=...)`` and ``Mode(extra=...)`` were accepted and ignored
  by the emulator;
- ``diagnose`` in a passing non-default mode said "the default conversion" passes; ``budget=0``
  was a bare ValueError (a traceback in the CLI); an unknown metric was refused only after the
  first conversion.
"""
import html
import re
import xml.etree.ElementTree as ET

import pytest

from pytest_ascend_accuracy.testing import models as tiny_models

AIPP_TEST = '''
import numpy as np
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb

RAW = random_rgb(2, 16, 16, seed=3)


def test_swapped(ascend_model, golden_dump, check_accuracy):
    om = ascend_model("models/net.onnx", aipp="swapped.cfg")
    golden = golden_dump("models/net.onnx", {"x": np.stack([imagenet_reference(RAW[0])])})
    check_accuracy(om.run({"x": RAW[:1]}), golden)
'''


def _junit_hint(pytester):
    return {p.get("name"): p.get("value")
            for p in ET.parse(str(pytester.path / "junit.xml")).iter("property")}["accuracy_hint"]


def test_aipp_pointer_is_the_one_hint_of_terminal_html_and_junit(pytester):
    import onnx

    from pytest_ascend_accuracy.aipp.samples import imagenet_aipp

    (pytester.path / "models").mkdir()
    onnx.save(tiny_models.conv_bn_relu(), str(pytester.path / "models" / "net.onnx"))
    good = imagenet_aipp(src_hw=(16, 16))
    pytester.makefile(".cfg", swapped=good.replace(
        "input_format: RGB888_U8", "input_format: RGB888_U8\n    rbuv_swap_switch: true"))
    pytester.makepyfile(test_aipp=AIPP_TEST)
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep",
                             "--junitxml=junit.xml", "-o", "junit_family=xunit1")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    block = text[text.index("next step:"):].split("\n\n")[0]
    assert block.startswith("next step: the first operator after AIPP (conv1relu1) already fails")
    assert "modes=[" not in block and "YAML: modes" not in block  # no other hint's lines under it
    hint = block[len("next step: "):]
    assert _junit_hint(pytester) == hint
    page = next((pytester.path / "rep").rglob("report.html")).read_text(encoding="utf-8")
    assert html.escape(hint) in page and "no float16 overflow seen" not in page


NOT_COMPARED_TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy, DumpSet, {imports}
from pytest_ascend_accuracy.dump.model import OpRecord


def dumps():
    x = DumpSet.from_arrays({{"x": [np.ones(4)]}}).ops[0]
    ghost = DumpSet.from_arrays({{"enc/blk.0:ghost": [np.ones(4)]}}).ops[0]
    actual = DumpSet([OpRecord(name="x", outputs=x.outputs, order=0),
                      OpRecord(name="enc/blk.0:ghost", outputs=ghost.outputs, order=1)])
    return actual, DumpSet.from_arrays({{"x": [np.ones(4)]}})


{marker}
def test_ghost(check_accuracy):
    check_accuracy(*dumps())
'''


def test_not_compared_hint_is_the_ignore_it_names_and_pasted_it_passes(pytester):
    pytester.makepyfile(test_ghost=NOT_COMPARED_TEST.format(imports="FUSION_OFF", marker=""))
    run = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=junit.xml",
                             "-o", "junit_family=xunit1")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    line = next(ln for ln in text.splitlines() if ln.startswith("next step:"))
    assert "modes=" not in line and "no float16 overflow" not in line
    marker = re.search(r"(@accuracy\(ignore=\[.*?\]\))", line).group(1)
    assert marker == "@accuracy(ignore=['enc/blk.0:ghost'])"
    assert 'YAML: ignore: ["enc/blk.0:ghost"]' in line
    assert marker in _junit_hint(pytester)
    pytester.makepyfile(test_ghost=NOT_COMPARED_TEST.format(imports="FUSION_OFF", marker=marker))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_nothing_matched_hint_names_what_a_pytest_test_can_pass(pytester):
    pytester.makepyfile(test_apart='''
import numpy as np
from pytest_ascend_accuracy import DumpSet, load_dump


def test_apart(check_accuracy):
    check_accuracy(DumpSet.from_arrays({"npu_a": [np.ones(3, np.float16)]}),
                   DumpSet.from_arrays({"b": [np.ones(3, np.float32)]}))
''')
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    line = next(ln for ln in run.stdout.str().splitlines() if ln.startswith("next step:"))
    assert "load_dump(DIR, om_json=" in line
    assert "mapping=" not in line and "--mapping" not in line and "--om-json" not in line


def test_unemulated_atc_options_are_refused_by_atc_convert_and_mode_extra(pytester, models_dir):
    pytester.makepyfile(test_opts='''
from pytest_ascend_accuracy import accuracy, Mode


def test_atc_convert_option(atc_convert):
    atc_convert("models/passing_mlp.onnx", op_select_implmode="high_precision")


def test_atc_convert_neutral_option(atc_convert):
    atc_convert("models/passing_mlp.onnx", log="error")


@accuracy(modes=[Mode(extra=(("op_select_implmode", "high_precision"),))])
def test_mode_extra(ascend_model):
    ascend_model("models/passing_mlp.onnx")
''')
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(passed=1, failed=2)
    run.stdout.fnmatch_lines([
        "*atc_convert: ATC option op_select_implmode=... is refused on every backend*",
        "*Mode(extra=...): ATC option op_select_implmode=... is refused on every backend*"])


def test_diagnose_names_the_passing_mode_and_refuses_bad_settings_first(tmp_path):
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.core.modes import FUSION_OFF
    from pytest_ascend_accuracy.errors import ConfigError
    from pytest_ascend_accuracy.triage.flow import diagnose

    model = tiny_models.passing_mlp()
    cache = Cache(tmp_path / "cache")
    d = diagnose(model, None, None, 0.95, cache=cache, mode=FUSION_OFF)
    assert d.verdict == "mode fusion_off already meets the threshold"
    with pytest.raises(ConfigError, match="budget: must allow at least one conversion"):
        diagnose(model, None, None, 0.95, cache=cache, budget=0)
    before = sorted(p.name for p in (tmp_path / "cache").rglob("*"))
    with pytest.raises(ConfigError, match="unknown metric 'cosin'"):
        diagnose(model, None, None, 0.95, cache=cache, metric="cosin", mode=FUSION_OFF)
    assert sorted(p.name for p in (tmp_path / "cache").rglob("*")) == before  # nothing converted


def test_optype_refusal_says_which_onnx_type_was_written(tmp_path):
    from pytest_ascend_accuracy.core.modes import keep_dtype
    from pytest_ascend_accuracy.errors import ConfigError
    from pytest_ascend_accuracy.graph.op_catalogue import check_mode

    with pytest.raises(ConfigError, match=r"'OpType::SoftmaxV2' \(ATC's type for ONNX Softmax\)"):
        check_mode(keep_dtype(["OpType::Softmax"]), tiny_models.passing_mlp(), "keep_dtype")


def test_yaml_setup_mistake_about_input_shape_gives_the_yaml_spelling(pytester, models_dir):
    """The dynamic-dims advice of a YAML item is spelled as its entry's key, a value to paste
    (the Python spelling, input_shape={'x': (1, 4)}, is not YAML)."""
    import onnx

    onnx.save(tiny_models.unnamed_model(), str(models_dir / "unnamed_model.onnx"))
    pytester.path.joinpath("accuracy_dyn.yaml").write_text(
        "models:\n  - name: dyn\n    model: models/unnamed_model.onnx\n")
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines(["ascend-accuracy configuration error: accuracy_dyn.yaml: dyn: "
                              "input 'x' dimension 0 ('N') is dynamic*e.g. with 1 for each "
                              "dynamic dimension: add to the entry: input_shape: {x: [[]1, 4[]]}"])
    assert "input_shape={" not in run.stdout.str()


def test_optype_table_follows_the_cann_parser_registrations():
    """CANN's ONNX parser (ops/built-in/framework/onnx_plugin/similar_opp_plugins.cc) registers
    Where as SelectV2 and the logical/comparison ops under their Ascend names; an OpType:: entry
    spelled with the ONNX name (or the old 'Select') matched nothing on a device."""
    from pytest_ascend_accuracy.core.ascend_optypes import ascend_type, to_ascend_entry

    assert [ascend_type(t) for t in ("Where", "Not", "And", "Or", "LessOrEqual", "GreaterOrEqual",
                                     "IsNaN", "ScatterND")] == [
        "SelectV2", "LogicalNot", "LogicalAnd", "LogicalOr", "LessEqual", "GreaterEqual",
        "IsNan", "TensorScatterUpdate"]
    assert to_ascend_entry("OpType::Where") == "OpType::SelectV2"
