"""``PROBLEM_ADVICE`` (``report.failure_text``; ``hints.next_step``'s default), the plugin's
next step of a comparison where no tensor was compared, applied as printed (audit H325:
printed, never applied by a test): a device dump converted to .npy by msaccucmp (its files
name the fused op only, ``fc_MatMulrelu``) against the golden of the ONNX ops it fused.
``load_dump(DIR, om_json="model.json")`` (DIR filled in, the om json under the name printed)
compares the op, and the check passes; passed to check_accuracy as it says, in a pytest test,
the test passes.

It was one of two ``PROBLEM_ADVICE`` (the plugin's own, and ``report.hints``', which reached no
user, with ``--om-json`` and ``mapping=`` / ``--mapping`` spellings check_accuracy has not); the
advice the command line and ``assert_accuracy`` print: tests/test_failure_text_advice_pasted.py
(``dumped`` writes its dumps too)."""
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import pytest_ascend_accuracy as api
from pytest_ascend_accuracy.report.failure_text import PROBLEM_ADVICE
from pytest_ascend_accuracy.report.hints import PROBLEM, next_step

pytest.importorskip("onnxruntime")


def _fused_model(path: Path, tail: bool = False) -> Path:
    """MatMul -> Add -> Relu, which the conversion fuses into one op ``fc/MatMulrelu``; with
    ``tail``, a Sigmoid ``sig`` after it, which it does not fuse."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    r = np.random.default_rng(0)
    inits = [numpy_helper.from_array(r.standard_normal((16, 8)).astype(np.float32), "w"),
             numpy_helper.from_array(r.standard_normal(8).astype(np.float32), "b")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="fc/MatMul"),
             helper.make_node("Add", ["m", "b"], ["a"], name="fc/Add"),
             helper.make_node("Relu", ["a"], ["r" if tail else "y"], name="relu")]
    if tail:
        nodes.append(helper.make_node("Sigmoid", ["r"], ["y"], name="sig"))
    graph = helper.make_graph(
        nodes, "fused", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def dumped(folder: Path, tail: bool = False) -> Path:
    """Writes into ``folder`` the model's device dump converted to .npy as ``npy`` (as
    ``msaccucmp convert -f ND`` writes it: no header, no origin), its stored golden as
    ``golden`` and the om json as ``model.json``; returns ``folder``. ``tail``: the model
    with ``sig`` after the fused op, which compares by name alone."""
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.golden.stored import store_golden
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    model = _fused_model(folder / "fused.onnx", tail)
    cache = Cache(folder / "cache")
    backend = EmulatorBackend(cache)
    converted = backend.convert(model)
    dump = backend.run(converted, make_inputs(model), dump_dir=folder / "dump")
    shutil.copy(converted.om_json, folder / "model.json")
    (folder / "npy").mkdir()
    for op in dump.ops:
        array = np.asarray(op.outputs[0].load())
        shape = "x".join(map(str, array.shape))
        np.save(folder / "npy" / f"{Path(op.outputs[0].source).name}.output.0.{shape}.npy",
                array)
    store_golden(folder / "golden", golden_dump(model, make_inputs(model), cache=cache))
    return folder


@pytest.fixture
def unpaired(tmp_path, monkeypatch):
    """(the converted .npy dump folder, the stored golden), cwd holding the om json as
    ``model.json``."""
    monkeypatch.chdir(dumped(tmp_path))
    return "npy", "golden"


def _advice(actual, golden) -> str:
    verdict = api.compare_dumps(actual, golden).judge(0.99)
    assert verdict.problem.startswith("no tensor was compared"), verdict.problem
    hint = next_step(verdict)
    assert hint.kind == PROBLEM
    return hint.advice


def test_the_load_dump_call_pasted_reads_the_fused_ops_names(unpaired):
    actual, golden = unpaired
    advice = _advice(api.load_dump(actual), golden)
    call = re.search(r"read the device dump with (load_dump\(DIR, .*?\)) ", advice).group(1)
    dump = eval(call.replace("DIR", repr(actual)), {"load_dump": api.load_dump})
    assert api.compare_dumps(dump, golden).judge(0.99).passed


#: a pytest test checking the dump against the golden, as the advice has it pasted (``{actual}``)
CHECKED = '''
{imports}


def test_fused(check_accuracy):
    check_accuracy({actual}, "golden")
'''


def test_the_plugin_advice_pasted_into_the_test_passes(pytester):
    dumped(pytester.path)
    pytester.makepyfile(test_fused=CHECKED.format(imports="", actual='"npy"'))
    failed = pytester.runpytest("-q", "-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    out = failed.stdout.str()
    said = re.search(r"read the device dump with (load_dump\(DIR, .*?\)) \(the om json of atc "
                     r"--mode=1; (from pytest_ascend_accuracy import load_dump)\) so fused ops "
                     r"find their original names, and pass that to check_accuracy", out)
    assert said, out
    assert PROBLEM_ADVICE in " ".join(out.split())  # the one constant, as the plugin prints it
    call, imports = said.groups()
    pytester.makepyfile(test_fused=CHECKED.format(imports=imports,
                                                  actual=call.replace("DIR", '"npy"')))
    pytester.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)
