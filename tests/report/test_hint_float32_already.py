"""No keep_dtype hint names an op only for its own values where the failing run outputs it in
float32 already (high precision, or the mode keeps it): pasted, that mode converts the op as the
run did, and printed itself again (tests/plugin/test_hint_tiny_float32.py, the real case). The
run's mode says so, on a dump of the device's own dtypes: a stored float32 alone (a float16 dump
converted to float32 .npy, msaccucmp-style) is no evidence, and lost the real fix. The
hint keeps an op whose float32 output turns NaN/Inf (float16's doing before it was stored so, or
a fault), a Cube op (keep_dtype changes its float16 inputs), and an op whose operand leaves the
range; and never offers the test's own mode."""
import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.fp16_range import RangeFinding, RangeFindings
from pytest_ascend_accuracy.core.modes import HIGH_PRECISION, keep_dtype
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.failure_text import default_hint
from pytest_ascend_accuracy.report.fp16_fix_ops import keep_dtype_names
from pytest_ascend_accuracy.report.hints import KEEP_DTYPE, next_step

BIG = np.linspace(7e4, 9e4, 64).astype(np.float32)
#: fc's own output past 65504, as ``golden_inputs_past_fp16`` finds it
FC_OUT = RangeFinding("fc", "output:0", 9e4)


def _verdict(actual_fc, op_type="Add"):
    """``fc``: golden values past 65504, the actual ``actual_fc``, failing."""
    golden = DumpSet.from_arrays({"fc": [BIG]}, op_types={"fc": op_type})
    actual = DumpSet.from_arrays({"fc": [actual_fc]}, op_types={"fc": op_type})
    return compare_dumps(actual, golden).judge(0.95)


def _found(*findings):
    found = RangeFindings(findings)
    found.checked = 2
    return found


def test_an_op_output_in_float32_already_is_not_named():
    verdict = _verdict(-BIG)  # float32, no NaN/Inf, the sign flipped: fails its cosine
    assert keep_dtype_names(verdict, _found(), HIGH_PRECISION) == ([], "")
    assert keep_dtype_names(verdict, _found(FC_OUT), HIGH_PRECISION) == ([], "")
    assert keep_dtype_names(verdict, _found(FC_OUT), keep_dtype(["fc"])) == ([], "")
    hint = next_step(verdict, _found(), HIGH_PRECISION, dump_kind="ascend")
    assert hint.kind != KEEP_DTYPE and "keep_dtype" not in "".join(
        m.python_expr() for m in hint.modes), hint.text()
    # the mode not known, or the dump's dtypes not the device's (an npy directory, arrays), or
    # a mode that outputs it in float16: named, as before
    assert keep_dtype_names(verdict, _found(FC_OUT))[0] == ["fc"]
    assert keep_dtype_names(verdict, _found(FC_OUT), keep_dtype([]))[0] == ["fc"]
    assert next_step(verdict, _found(FC_OUT), HIGH_PRECISION, dump_kind="npy").kind == KEEP_DTYPE
    assert "keep_dtype" in default_hint(verdict, _found(FC_OUT))
    # beside an op the fix does change, it is left out and the reason says why
    golden = DumpSet.from_arrays({"norm": [np.ones(64, np.float32)], "fc": [BIG]},
                                 inputs={"norm": [np.full(64, 1e9, np.float32)]})
    actual = DumpSet.from_arrays({"norm": [-np.ones(64, np.float16)], "fc": [-BIG]})
    verdict = compare_dumps(actual, golden).judge(0.95)
    names, reason = keep_dtype_names(verdict, _found(RangeFinding("norm", "input:0", 1e9)),
                                     HIGH_PRECISION)
    assert names == ["norm"], (names, reason)
    assert reason.endswith("; fc is left out (this run outputs it in float32 already: keeping "
                           "it in float32 changes nothing)"), reason
    # the test's own mode keeps fc: the hint's mode prints it, so the reason does not call it
    # left out (A1, YOLO11n: "... is left out" beside a printed keep_dtype list naming it)
    names, reason = keep_dtype_names(verdict, _found(RangeFinding("norm", "input:0", 1e9)),
                                     keep_dtype(["fc"]))
    assert names == ["norm"], (names, reason)
    assert reason.endswith("; fc is kept by the test's own keep_dtype already (this run "
                           "outputs it in float32)"), reason
    hint = next_step(verdict, _found(RangeFinding("norm", "input:0", 1e9)), keep_dtype(["fc"]),
                     dump_kind="ascend")
    assert hint.kind == KEEP_DTYPE and set(hint.modes[0].keep_dtype) == {"fc", "norm"}, hint


