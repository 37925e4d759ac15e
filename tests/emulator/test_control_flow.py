"""Control flow as ATC converts it (a trial of recurrent and control-flow models): a Loop or
Scan is refused as ATC refuses it (E19010: GraphEngine's ONNX parser has a subgraph adapter
for If alone), and the ops inside an If the emulator keeps as one operator run in their
precision: a float16 overflow inside the branch passed where the same ops written flat failed."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from pytest_ascend_accuracy.errors import ConfigError, ConversionError

CONSTS = [nh.from_array(np.array([300.0], np.float32), "k300"),
          nh.from_array(np.array([1.0 / 90000], np.float32), "kinv")]
X = np.linspace(0.1, 0.99, 8, dtype=np.float32).reshape(1, 8)  # 297 ** 2 = 88209 > 65504


def _vi(name, shape, elem=TP.FLOAT):
    return h.make_tensor_value_info(name, elem, shape)


def _squares(src, dst, prefix, ops=3):
    """x * 300, squared (past 65504), and (``ops`` 3) scaled back below 1."""
    nodes = [h.make_node("Mul", [src, "k300"], [prefix + "a"], name=prefix + "Mul_a"),
             h.make_node("Mul", [prefix + "a", prefix + "a"], [prefix + "b"],
                         name=prefix + "Mul_sq"),
             h.make_node("Mul", [prefix + "b", "kinv"], [dst], name=prefix + "Mul_scale")]
    nodes[ops - 1].output[0] = dst
    return nodes[:ops]


def _save(graph, path):
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))
    return path


def flat_model(path, ops=3):
    return _save(h.make_graph([h.make_node("Relu", ["x"], ["xr"], name="pre")]
                              + _squares("xr", "y", "flat/", ops), "flat", [_vi("x", [1, 8])],
                              [_vi("y", [1, 8])], CONSTS), path)


def if_model(path, ops=3):
    """x -> Relu -> If(sum > 0): then the squares, else Identity (the condition depends on x)."""
    then = h.make_graph(_squares("xr", "t_out", "then/", ops), "then", [],
                        [_vi("t_out", [1, 8])], CONSTS)
    other = h.make_graph([h.make_node("Identity", ["xr"], ["e_out"], name="else/id")], "else",
                         [], [_vi("e_out", [1, 8])])
    nodes = [h.make_node("Relu", ["x"], ["xr"], name="pre"),
             h.make_node("ReduceSum", ["xr"], ["s"], name="rsum", keepdims=0),
             h.make_node("Greater", ["s", "zero"], ["cnd"], name="gt"),
             h.make_node("If", ["cnd"], ["y"], name="branch", then_branch=then, else_branch=other)]
    return _save(h.make_graph(nodes, "ifov", [_vi("x", [1, 8])], [_vi("y", [1, 8])],
                              [nh.from_array(np.array(0.0, np.float32), "zero")]), path)


def loop_model(path):
    body = h.make_graph([h.make_node("Identity", ["ci"], ["co"], name="body/cond")]
                        + _squares("si", "so", "body/"), "body",
                        [_vi("i", [], TP.INT64), _vi("ci", [], TP.BOOL), _vi("si", [1, 8])],
                        [_vi("co", [], TP.BOOL), _vi("so", [1, 8])], CONSTS)
    nodes = [h.make_node("Relu", ["x"], ["xr"], name="pre"),
             h.make_node("Loop", ["trip", "cond", "xr"], ["y"], name="loop", body=body)]
    return _save(h.make_graph(nodes, "loopov", [_vi("x", [1, 8])], [_vi("y", [1, 8])],
                              [nh.from_array(np.array(1, np.int64), "trip"),
                               nh.from_array(np.array(True), "cond")]), path)


def _check(tmp_path, model_path, mode=None):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy

    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache)
    converted = backend.convert(model_path, mode=mode) if mode else backend.convert(model_path)
    actual = backend.run(converted, {"x": X}, dump_dir=tmp_path / "dump")
    golden = golden_dump(model_path, {"x": X}, cache=cache)
    try:
        assert_accuracy(actual, golden, threshold=0.99)
    except AccuracyFailure as failure:
        return str(failure)
    return "passed"


def test_a_float16_overflow_inside_an_if_branch_fails_as_written_flat(tmp_path):
    flat = _check(tmp_path / "f", flat_model(tmp_path / "flat.onnx"))
    branched = _check(tmp_path / "i", if_model(tmp_path / "ifov.onnx"))
    assert "first failure in graph order: flat/Mul_sq" in flat
    assert "first failure in graph order: branch" in branched  # passed on the parent


def test_high_precision_runs_the_branch_ops_in_float32(tmp_path):
    from pytest_ascend_accuracy.core.modes import HIGH_PRECISION

    assert _check(tmp_path, if_model(tmp_path / "ifov.onnx"), HIGH_PRECISION) == "passed"


def test_a_loop_is_refused_as_atc_refuses_it(tmp_path):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    path = loop_model(tmp_path / "loopov.onnx")
    with pytest.raises(ConversionError) as info:
        EmulatorBackend(Cache(tmp_path / "cache")).convert(path)
    assert str(info.value).startswith(
        "model 'loopov' has 1 Loop/Scan operator: 'loop' (Loop). ATC's ONNX parser has no parser "
        "for them (only If has its subgraphs parsed; ATC stops with E19010 \"No parser is "
        "registered for Op [loop, optype [ai.onnx::13::Loop]]\"), so the model cannot be "
        "converted")


@pytest.mark.parametrize("producer, advice", [
    ("pytorch", "torch.onnx.export traces a Python loop into its iterations"),
    ("tf2onnx", "a Keras LSTM, GRU or SimpleRNN layer built with unroll=True exports without one")])
def test_the_loop_refusal_says_how_the_models_own_exporter_unrolls_it(tmp_path, producer, advice):
    """A Keras 3 LSTM exported by tf2onnx is a Loop (``functional_1/lstm_1/while_loop``): the
    refusal's only advice was torch's (an audit, H340, where ``unroll=True`` exported without the
    Loop and passed); it names the model's own exporter's way."""
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    path = loop_model(tmp_path / "loopov.onnx")
    model = onnx.load(str(path))
    model.producer_name = producer
    onnx.save(model, str(path))
    with pytest.raises(ConversionError) as info:
        EmulatorBackend(Cache(tmp_path / "cache")).convert(path)
    assert advice in str(info.value)
    other = [a for p, a in (("pytorch", "torch.onnx"), ("tf2onnx", "unroll=True")) if p != producer]
    assert other[0] not in str(info.value)


def untaken_loop_model(path):
    """If(a constant true): then Identity, else a Loop. Preparation keeps the taken branch
    only; ATC parses both branches and stops at the Loop."""
    loop = onnx.load(str(loop_model(path.with_name("inner.onnx"))))
    other = h.make_graph([h.make_node("Identity", ["x"], ["xr"], name="else/id")]
                         + [n for n in loop.graph.node if n.op_type == "Loop"], "else", [],
                         [_vi("y", [1, 8])], list(loop.graph.initializer))
    then = h.make_graph([h.make_node("Identity", ["x"], ["t"], name="then/id")], "then", [],
                        [_vi("t", [1, 8])])
    nodes = [h.make_node("If", ["yes"], ["out"], name="pick", then_branch=then,
                         else_branch=other)]
    return _save(h.make_graph(nodes, "untaken", [_vi("x", [1, 8])], [_vi("out", [1, 8])],
                              [nh.from_array(np.array(True), "yes")]), path)


def test_a_loop_in_a_branch_the_conversion_drops_is_refused_too(tmp_path):
    """The Loop/Scan check ran on the prepared model, which kept the taken branch only: the
    model converted here, where ATC, parsing both branches, stops with E19010."""
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.graph.parser_refusals import atc_parse_error

    path = untaken_loop_model(tmp_path / "untaken.onnx")
    assert atc_parse_error(onnx.load(str(path)))[0] == "E19010"  # the fake ATC's verdict
    with pytest.raises(ConversionError, match=r"'loop' \(Loop in the else_branch of 'pick'\)"):
        EmulatorBackend(Cache(tmp_path / "cache")).convert(path)


def test_the_fake_atc_refuses_a_loop_with_e19010(tmp_path, capsys, monkeypatch):
    from pytest_ascend_accuracy.testing import fake_atc

    monkeypatch.chdir(tmp_path)  # ATC writes fusion_result.json where it runs
    path = loop_model(tmp_path / "loopov.onnx")
    rc = fake_atc.main(["--framework=5", f"--model={path}", f"--output={tmp_path / 'out'}",
                        "--soc_version=Ascend310P3", "--input_shape=x:1,8"])
    out = capsys.readouterr().out
    assert rc != 0
    assert "E19010: No parser is registered for Op [loop, optype [ai.onnx::13::Loop]]." in out


@pytest.mark.parametrize("entry, said", [
    ("then/Mul_sq", "keep_dtype entry 'then/Mul_sq' names an op inside the then_branch of If "
                    "'branch': ATC applies keep_dtype to the graph as its parser built it"),
    ("body/Mul_sq", "keep_dtype entry 'body/Mul_sq' names an op inside the body of Loop 'loop'; "
                    "ATC's ONNX parser converts no Loop (E19010)")])
def test_keep_dtype_naming_an_op_inside_a_subgraph_says_where_it_is(tmp_path, entry, said):
    from pytest_ascend_accuracy.core.modes import keep_dtype
    from pytest_ascend_accuracy.graph.op_catalogue import check_mode

    path = (if_model if entry.startswith("then") else loop_model)(tmp_path / "m.onnx")
    with pytest.raises(ConfigError) as info:
        check_mode(keep_dtype([entry]), path, "test")
    assert said in str(info.value)


def test_per_op_naming_a_branch_op_names_the_if(tmp_path):
    from pytest_ascend_accuracy.core.modes import DEFAULT
    from pytest_ascend_accuracy.graph.op_catalogue import check_model_settings

    path = if_model(tmp_path / "ifov.onnx")
    with pytest.raises(ConfigError) as info:
        check_model_settings(path, {"then/Mul_sq": 0.9}, [], DEFAULT, "diagnose")
    assert str(info.value).endswith("per_op entry 'then/Mul_sq' names an op inside the "
                                    "then_branch of If 'branch', which a run executes and a "
                                    "comparison judges as one op: name 'branch'")
    check_model_settings(path, {"branch": 0.9}, [], DEFAULT, "diagnose")  # the name it gives


def test_diagnose_names_no_keep_dtype_set_that_fails_pasted(tmp_path, capsys):
    """Its search assumed keeping every op the dump names passes where high precision does;
    naming the If keeps none of its branch ops, so it printed keep_dtype {branch, pre, rsum,
    gt} as restoring, which failed pasted. Then measured, high precision was the fix; now the
    branch ops are candidates by ``OpType::`` (as ATC keeps them, H324), and the set found
    keeps the branch's Muls, which passes converted."""
    from pytest_ascend_accuracy import cli
    from pytest_ascend_accuracy.core.modes import keep_dtype

    path = if_model(tmp_path / "ifov.onnx")
    np.save(tmp_path / "x.npy", X)
    cli.main(["diagnose", str(path), "--inputs", f"x={tmp_path / 'x.npy'}",
              "--cache-dir", str(tmp_path / "cache")])
    out = capsys.readouterr().out
    assert "in a test: modes=[keep_dtype(['OpType::Mul'])]" in out, out
    assert "keep_dtype {branch" not in out
    assert _check(tmp_path / "fix", path, keep_dtype(["OpType::Mul"])) == "passed"


