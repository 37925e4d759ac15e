"""A float16-range keep_dtype fix whose kept op takes values float16 rounded already (an op it does
not keep, float16 in the failing run, golden values all below float16's smallest normal, failing
the check by its plain figure) is named, never offered: no list confined to the failing ops gives
those values back. A random-init YOLOv8n got keep_dtype of /model.9/cv2/conv/Conv, /model.9/Concat
and two ops after them, fed by /model.9/cv1/act/Mul and three MaxPools (plain cosines 0.305 to
0.595, passing by float16's allowance for values that small); pasted, it failed first at the kept
Concat (float32, cosine 0.541978), and following each next hint walked the failure upstream.

The model here has that shape: to_sub scales x into float16's subnormal range (every activation
from there on lies below 2**-14), act (a Relu) hands it on, shrink's output flushes to 0 and grow
scales it back. The first failure is shrink (all zero); the hint's list was shrink and grow,
which pasted fails at shrink, kept (float32, cosine 0.975624: act's float16 rounding). The
hint now points to --accuracy-diagnose, whose fix passes pasted, in Python and in YAML."""
import re

import numpy as np
import onnx
from onnx import TensorProto, helper

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.fp16_range import failing_ops_past_fp16
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.failure_text import default_hint
from pytest_ascend_accuracy.report.fp16_fix_ops import UNEXPLAINED_ADVICE, keep_dtype_names
from pytest_ascend_accuracy.report.hints import MODES, next_step
from pasted_fix_lines import FIX

SCALES = {"s": 1e-7, "q": 0.25, "g": 4e4}  # to_sub, shrink, grow

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy{imports}


@accuracy(threshold=0.99{modes})
def test_fed(ascend_model, golden_dump, check_accuracy):
    rng = np.random.default_rng(0)
    inputs = {{"x": rng.uniform(-1, 1, (1, 256)).astype(np.float32)}}
    actual = ascend_model("models/fed.onnx").run(inputs, dump=True)
    check_accuracy(actual, golden_dump("models/fed.onnx", inputs))
'''
SUITE = '''
models:
  - name: fed
    model: models/fed.onnx
    threshold: 0.99
    inputs: {{seed: 0}}
    modes: [{yaml}]
