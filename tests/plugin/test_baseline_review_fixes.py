"""Per-operator baselines, from a review as a user: two in-memory models of one graph name
shared a baseline (each judged by the other's numbers), a baseline line edited to cosine NaN
switched its operator's check off silently, and the baseline messages printed absolute paths."""
import re
import shutil

TEST_MEM = '''
import numpy as np
from onnx import TensorProto, helper, numpy_helper
from pytest_ascend_accuracy import accuracy


def _model(c):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])
    w = numpy_helper.from_array((np.eye(16) * 0.5).astype(np.float32), "w")
    cst = numpy_helper.from_array(np.full((1, 16), c, np.float32), "c")
    nodes = [helper.make_node("Add", ["x", "c"], ["a"], name="add_c"),
             helper.make_node("Sub", ["a", "c"], ["s"], name="sub_c"),
             helper.make_node("MatMul", ["s", "w"], ["y"], name="mm")]
    model = helper.make_model(helper.make_graph(nodes, "main_graph", [x], [y], [w, cst]),
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


SMALL, BIG = _model(30.0), _model(300.0)


@accuracy(threshold=0.3, max_drop=0.002)
def test_small(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(SMALL, seed=0)
    check_accuracy(ascend_model(SMALL).run(inputs), golden_dump(SMALL, inputs))


@accuracy(threshold=0.3, max_drop=0.002)
def test_big(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(BIG, seed=0)
    check_accuracy(ascend_model(BIG).run(inputs), golden_dump(BIG, inputs))
'''


def _baselines(pytester):
    return sorted(p.relative_to(pytester.path).as_posix()
                  for p in (pytester.path / "accuracy-baselines").rglob("*.yaml"))


def test_in_memory_models_of_one_graph_name_keep_their_own_baselines(pytester):
    pytester.makepyfile(test_mem=TEST_MEM)
    first = pytester.runpytest("-p", "no:cacheprovider")
    first.assert_outcomes(failed=2)  # both baselines missing: written
    files = _baselines(pytester)
    assert len(files) == 2 and all(re.fullmatch(
        r"accuracy-baselines/main_graph-[0-9a-f]{8}/default\.yaml", f) for f in files), files
    # messages spell the file as pytest's paths are spelled: relative to where it ran
    first.stdout.fnmatch_lines(["accuracy baseline accuracy-baselines/main_graph-*/default.yaml "
                                "did not exist: wrote it from this run*"])
    assert str(pytester.path / "accuracy-baselines") not in first.stdout.str()
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)  # not cross-judged


def test_a_baseline_at_the_graph_name_place_is_used_only_when_it_is_this_models(pytester):
    """Where such baselines were written before (the graph name alone) a file is read, and
    the command moving it given, only when it records this model's sha256."""
    pytester.makepyfile(test_mem=TEST_MEM)
    pytester.runpytest("-p", "no:cacheprovider", "-k", "small")
    (small,) = (pytester.path / f for f in _baselines(pytester))
    old = pytester.path / "accuracy-baselines" / "main_graph"
    old.mkdir()
    shutil.move(str(small), old / "default.yaml")
    small.parent.rmdir()
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)  # small: its old file; big: none of its own
    result.stdout.fnmatch_lines([
        "*MovedFileWarning: the accuracy baselines folder accuracy-baselines/main_graph was "
        "found at its old location only; it belongs at accuracy-baselines/main_graph-* "
        "(baselines of in-memory models are now keyed by graph name and test)*"])
    result.stdout.fnmatch_lines(["FAILED test_mem.py::test_big*baseline missing*"])


def test_a_baseline_value_of_nan_is_said_not_silently_unjudged(pytester):
    pytester.makepyfile(test_mem=TEST_MEM)
    pytester.runpytest("-p", "no:cacheprovider", "-k", "small")
    (path,) = (pytester.path / f for f in _baselines(pytester))
    text = path.read_text()
    edited = re.sub(r"(cosine: )[0-9.]+", r"\1.nan", text, count=1)
    assert edited != text
    path.write_text(edited)
    warned = pytester.runpytest("-p", "no:cacheprovider", "-k", "small")
    warned.assert_outcomes(passed=1)
    warned.stdout.fnmatch_lines(["*BaselineGapWarning: accuracy-baselines/main_graph-*/"
                                 "default.yaml: 1 operator line compared now holds no baseline "
                                 "value to be judged against (cosine NaN, or not compared, when "
                                 "recorded): * --accuracy-regen-all records their values"])
    pytester.runpytest("-p", "no:cacheprovider", "-k", "small",
                       "--accuracy-regen-all").assert_outcomes(passed=1)  # the advice, pasted
    again = pytester.runpytest("-p", "no:cacheprovider", "-k", "small")
    again.assert_outcomes(passed=1)
    assert "BaselineGapWarning" not in again.stdout.str()


UNDECODABLE = '''
import os
import shutil
from pytest_ascend_accuracy import accuracy

M = os.fsdecode(b"models/m\\xff.onnx")  # a file name that is not UTF-8
shutil.copyfile("models/passing_mlp.onnx", M)


@accuracy(threshold=0.9, max_drop=0.002)
def test_m(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, seed=0)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
'''


def test_a_model_file_whose_name_is_not_utf8_gets_its_baseline(pytester, models_dir):
    """The name reached the header as a lone surrogate: libyaml refused to read it back, so no
    baseline was ever written and every run, the printed --accuracy-regen too, said "baseline
    unreadable ... (--accuracy-regen rewrites it)" of a file that did not exist (a review)."""
    pytester.makepyfile(test_m=UNDECODABLE)
    first = pytester.runpytest("-p", "no:cacheprovider")
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(["*baseline missing*"])
    assert "unreadable" not in first.stdout.str()
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    written = next((pytester.path / "accuracy-baselines" / "models").glob("*/default.yaml"))
    assert 'model: "models/m\\\\udcff"' in written.read_text(encoding="utf-8")


def test_the_reports_of_a_model_whose_name_is_not_utf8_are_written(pytester, models_dir):
    """--accuracy-report failed a passing check with UnicodeEncodeError writing report.html
    (the title holds the model's name, m\\udcff; a review): reports write such text as
    backslash escapes."""
    pytester.makepyfile(test_m=UNDECODABLE.replace("max_drop=0.002", "max_drop=None"))
    result = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep")
    result.assert_outcomes(passed=1)
    html = next((pytester.path / "rep").rglob("report.html")).read_text(encoding="utf-8")
    assert "m\\udcff" in html
    assert next((pytester.path / "rep").rglob("compare.csv")).read_text(encoding="utf-8")
