"""The stored-golden cycle: missing -> fails and writes; passes; model changed -> refused
(golden.json names another model); --accuracy-regen -> rewrites (still fails); passes;
--accuracy-regen-all rewrites (passes)."""
import hashlib

import onnx
from onnx import numpy_helper

from conftest import STORED_GOLDEN_TEST as TEST


def digest(directory):
    h = hashlib.sha256()
    for p in sorted(directory.iterdir()):
        h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()


def change_model(path):
    model = onnx.load(str(path))
    for k, init in enumerate(model.graph.initializer):
        if init.name == "fc2.weight":
            model.graph.initializer[k].CopyFrom(numpy_helper.from_array(-numpy_helper.to_array(init),
                                                                        init.name))
    onnx.save(model, str(path))


def test_regen_cycle(pytester, models_dir):
    pytester.makepyfile(test_stored=TEST)
    golden = pytester.path / "golden" / "mlp"

    missing = pytester.runpytest()
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines([
        "golden file golden/mlp did not exist: wrote it from passing_mlp (onnxruntime fp32).",
        "Check it in and run the test again to compare against it.",
        "1 golden file written:",
        "  golden/mlp: written (missing)",
    ])
    assert golden.is_dir() and any(golden.glob("relu1.0.*.npy"))
    first = digest(golden)

    pytester.runpytest().assert_outcomes(passed=1)
    passing_regen = pytester.runpytest("--accuracy-regen")  # passing tests are never rewritten
    passing_regen.assert_outcomes(passed=1)
    passing_regen.stdout.no_fnmatch_line("*golden file* written*")
    assert digest(golden) == first

    change_model(models_dir / "passing_mlp.onnx")
    changed = pytester.runpytest()
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(["*golden/mlp: this stored golden was written from another model*",
                                  "  model: written from models/passing_mlp.onnx *"])
    assert digest(golden) == first  # a failure alone never rewrites

    regen = pytester.runpytest("--accuracy-regen")
    regen.assert_outcomes(failed=1)  # the test still fails this time
    regen.stdout.fnmatch_lines([
        "*rewrote it from models/passing_mlp.onnx and this test's inputs (--accuracy-regen); the "
        "test fails this time, run it again to compare against the new golden",
        "1 golden file written:",
        "  golden/mlp: rewritten (--accuracy-regen: written from another model or other inputs)",
    ])
    second = digest(golden)
    assert second != first

    pytester.runpytest().assert_outcomes(passed=1)
    assert digest(golden) == second

    regen_all = pytester.runpytest("--accuracy-regen-all")
    regen_all.assert_outcomes(passed=1)
    regen_all.stdout.fnmatch_lines([  # same bytes: left untouched, and said so (a CI trial)
        "1 golden file regenerated with the bytes already there (not written):",
        "  golden/mlp: unchanged (--accuracy-regen-all: regenerated the same bytes, left as it "
        "was)"])
    regen_all.stdout.no_fnmatch_line("*rewritten*")
    regen_all.stdout.no_fnmatch_line("*golden file written*")
    assert digest(golden) == second  # same model, same golden: identical files
    assert not [p for p in golden.parent.iterdir() if p.name.startswith(".")]


def test_regen_all_writes_missing_and_passes(pytester, models_dir):
    pytester.makepyfile(test_stored=TEST)
    result = pytester.runpytest("--accuracy-regen-all")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["  golden/mlp: written (missing)"])