'''
NO_FIX = ("but keeping them in float32 is no fix: shrink takes values float16 rounded already "
          "from act, not kept (float16 in this run, golden values below float16's smallest "
          "normal: act's at most |")


def _model(path, scales=SCALES):
    def scalar(name):
        return helper.make_tensor(name, TensorProto.FLOAT, [], [scales[name]])

    nodes = [helper.make_node("Mul", ["x", "s"], ["a"], name="to_sub"),
             helper.make_node("Relu", ["a"], ["r"], name="act"),
             helper.make_node("Mul", ["r", "q"], ["b"], name="shrink"),
             helper.make_node("Mul", ["b", "g"], ["y"], name="grow")]
    graph = helper.make_graph(
        nodes, "fed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256])],
        initializer=[scalar(n) for n in ("s", "q", "g")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def _file(modes="", imports=""):
    return TEST.format(modes=f", modes=[{modes}]" if modes else "",
                       imports=f", {imports}" if imports else "")


def _block(text):
    block = text[text.index("next step:"):]
    return block[:block.index("\n\n")] if "\n\n" in block else block


def test_the_hint_offers_no_list_and_the_diagnosis_it_points_to_fixes_it_pasted(pytester):
    (pytester.path / "models").mkdir()
    _model(pytester.path / "models" / "fed.onnx")
    pytester.makepyfile(test_fed=_file())
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    assert "first failure in graph order: shrink (#2)" in text
    block = _block(text)
    assert NO_FIX in block, block
    assert "no op list is known to fix it: " + UNEXPLAINED_ADVICE in block, block
    assert "modes=[" not in block and "keep_dtype(" not in block, block
    # the list it offered before, pasted: the first failure is shrink itself, kept
    pytester.makepyfile(test_fed=_file("keep_dtype(['shrink', 'grow'])", "keep_dtype"))
    pasted = pytester.runpytest("-p", "no:cacheprovider")
    pasted.assert_outcomes(failed=1)
    assert "first failure in graph order: shrink (#2)" in pasted.stdout.str()
    assert re.search(r"dtypes +float32\n", pasted.stdout.str())
    # what the hint points to, run: its fix, pasted verbatim, passes
    pytester.makepyfile(test_fed=_file())
    diagnosed = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose")
    diagnosed.assert_outcomes(failed=1)
    expr, yaml, imports = FIX.search(diagnosed.stdout.str()).groups()
    pytester.makepyfile(test_fed=_file(expr, imports))
    pytester.makefile(".yaml", accuracy_fed=SUITE.format(yaml=yaml))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def _dumps(scales=SCALES, act_dtype=np.float16):
    """(actual, golden) of the model: float16 rounding after every op, except act's output
    where ``act_dtype`` is float32."""
    x = np.random.default_rng(0).uniform(-1, 1, 256).astype(np.float32)
    f32, f16 = np.float32, np.float16
    a = x * f32(scales["s"])
    r = np.maximum(a, 0)
    b = r * f32(scales["q"])
    golden = DumpSet.from_arrays({"to_sub": [a], "act": [r], "shrink": [b],
                                  "grow": [b * f32(scales["g"])]})
    a16 = a.astype(f16)
    # (float32: act and what feeds it computed in float32, as a mode keeping them does)
    r16 = np.maximum(a16.astype(f32), 0).astype(f16) if act_dtype == f16 else r
    b16 = (r16.astype(f32) * f32(scales["q"])).astype(f16)
    actual = DumpSet.from_arrays(
        {"to_sub": [a16], "act": [r16], "shrink": [b16],
         "grow": [(b16.astype(f32) * f32(scales["g"])).astype(f16)]},
        op_types={"to_sub": "Mul", "act": "Relu", "shrink": "Mul", "grow": "Mul"})
    return actual, golden


def _names(tmp_path, scales=SCALES, act_dtype=np.float16, model=True, rows=True):
    actual, golden = _dumps(scales, act_dtype)
    result = compare_dumps(actual, golden)
    verdict = result.judge(0.99)
    assert verdict.first.row.op_name == "shrink"
    path = _model(tmp_path / "fed.onnx", scales) if model else None
    ranges = failing_ops_past_fp16(golden, verdict, result.rows, model=path)
    names, reason = keep_dtype_names(verdict, ranges, compared=result.rows if rows else ())
    return result, verdict, ranges, names, reason


def test_a_kept_op_fed_rounded_subnormals_makes_the_list_no_fix(tmp_path):
    result, verdict, ranges, names, reason = _names(tmp_path)
    assert names == ["shrink", "grow"] and names.unexplained
    assert NO_FIX in reason, reason
    # act passes the check by float16's allowance for values that small: it is not said to
    # fail it (T3: a detector's hint said "failing the check" of an op the check passed)
    assert not any(f.row.op_name == "act" for f in verdict.failures)
    assert re.search(r"act's at most \|9.94e-08\|, its plain cosine 0\.9\d{5} below the "
                     r"threshold, the check passing it only by float16's allowance for values "
                     r"that small\), which", reason), reason
    assert reason.endswith("which no op list confined to the failing ops restores: no op list "
                           "is known to fix it"), reason
    hint = next_step(verdict, ranges, rows=result.rows)
    assert hint.kind == MODES and not hint.modes and hint.advice == UNEXPLAINED_ADVICE, hint
    text = default_hint(verdict, ranges, result)
    assert NO_FIX in text and "; to find one by running, diagnose(model, inputs, " in text, text
    assert "keep_dtype([" not in text, text


def test_the_list_stands_where_the_feeding_op_is_float32_or_within_float16(tmp_path):
    # act output in float32 (kept by the test's mode, say): nothing rounds it before shrink
    *_, names, reason = _names(tmp_path, act_dtype=np.float32)
    assert names == ["shrink", "grow"] and not names.unexplained and "no fix" not in reason
    # act's values normal for float16 (shrink alone takes them below): its rounding is slight
    normal = {"s": 1e-3, "q": 1e-5, "g": 4e4}
    *_, names, reason = _names(tmp_path, normal)
    assert names == ["shrink", "grow"] and not names.unexplained and "no fix" not in reason


def test_the_list_stands_where_nothing_tells_what_feeds_the_kept_ops(tmp_path):
    # no model and a golden of outputs only: the edges are not known (the hint as before)
    *_, ranges, names, reason = _names(tmp_path, model=False)
    assert ranges.feeding() is None
    assert not names.unexplained and "no fix" not in reason


def test_findings_renamed_to_the_models_spelling_still_tell_what_feeds_the_kept_ops(tmp_path):
    # the CLI renames findings a sanitised golden names (``in_model_spelling``), copying every
    # attribute, each tuple's names renamed: the edges' reader must survive that (a tuple holding
    # the golden DumpSet raised TypeError: unhashable type)
    from dataclasses import replace

    from pytest_ascend_accuracy.report.model_spelling import in_model_spelling

    result, _, ranges, _, _ = _names(tmp_path)
    rows = [replace(r, op_name=f"fed.{r.op_name}", golden_name=f"fed_{r.op_name}")
            for r in result.rows]
    found = type(ranges)(replace(f, op=f"fed_{f.op}") for f in ranges)
    found.read_producers = ranges.read_producers
    renamed = in_model_spelling(found, rows)
    assert [f.op for f in renamed] == [f"fed.{f.op}" for f in ranges]
    assert renamed.feeding() == ranges.feeding() and renamed.feeding()["shrink"] == ["act"]
