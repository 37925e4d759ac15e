"""Stored goldens through the plugin: one of other inputs or another model is refused before
comparing (Python test and YAML suite), --accuracy-regen rewrites it and the next run passes; a
rewrite keeps the op inputs of a golden written with --accuracy-store-inputs; a tensor re-saved
as float16 is an error naming the file."""
import numpy as np

TEST = """
from pathlib import Path
from pytest_ascend_accuracy import accuracy

@accuracy(threshold=0.99)
def test_stored(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    seed = int(Path(__file__).with_name("seed.txt").read_text())
    model = Path(__file__).with_name("model.txt").read_text().strip()
    inputs = accuracy_inputs(model, seed=seed)
    golden = golden_dump(model, inputs, path="golden/mlp")
    check_accuracy(ascend_model(model).run(inputs), golden)
"""


def project(pytester, seed=0, model="models/passing_mlp.onnx"):
    pytester.makepyfile(test_stored=TEST)
    (pytester.path / "seed.txt").write_text(str(seed))
    (pytester.path / "model.txt").write_text(model)


def test_other_inputs_are_refused_and_regen_rewrites(pytester, models_dir):
    project(pytester, seed=0)
    pytester.runpytest().assert_outcomes(failed=1)  # written (missing)
    pytester.runpytest().assert_outcomes(passed=1)
    (pytester.path / "seed.txt").write_text("1")
    other = pytester.runpytest()
    other.assert_outcomes(failed=1)
    other.stdout.fnmatch_lines([
        "*golden/mlp: this stored golden was written from another model or other inputs*",
        "  inputs: written from inputs with digest *, this test's inputs have * (another seed, "
        "inputs file or shape, or seeded inputs this version draws differently: an integer "
        "*mask* input, an index into a table of fewer than 10 rows)",
        "Fix: run the test again with --accuracy-regen to rewrite it from models/passing_mlp.onnx*",
    ])
    other.stdout.no_fnmatch_line("*accuracy FAILED*")  # nothing compared, no operator blamed
    # the ascend-accuracy section names the test, though no check ran (it had said nothing)
    other.stdout.fnmatch_lines([
        "no accuracy check ran: 1 @accuracy test failed without a check verdict",
        "FAILED test_stored.py::test_stored: no check verdict: ascend-accuracy configuration "
        "error: golden/mlp: this stored golden was written from another model or other inputs*"])
    regen = pytester.runpytest("--accuracy-regen")
    regen.assert_outcomes(failed=1)
    regen.stdout.fnmatch_lines(["*rewrote it from models/passing_mlp.onnx and this test's inputs*",
                                "  golden/mlp: rewritten (--accuracy-regen: written from another "
                                "model or other inputs)"])
    pytester.runpytest().assert_outcomes(passed=1)


def test_another_model_is_refused(pytester, models_dir):
    project(pytester)
    pytester.runpytest()
    (pytester.path / "model.txt").write_text("models/overflow.onnx")
    other = pytester.runpytest()
    other.assert_outcomes(failed=1)
    other.stdout.fnmatch_lines(["  model: written from models/passing_mlp.onnx (sha256 *), this "
                                "test's model is models/overflow.onnx (sha256 *)"])
    other.stdout.no_fnmatch_line("*accuracy FAILED*")


def test_yaml_suite_golden_of_other_inputs_is_refused(pytester, models_dir):
    suite = """models:
  - model: models/passing_mlp.onnx
    golden: golden/mlp
    inputs: {{seed: {seed}}}
"""
    pytester.makefile(".yaml", accuracy_mlp=suite.format(seed=0))
    pytester.runpytest().assert_outcomes(failed=1)
    pytester.runpytest().assert_outcomes(passed=1)
    pytester.makefile(".yaml", accuracy_mlp=suite.format(seed=5))
    pytester.makefile(".yaml", accuracy_ok="models:\n  - model: models/passing_mlp.onnx\n")
    other = pytester.runpytest()
    other.assert_outcomes(failed=1, passed=1)
    other.stdout.fnmatch_lines(["*golden/mlp: this stored golden was written from another*",
                                "  inputs: written from inputs with digest *"])
    other.stdout.fnmatch_lines([
        "1 accuracy check: 1 passed, 0 failed (1 model x 1 mode); 1 @accuracy test failed "
        "without a check verdict", "*",
        "FAILED accuracy_mlp.yaml::passing_mlp[[]default[]]: no check verdict: "
        "ascend-accuracy configuration error: golden/mlp: this stored golden*"])
    pytester.runpytest("--accuracy-regen").assert_outcomes(failed=1, passed=1)
    pytester.runpytest().assert_outcomes(passed=2)


