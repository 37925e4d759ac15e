"""Advice the plugin prints, pasted as printed (audit H325: printed, never applied by a test).

* ``--accuracy-diagnose`` of a failure that also has an op not compared (its golden lacks the
  op's output): ``fix: modes=[...] (YAML: modes: [...])`` with ``with it: ignore=[...] in the
  test's @accuracy(...) (YAML: ignore: [...])``; both pasted, the test passes, in a Python test
  and in a YAML suite (the fix alone still fails: the ignore is needed, as it says).
* ``--accuracy-backend=ascend`` on a machine without the Ascend runtime: ``Drop
  --accuracy-backend=ascend (or pass --accuracy-backend=emulator)``, both ways.
* an emulator cache entry whose ``tensor_info.json`` is damaged: ``delete the cache entry DIR
  to rebuild it``, done with the DIR printed.
Each text is taken from the output, never retyped."""
import re
import shutil

import onnx
import pytest

from pytest_ascend_accuracy.testing import models as tiny_models

pytest.importorskip("onnxruntime")

#: the overflow model checked against a golden lacking ``to_channels`` (a golden of another
#: export, say): norm overflows float16, to_channels is not compared
ASIDE_TEST = '''
from pytest_ascend_accuracy import accuracy
{imports}
from pytest_ascend_accuracy.dump.model import DumpSet


@accuracy(threshold=0.95{marker})
def test_aside(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/overflow.onnx", seed=0)
    full = golden_dump("models/overflow.onnx", inputs)
    golden = DumpSet([op for op in full.ops if op.name != "to_channels"], kind=full.kind,
                     root=full.root, model_name=full.model_name, meta=dict(full.meta))
    om = ascend_model("models/overflow.onnx")
    check_accuracy(om.run(inputs, dump=True), golden)
'''

#: (the keywords are matched loosely: a misspelled one fails where it is pasted)
FIX = re.compile(r"^  fix: (\w+=\[.*\])  \(YAML: (\w+: \[.*\]); from pytest_ascend_accuracy "
                 r"(import [\w, ]+)\)$", re.M)
WITH_IT = re.compile(r"^  with it: (\w+=\[.*\]) in the test's @accuracy\(\.\.\.\) \(YAML: "
                     r"(\w+: \[.*\])\), for the ops not compared set aside above$", re.M)


def _advice(out: str):
    """((python modes, yaml modes, import clause), (python ignore, yaml ignore)) printed."""
    fix, with_it = FIX.search(out), WITH_IT.search(out)
    assert fix and with_it, out
    return fix.groups(), with_it.groups()


@pytest.fixture
def overflow_project(pytester):
    (pytester.path / "models").mkdir()
    onnx.save(tiny_models.overflow_model(), str(pytester.path / "models" / "overflow.onnx"))
    return pytester


def test_the_diagnosed_fix_and_ignore_pasted_in_a_python_test_pass(overflow_project):
    p = overflow_project
    p.makepyfile(test_aside=ASIDE_TEST.format(imports="", marker=""))
    failed = p.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-diagnose")
    failed.assert_outcomes(failed=1)
    (modes, _, imports), (ignore, _) = _advice(failed.stdout.str())
    assert "to_channels" in ignore and "norm" in modes  # what this model's failure is about
    fixed = ASIDE_TEST.format(imports=f"from pytest_ascend_accuracy {imports}",
                              marker=f", {modes}, {ignore}")
    p.makepyfile(test_aside=fixed)
    p.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    # the ignore is needed as it says: the fix alone still fails on the op not compared
    p.makepyfile(test_aside=ASIDE_TEST.format(imports=f"from pytest_ascend_accuracy {imports}",
                                              marker=f", {modes}"))
    alone = p.runpytest("-q", "-p", "no:cacheprovider")
    alone.assert_outcomes(failed=1)
    alone.stdout.fnmatch_lines(["*1 op not compared (to_channels*"])


#: stores the overflow model's golden without ``to_channels`` and the inputs it ran on, as a
#: YAML suite reads them (``golden:``, ``inputs:``)
STORE_GOLDEN = '''
import numpy as np
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.golden.stored import store_golden


def test_store(golden_dump, accuracy_inputs):
    inputs = accuracy_inputs("models/overflow.onnx", seed=0)
    np.save("x.npy", inputs["x"])
    full = golden_dump("models/overflow.onnx", inputs)
    store_golden("golden/overflow", DumpSet([op for op in full.ops if op.name != "to_channels"],
                 kind=full.kind, root=full.root, model_name=full.model_name,
                 meta=dict(full.meta)))
'''

