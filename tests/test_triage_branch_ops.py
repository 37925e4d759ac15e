"""The diagnosis where float16 inside an If's branch is the cause (H324).

A dump names an If a run executes as one op, so the step that keeps "every op" kept the ops the
dump names and none of a branch's: ssdlite's ``keep_dtype(all 872 ops)`` failed at If_1941
(NMS's offset trick left in float16 inside its else branch) and the diagnosis ended "no
conversion mode restores accuracy ... check the operator implementations", though keeping the
branch ops by ``OpType::`` (as ATC's ``KeepDtypeFunc`` does on every parsed node, subgraphs
included) passed. Here an If whose else branch adds 1024 (float16's spacing there is 1), runs a
MatMul (a Cube op: high precision feeds it float16) and takes the offset off again.
"""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from pytest_ascend_accuracy.errors import ConfigError

OFFSET = 1024.0  # x in (0, 1) + 1024 in float16: 1024 or 1025
X = np.linspace(0.05, 0.95, 8, dtype=np.float32).reshape(1, 8)
BRANCH_TYPES = {"OpType::Add", "OpType::BatchMatMulV2", "OpType::Sub"}


def _vi(name, shape, elem=TP.FLOAT):
    return h.make_tensor_value_info(name, elem, shape)


def branch_model(path):
    """x -> Relu -> If(max < -1: never, decided by input values): then Identity, else
    (x + 1024) @ I - 1024, which float16 rounds to 0 or 1."""
    then = h.make_graph([h.make_node("Identity", ["xr"], ["t_out"], name="then/id")], "then",
                        [], [_vi("t_out", [1, 8])])
    other = h.make_graph(
        [h.make_node("Add", ["xr", "off"], ["shifted"], name="else/add"),
         h.make_node("MatMul", ["shifted", "eye"], ["mixed"], name="else/matmul"),
         h.make_node("Sub", ["mixed", "off"], ["e_out"], name="else/sub")],
        "else", [], [_vi("e_out", [1, 8])],
        [nh.from_array(np.array([OFFSET], np.float32), "off"),
         nh.from_array(np.eye(8, dtype=np.float32), "eye")])
    nodes = [h.make_node("Relu", ["x"], ["xr"], name="pre"),
             h.make_node("ReduceMax", ["xr"], ["top"], name="top", keepdims=0),
             h.make_node("Less", ["top", "never"], ["cnd"], name="cond"),
             h.make_node("If", ["cnd"], ["y"], name="offset_if", then_branch=then,
                         else_branch=other)]
    graph = h.make_graph(nodes, "branch_fp16", [_vi("x", [1, 8])], [_vi("y", [1, 8])],
                         [nh.from_array(np.array(-1.0, np.float32), "never")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))
    return path


@pytest.fixture
def model(tmp_path):
    return branch_model(tmp_path / "branch_fp16.onnx")


def _backend(tmp_path):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    return EmulatorBackend(Cache(tmp_path / "cache"))


def _passes(tmp_path, model, mode) -> bool:
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.op_catalogue import check_mode, model_ops, with_real_names

    check_mode(mode, model, "test")  # taken as a test's mode is
    backend = _backend(tmp_path)
    converted = backend.convert(model, mode)
    runs = tmp_path / "runs"
    dump = backend.run(converted, {"x": X}, dump=True,
                       dump_dir=runs / str(len(list(runs.glob("*"))) if runs.exists() else 0))
    golden = with_real_names(golden_dump(model, {"x": X}, cache=backend.cache), model_ops(model))
    return compare_dumps(dump, golden).judge(0.99).passed


def test_every_op_kept_includes_the_branch_ops_and_the_search_narrows_to_them(tmp_path, model):
    from pytest_ascend_accuracy.triage.flow import diagnose

    d = diagnose(model, {"x": X}, backend=_backend(tmp_path), threshold=0.99)
    steps = {s.step: s for s in d.steps}
    assert steps["high_precision"].passed is False
    every = steps["keep_dtype_all"]
    # the label says what the step keeps: the ops the dump names and, by type, the branch ops
    assert every.mode == ("keep_dtype(all 4 ops, and the 4 ops inside offset_if's branches by 4 "
                          "OpType:: entries)"), every.mode
    assert every.passed is True
    assert d.restored_by == "keep_dtype", d.verdict
    assert "no conversion mode restores accuracy" not in d.verdict
    # narrowed as for top-level ops: the branch's three types, nothing of the main graph
    assert set(d.keep_dtype) == BRANCH_TYPES, d.keep_dtype
    # the branch the golden ran (the else branch), not both in file order (audit B finding 7)
    assert "whose taken branch runs Cube ops (else/matmul)" in d.verdict, d.verdict
    assert "every op of types" in steps["keep_dtype"].summary
    assert _passes(tmp_path, model, d.fix_mode)  # the fix converts and passes
    # and each entry of it is needed
    from pytest_ascend_accuracy.core.modes import keep_dtype

    for entry in BRANCH_TYPES:
        assert not _passes(tmp_path, model, keep_dtype(sorted(BRANCH_TYPES - {entry})))


def test_a_branch_ops_name_is_refused_saying_what_high_precision_keeps(model):
    from pytest_ascend_accuracy.core.modes import keep_dtype
    from pytest_ascend_accuracy.graph.op_catalogue import check_mode

    with pytest.raises(ConfigError) as vector:
        check_mode(keep_dtype(["else/add"]), model, "test")
    text = str(vector.value)
    assert "every op in float32" not in text  # high precision runs Cube ops in float16
    assert "modes=[keep_dtype(['OpType::Add'])]" in text
    assert ("or convert in high precision (modes=[HIGH_PRECISION], "
            "--precision_mode=allow_fp32_to_fp16), which runs vector ops such as this one in "
            "float32 where they support it, and Cube ops (Conv, MatMul, Gemm) still in "
            "float16") in text
    with pytest.raises(ConfigError) as cube:
        check_mode(keep_dtype(["else/matmul"]), model, "test")
    text = str(cube.value)
    assert "every op in float32" not in text
    assert "modes=[keep_dtype(['OpType::BatchMatMulV2'])]" in text
    assert ("high precision (modes=[HIGH_PRECISION], --precision_mode=allow_fp32_to_fp16) does "
            "not keep it: it runs Cube ops such as BatchMatMulV2 in float16") in text
