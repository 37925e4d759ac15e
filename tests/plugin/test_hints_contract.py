"""A hint is a tested contract: each kind the plugin prints is applied verbatim (parsed out of
the failure text, pasted into a new test file or YAML suite) and the verdict changes as promised.

Kinds (``report.hints``): ``keep_dtype`` (float16 range: keep ops in float32, or high
precision), ``modes`` (no overflow: compare fusion off / buffer reuse off), ``problem``.
"""
import html
import re
import xml.etree.ElementTree as ET

from conftest import NAME  # the block_model fixture's op name: dots, a slash and a colon
from pytest_ascend_accuracy.testing import models as tiny_models

FAILING = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95, modes=["fusion_off"])
def test_block(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/block.onnx")
    actual = ascend_model("models/block.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/block.onnx", inputs))
'''

PASTED = '''
from pytest_ascend_accuracy import accuracy, {imports}
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95, modes=[{expr}])
def test_block(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/block.onnx")
    actual = ascend_model("models/block.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/block.onnx", inputs))
'''

SUITE = '''
models:
  - name: block
    model: models/block.onnx
    threshold: 0.95
    modes: [{yaml}]
'''


def parse_hint(text: str):
    """(python mode expressions, YAML mode entries, import names) printed after ``next step:``."""
    block = text[text.index("next step:"):]
    block = block[:block.index("\n\n")] if "\n\n" in block else block  # this hint only: newer
    # pytest versions repeat the whole failure text in the short test summary
    exprs = re.findall(r"^\s+(?:or )?modes=\[(.+)\]$", block, re.M)
    yamls = re.findall(r"^\s+YAML: modes: \[(.+)\]$", block, re.M)
    imports = re.search(r"\(from pytest_ascend_accuracy import (.+)\)", block).group(1)
    return exprs, yamls, imports


def test_keep_dtype_hint_pasted_verbatim_passes_in_python_and_yaml(pytester, block_model):
    pytester.makepyfile(test_failing=FAILING)
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep",
                             "--junitxml=junit.xml", "-o", "junit_family=xunit1")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    exprs, yamls, imports = parse_hint(text)
    # the failing test's own mode, and the model's own names (never the sanitized spelling)
    assert exprs == [f"FUSION_OFF | keep_dtype(['{NAME}'])", "HIGH_PRECISION | FUSION_OFF"]
    assert yamls[0] == f'{{base: fusion_off, keep_dtype: ["{NAME}"]}}'
    assert "enc_blk_0" not in text
    # HTML and JUnit say the same
    page = next((pytester.path / "rep").rglob("report.html")).read_text(encoding="utf-8")
    assert html.escape(f"modes=[{exprs[0]}]") in page and html.escape(f"YAML: modes: [{yamls[0]}]") in page
    props = {p.get("name"): p.get("value")
             for p in ET.parse(str(pytester.path / "junit.xml")).iter("property")}
    assert f"modes=[{exprs[0]}]" in props["accuracy_hint"]
    assert f"modes=[{exprs[1]}]" in props["accuracy_hint"]
    # every suggestion pasted verbatim turns the failure into a pass
    files = []
    for k, expr in enumerate(exprs):
        pytester.makepyfile(**{f"test_pasted_{k}": PASTED.format(imports=imports, expr=expr)})
        files.append(f"test_pasted_{k}.py")
    for k, entry in enumerate(yamls):
        (pytester.path / f"accuracy_pasted_{k}.yaml").write_text(SUITE.format(yaml=entry))
        files.append(f"accuracy_pasted_{k}.yaml")
    fixed = pytester.runpytest("-p", "no:cacheprovider", *files)
    fixed.assert_outcomes(passed=4)


def test_modes_hint_names_the_cause_when_applied(tmp_path):
    """No overflow: the hint suggests the test's mode with fusion off and with buffer reuse off;
    evaluated verbatim, the one that removes the cause passes and the other still fails."""
    import pytest_ascend_accuracy as paa
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.backends.emulator.faults import Fault
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
    from pytest_ascend_accuracy.report.failure_text import failure_text
    from pytest_ascend_accuracy.report.hints import MODES, hint_for

    model = tiny_models.conv_bn_relu()
    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache, faults=[Fault.on_rule("ConvBatchnormFusionPass")])
    inputs = make_inputs(model)
    golden = golden_dump(model, inputs, cache=cache)

    def verdict(mode):
        dump = backend.run(backend.convert(model, mode), inputs, dump=True,
                           dump_dir=tmp_path / f"run-{len(list(tmp_path.iterdir()))}")
        result = compare_dumps(dump, golden)
        return result, result.judge(0.95)

    result, failed = verdict(paa.DEFAULT)
    assert not failed.passed
    hint = hint_for(failed, golden, paa.DEFAULT)
    assert hint.kind == MODES
    exprs, yamls, _ = parse_hint(failure_text(result, failed, hint=hint))
    assert exprs == ["FUSION_OFF", "BUFFER_OFF"] and yamls == ["fusion_off", "buffer_off"]
    names = {n: getattr(paa, n) for n in paa.__all__ if not n.startswith("_")}
    passed = {e: verdict(eval(e, names))[1].passed for e in exprs}  # noqa: S307
    assert passed == {"FUSION_OFF": True, "BUFFER_OFF": False}


def test_problem_hint_when_nothing_matches():
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.core.modes import FUSION_OFF
    from pytest_ascend_accuracy.dump.model import DumpSet
    from pytest_ascend_accuracy.report.hints import PROBLEM, next_step

    import numpy as np

    result = compare_dumps(DumpSet.from_arrays({"npu_a": [np.ones(3, np.float16)]}),
                           DumpSet.from_arrays({"b": [np.ones(3, np.float32)]}))
    hint = next_step(result.judge(0.95), mode=FUSION_OFF)
    # check_accuracy has no mapping= (5c831fc): the advice is the load_dump call it takes
    assert hint.kind == PROBLEM and not hint.modes
    assert 'load_dump(DIR, om_json="model.json")' in hint.text()
    assert "pass that to check_accuracy" in hint.text() and "mapping=" not in hint.text()


BIG = '''
from pytest_ascend_accuracy import accuracy, {imports}
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95{modes})
def test_big(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/big.onnx")
    actual = ascend_model("models/big.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/big.onnx", inputs))