def test_a_per_op_error_offers_the_device_run_s_names_not_the_golden_s_inlined_ones():
    """The golden inlines an If's taken branch (then_MatMul); offered as the closest to
    'then/MatMul', it was refused pasted as never compared."""
    from pytest_ascend_accuracy.dump.model import DumpSet
    from pytest_ascend_accuracy.graph.op_catalogue import check_dump_setting_names

    y = np.ones((1, 8), np.float32)
    golden = DumpSet.from_arrays({"pre": [y], "then_MatMul": [y], "then_Tanh": [y], "branch": [y]})
    actual = DumpSet.from_arrays({"pre": [y], "branch": [y]})
    with pytest.raises(ConfigError) as info:
        check_dump_setting_names(["then/MatMul"], [], (golden, actual), "t", actual=actual)
    assert "then_MatMul" not in str(info.value) and "'branch'" in str(info.value)


def test_a_branch_op_kept_in_float32_is_not_rounded_again_at_the_if(tmp_path):
    """A review: keep_dtype OpType::Mul kept the branch's Muls in float32, then the If's own
    output was rounded to float16 (88209 -> +Inf); the same ops flat passed. An If computes
    nothing: its branch ops round their own outputs."""
    from pytest_ascend_accuracy.core.modes import Mode

    mode = Mode(keep_dtype=("OpType::Mul",))
    assert _check(tmp_path / "f", flat_model(tmp_path / "flat.onnx", 2), mode) == "passed"
    assert _check(tmp_path / "i", if_model(tmp_path / "ifov.onnx", 2), mode) == "passed"
