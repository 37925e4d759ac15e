"""``ascend-accuracy diagnose`` of x * 1e5 -> MatMul -> Relu -> * 1e-5 names keep_dtype of the
MatMul (the Cube op whose output leaves float16), and the file it writes, applied verbatim,
passes, on the emulator and on the fake toolkit; keeping only the Relu fails. A trial of the
fix files found keep_dtype.cfg holding scale_up, relu, scale_down and no MatMul: the emulator
and the fake ran the UB-fused MatMul+Relu in float32 whole when its Relu alone was kept, where
ATC judges each node before UBFusion and leaves the MatMul float16 (docs/formats.md,
"keep_dtype and fusion")."""
import ast
import re
from pathlib import Path

import onnx

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.testing import fake_atc
from pytest_ascend_accuracy.testing.fake_om import read_fake_om

from emulator.test_keep_dtype_fused_members import bigval

TEST = '''
from pytest_ascend_accuracy import accuracy, {imports}
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95, modes=[{expr}])
def test_model(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/bigval.onnx")
    actual = ascend_model("models/bigval.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/bigval.onnx", inputs))
'''


def _paste(pytester, expr, imports, **outcome):
    pytester.makepyfile(test_model=TEST.format(expr=expr, imports=imports))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(**outcome)


def _atc(args, output):
    argv = ["--model=models/bigval.onnx", "--framework=5", f"--output={output}",
            "--soc_version=Ascend310P3", *args]
    assert fake_atc.main(argv) == 0
    om = read_fake_om(f"{output}.om")
    return {op.members: om.storage_dtype(op) for op in om.plan()}


def test_the_diagnosis_keeps_the_matmul_and_its_fix_passes_on_the_emulator_and_the_fake(
        pytester, capsys, monkeypatch):
    monkeypatch.delenv("FAKE_ATC_CALLS", raising=False)
    (pytester.path / "models").mkdir()
    onnx.save(bigval(), str(pytester.path / "models" / "bigval.onnx"))
    assert cli.main(["diagnose", "models/bigval.onnx", "--threshold", "0.95", "--out", "fix",
                     "--cache-dir", ".ascend-accuracy"]) == 0
    out = capsys.readouterr().out
    kept = (pytester.path / "fix" / "keep_dtype.cfg").read_text().split()
    assert "matmul/big" in kept, out
    # the fake runtime stores each op's values in its om's dtype: an op holding the MatMul
    # stored in float16 turns its 1e6 outputs Inf. The printed ATC arguments, verbatim:
    stored = _atc(Path("fix/atc_args.txt").read_text().split(), "fixed")
    assert all(dtype == "float32" for members, dtype in stored.items()
               if "matmul/big" in members or "relu" in members), stored
    # the Relu alone leaves the MatMul float16: not fused with it, as ATC's UBFusion
    Path("relu.cfg").write_text("relu\n")
    stored = _atc(["--precision_mode=force_fp16", "--keep_dtype=relu.cfg"], "relu_only")
    assert stored[("matmul/big",)] == "float16" and stored[("relu",)] == "float32", stored
    # the emulator: the fix pasted into a test passes; the Relu alone fails
    fix = re.search(r"^  in a test: modes=\[keep_dtype\((\[.*\])\)\] \(from "
                    r"pytest_ascend_accuracy import (.*)\); in a YAML suite", out, re.M)
    assert fix is not None and sorted(ast.literal_eval(fix.group(1))) == sorted(kept), out
    _paste(pytester, f"keep_dtype({kept!r})", fix.group(2), passed=1)
    _paste(pytester, "keep_dtype(['relu'])", fix.group(2), failed=1)