'''


def test_keep_dtype_hint_names_the_op_whose_operand_overflows_as_well(pytester):
    """The overflow model followed by a Mul by 1e5: ``norm`` (an operand of 1e9) fails first and
    the ops after it leave the float16 range themselves. The printed keep_dtype names all of
    them; pasted verbatim it passes (before, it named only the later ops and still failed at
    ``norm``)."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    model = tiny_models.overflow_model()
    out = model.graph.output[0].name
    model.graph.node[-1].output[0] = "pre_big"
    model.graph.initializer.append(numpy_helper.from_array(np.full(1, 1e5, np.float32), "big"))
    model.graph.node.append(helper.make_node("Mul", ["pre_big", "big"], [out], name="big/Mul"))
    onnx.checker.check_model(model)
    onnx.save(model, str(pytester.mkdir("models") / "big.onnx"))
    pytester.makepyfile(test_failing=BIG.format(imports="HIGH_PRECISION", modes=""))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    assert "first failure in graph order: norm" in text
    exprs, yamls, imports = parse_hint(text)
    # no high-precision alternative: the fused MatMul+Mul still takes float16 inputs there
    assert exprs == ["keep_dtype(['norm', 'fc2/MatMul', 'fc2/Add', 'big/Mul'])"]
    pytester.makepyfile(test_hp=BIG.format(imports="HIGH_PRECISION",
                                           modes=", modes=[HIGH_PRECISION]"))
    pytester.runpytest("-p", "no:cacheprovider", "test_hp.py").assert_outcomes(failed=1)
    (pytester.path / "test_hp.py").unlink()
    pytester.makepyfile(test_failing=BIG.format(imports=imports, modes=f", modes=[{exprs[0]}]"))
    (pytester.path / "accuracy_pasted.yaml").write_text(
        SUITE.replace("block", "big").format(yaml=yamls[0]))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