def test_regen_keeps_the_inputs_of_a_golden_stored_with_them(pytester, models_dir):
    project(pytester)
    pytester.runpytest("--accuracy-store-inputs").assert_outcomes(failed=1)  # written, with inputs
    golden = pytester.path / "golden" / "mlp"
    files = sorted(p.name for p in golden.iterdir())
    assert any(n.startswith("input_") for n in files)
    relu = next(golden.glob("relu2.0.*.npy"))
    np.save(relu, -np.load(relu))  # other values than written: refused, rewritten under regen
    regen = pytester.runpytest("--accuracy-regen")
    regen.assert_outcomes(failed=1)
    regen.stdout.fnmatch_lines([f"*golden/mlp: tensor files changed since the golden was written "
                                f"*: {relu.name}; rewrote it (--accuracy-regen)*",
                                "  golden/mlp: rewritten (--accuracy-regen: tensor files changed "
                                "since it was written), op inputs kept"])  # (as they are)
    assert sorted(p.name for p in golden.iterdir()) == files
    pytester.runpytest().assert_outcomes(passed=1)
    relu.write_bytes(b"not a tensor")  # unreadable: rewritten, and it says the inputs stay
    regen = pytester.runpytest("--accuracy-regen")
    regen.assert_outcomes(failed=1)
    regen.stdout.fnmatch_lines(["  golden/mlp: rewritten (--accuracy-regen: a file of it could "
                                "not be read), op inputs kept"])
    assert sorted(p.name for p in golden.iterdir()) == files


def test_a_golden_tensor_resaved_as_float16_is_an_error_naming_it(pytester, models_dir):
    project(pytester)
    pytester.runpytest()
    relu = next((pytester.path / "golden" / "mlp").glob("relu2.0.*.npy"))
    np.save(relu, np.load(relu).astype(np.float16))
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*golden/mlp: tensor files re-saved in another dtype*{relu.name} "
                                 f"(float16, written as float32)*"])
    result.stdout.no_fnmatch_line("*accuracy FAILED*")
    # the advice's last fix, pasted (H99: it said --accuracy-regen-all, and the README grouped it
    # with --accuracy-regen, which left the float16 file in place: refused again)
    line = next(s for s in result.outlines if "re-saved in another dtype" in s)
    assert line.endswith("or rewrite the golden: run the test again with --accuracy-regen")
    regen = pytester.runpytest("--accuracy-regen")
    regen.assert_outcomes(failed=1)
    regen.stdout.fnmatch_lines(["  golden/mlp: rewritten (--accuracy-regen: tensor files re-saved "
                                "in another dtype)*"])
    assert np.load(relu).dtype == np.float32
    pytester.runpytest().assert_outcomes(passed=1)


def test_a_tensor_file_gone_from_a_recorded_golden_is_named_and_regen_restores_it(
        pytester, models_dir, monkeypatch):
    """A file golden.json lists, deleted: its op went "not compared" and the only advice was
    to ignore it (a review); now the file is named and --accuracy-regen rewrites the golden."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(pytester.path.parent))  # outside any repo
    project(pytester, seed=0)
    pytester.runpytest().assert_outcomes(failed=1)  # written (missing)
    gone = sorted((pytester.path / "golden" / "mlp").glob("relu1.*.npy"))[0]
    gone.unlink()
    broken = pytester.runpytest()
    broken.assert_outcomes(failed=1)
    broken.stdout.fnmatch_lines([f"*golden/mlp: tensor files its golden.json lists are missing: "
                                 f"{gone.name}. Restore them from a copy of the golden as it "
                                 f"was written (no git command is offered: the golden is not "
                                 f"in a git work tree (git: fatal: not a git repository*), or "
                                 f"run the test again with --accuracy-regen to rewrite the "
                                 f"golden*"])
    broken.stdout.no_fnmatch_line("*ignore=*")
    pytester.runpytest("--accuracy-regen").assert_outcomes(failed=1)  # rewritten, fails once
    assert gone.is_file()
    pytester.runpytest().assert_outcomes(passed=1)


def test_a_refused_stored_golden_says_so_in_junit(pytester, models_dir):
    """A marked test that failed before its check had no accuracy_* JUnit property, though the
    terminal listed it (a CI trial): a dashboard reading accuracy_passed saw nothing."""
    import xml.etree.ElementTree as ET

    project(pytester, seed=0)
    pytester.runpytest()  # written (missing)
    (pytester.path / "seed.txt").write_text("1")
    pytester.runpytest("--junitxml=j.xml").assert_outcomes(failed=1)
    (case,) = ET.parse(pytester.path / "j.xml").getroot().iter("testcase")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["accuracy_passed"] == "false"
    assert props["accuracy_first_failing_reason"].startswith(
        "no check verdict: ascend-accuracy configuration error: golden/mlp: this stored golden")