SUITE = """
defaults:
  threshold: 0.95
models:
  - model: models/overflow.onnx
    golden: golden/overflow
    inputs: {{x: x.npy}}
{extra}"""


def test_the_diagnosed_fix_and_ignore_pasted_in_a_yaml_suite_pass(overflow_project):
    p = overflow_project
    p.makepyfile(store_golden=STORE_GOLDEN)
    p.runpytest("-q", "-p", "no:cacheprovider", "store_golden.py").assert_outcomes(passed=1)
    (p.path / "store_golden.py").unlink()
    p.makefile(".yaml", accuracy_aside=SUITE.format(extra=""))
    failed = p.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-diagnose")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*1 op not compared (to_channels*"])
    (_, modes, _), (_, ignore) = _advice(failed.stdout.str())
    p.makefile(".yaml", accuracy_aside=SUITE.format(extra=f"    {modes}\n    {ignore}\n"))
    fixed = p.runpytest("-q", "-p", "no:cacheprovider", "-rA")
    fixed.assert_outcomes(passed=1)
    p.makefile(".yaml", accuracy_aside=SUITE.format(extra=f"    {modes}\n"))
    p.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(failed=1)  # ignore needed


MLP_TEST = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.99)
def test_mlp(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/passing_mlp.onnx")
    actual = ascend_model("models/passing_mlp.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/passing_mlp.onnx", inputs))
'''


@pytest.fixture
def mlp_project(pytester, models_dir):  # (conftest's models_dir saves passing_mlp.onnx)
    pytester.makepyfile(test_mlp=MLP_TEST)
    return pytester


def test_the_ascend_backend_without_its_runtime_advice_pasted_both_ways(mlp_project,
                                                                        monkeypatch):
    import sys

    monkeypatch.setenv("ASCEND_ACCURACY_RUNTIME", "acl")
    monkeypatch.delenv("ASCEND_TOOLKIT_HOME", raising=False)
    monkeypatch.setitem(sys.modules, "acl", None)  # no Ascend runtime on this machine
    args = ["-q", "-p", "no:cacheprovider", "--accuracy-backend=ascend"]
    refused = mlp_project.runpytest(*args)
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    said = re.search(r"\. Drop (\S+) \(or pass (\S+)\) to use the CPU emulator\.",
                     refused.stderr.str())
    assert said, refused.stderr.str()
    drop, instead = said.groups()
    dropped = mlp_project.runpytest(*[a for a in args if a != drop])
    dropped.assert_outcomes(passed=1)
    dropped.stdout.fnmatch_lines(["backend: emulator backend*"])
    replaced = mlp_project.runpytest(*[instead if a == drop else a for a in args])
    replaced.assert_outcomes(passed=1)
    replaced.stdout.fnmatch_lines(["backend: emulator backend*"])


def test_a_damaged_tensor_info_file_deleted_as_said_is_rebuilt(mlp_project):
    p = mlp_project
    args = ["-q", "-p", "no:cacheprovider", "-o", "ascend_accuracy_cache_dir=cache"]
    p.runpytest(*args).assert_outcomes(passed=1)
    infos = list((p.path / "cache").rglob("tensor_info.json"))
    assert len(infos) == 1, infos
    # an entry its builder wrote a bad file into (its manifest vouches for the bytes: the cache
    # takes it as intact; a file damaged later is found by the manifest and rebuilt unasked)
    from pytest_ascend_accuracy.core.cache import STAMP, _write_manifest

    infos[0].write_text('{"tensors": "not these"}')
    (infos[0].parent / STAMP).unlink(missing_ok=True)
    _write_manifest(infos[0].parent)
    damaged = p.runpytest(*args)
    damaged.assert_outcomes(failed=1)
    out = damaged.stdout.str()
    said = re.search(r"not a tensor_info file of the emulator \(.*?\); delete the cache entry "
                     r"(\S+) to rebuild it", out)
    assert said, out
    shutil.rmtree(said.group(1))  # the path as printed, from where pytest ran
    rebuilt = p.runpytest(*args, "-rA")
    rebuilt.assert_outcomes(passed=1)
    rebuilt.stdout.fnmatch_lines(["cache: * 1 miss*"])  # the conversion built again
    again = list((p.path / "cache").rglob("tensor_info.json"))
    assert again == infos and "not these" not in again[0].read_text()