def test_float32_nan_inf_a_cube_op_and_a_float16_output_stay_named():
    hp = HIGH_PRECISION
    inf = np.full(64, np.inf, np.float32)  # stored as float32, turned Inf: float16's doing
    assert keep_dtype_names(_verdict(inf), _found(FC_OUT), hp)[0] == ["fc"]
    assert keep_dtype_names(_verdict(-BIG, "MatMul"), _found(FC_OUT), hp)[0] == ["fc"]
    saturated = np.full(64, -65504, np.float16)  # float16, finite: keep_dtype changes it
    assert keep_dtype_names(_verdict(saturated), _found(FC_OUT), hp)[0] == ["fc"]
    # an operand past 65504 (not its own values): keeping it changes what it reads
    found = _found(RangeFinding("fc", "input:0", 1e9))
    assert keep_dtype_names(_verdict(-BIG), found, hp)[0] == ["fc"]


def test_the_tests_own_mode_is_never_offered():
    """An op the mode keeps already (whatever dtype the dump says): no keep_dtype hint adding
    nothing to the mode."""
    verdict = _verdict(np.full(64, -65504, np.float16))
    mode = keep_dtype(["fc"])
    assert next_step(verdict, _found(FC_OUT), keep_dtype([])).modes[0] == mode  # unkept
    hint = next_step(verdict, _found(FC_OUT), mode)
    assert mode not in hint.modes and hint.kind != KEEP_DTYPE, hint.text()


def test_a_saturated_float16_dump_stored_as_float32_npy_keeps_its_fix(tmp_path, capsys):
    """The emulator in saturation mode (older chips) clips ``big`` (golden up to 8e4) at 65504;
    its dump converted to float32 .npy and compared from the command line (no om json: the mode
    is not known) read "no float16 overflow seen"; the fix keep_dtype(['big']) is named again,
    and pasted (diagnose in that mode) passes."""
    import shlex

    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.cli import app as cli
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.core.modes import DEFAULT
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Mul", ["r", "k"], ["s"], name="scale"),
             helper.make_node("Add", ["s", "s"], ["y"], name="big")]
    graph = helper.make_graph(
        nodes, "sat", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
        [numpy_helper.from_array(np.array([4e4], np.float32), "k")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = str(tmp_path / "sat.onnx")
    onnx.save(model, path)
    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache, overflow="saturate")
    inputs = make_inputs(path)
    actual = backend.run(backend.convert(path, DEFAULT), inputs, dump_dir=tmp_path / "dump")
    golden = golden_dump(path, inputs, cache=cache)
    npy = tmp_path / "npy32"
    npy.mkdir()
    for op in actual.ops:
        for t in op.outputs:
            np.save(npy / f"{op.name}.{t.index}.1.npy", np.asarray(t.load()).astype(np.float32))
    assert cli.main(["compare", str(npy), str(golden.root), "--threshold", "0.9999"]) == 1
    hint = capsys.readouterr().out
    hint = hint[hint.index("next step:"):]
    assert "big output:0 reaches" in hint and "float32 already" not in hint, hint
    command = hint[hint.index("ascend-accuracy diagnose"):hint.index(" passes with exit")]
    assert "--mode '{keep_dtype: [\"big\"]}'" in command, command
    args = shlex.split(command.split(" (or --mode")[0])[1:]
    args[1] = path
    assert cli.main(args) == 0  # pasted (MODEL.onnx: the model the dump ran)
