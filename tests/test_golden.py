"""Golden dumps from onnxruntime fp32: naming, content, inlined If, cache keys."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.dump.npy_dir import GOLDEN_PATTERN  # noqa: E402
from pytest_ascend_accuracy.errors import ConfigError  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs, mark_all_outputs, ort_session  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402


@pytest.fixture
def cache(tmp_path):
    return Cache(tmp_path / "cache")


def test_golden_dump_has_every_node_with_inputs_and_outputs(cache):
    model = models.transformer_block()
    x = make_inputs(model)
    dump = golden_dump(model, x, cache=cache)
    assert dump.kind == "npy" and len(dump) == len(model.graph.node) == 49
    assert dump.names[:3] == ["/ln1/ReduceMean", "/ln1/Sub", "/ln1/Pow"]  # the model's, graph order
    ref = onnx.ModelProto()
    ref.CopyFrom(model)
    names = [n.output[0] for n in ref.graph.node]
    mark_all_outputs(ref)
    expected = dict(zip(names, ort_session(ref.SerializeToString()).run(names, x)))
    for node, op in zip(model.graph.node, dump.ops):
        np.testing.assert_array_equal(op.output(0).load(), expected[node.output[0]])
    sub = dump["/ln1/Sub"]
    assert [t.kind for t in sub.inputs] == ["input", "input"]
    np.testing.assert_array_equal(sub.inputs[0].load(), x["x"])
    matmul = dump["/attn/q/MatMul"]
    np.testing.assert_array_equal(matmul.inputs[1].load(),  # weights are dumped as inputs too
                                  onnx.numpy_helper.to_array(
                                      next(t for t in model.graph.initializer if t.name == "/attn/q.weight")))


def test_golden_files_use_msit_naming(cache):
    dump = golden_dump(models.passing_mlp(), make_inputs(models.passing_mlp()), cache=cache)
    import json
    from pathlib import Path

    # the tensors are records of one pack file; the index keeps the names their files would have
    index = json.loads((Path(dump.meta["cache_entry"]) / "npy_index.json").read_text())
    files = sorted(index["files"])
    assert files and all(GOLDEN_PATTERN.match(f) for f in files)
    assert any(f.startswith("fc1_MatMul.0.") for f in files)
    assert any(f.startswith("input_fc1_MatMul.1.") for f in files)


def test_golden_is_cached_by_model_inputs_and_shape(cache):
    model = models.passing_mlp()
    x = make_inputs(model)
    first = golden_dump(model, x, cache=cache)
    assert cache.stats.misses == 1
    again = golden_dump(model, {"x": x["x"].copy()}, cache=cache)
    assert cache.stats.as_dict() == {"hits": 1, "misses": 1, "rebuilt": 0}
    assert again.meta["cache_entry"] == first.meta["cache_entry"]
    golden_dump(model, make_inputs(model, seed=1), cache=cache)
    assert cache.stats.misses == 2


def test_golden_normalises_names_and_resolves_dynamic_dims_from_inputs(cache):
    model = models.unnamed_model()
    dump = golden_dump(model, {"x": np.ones((3, 4), np.float32)}, cache=cache)
    assert dump.names == ["MatMul_0", "dup", "Relu_1", "dup_1"]
    assert dump["dup_1"].output(0).shape == (3, 4)
    assert dump.meta["graph"]["unnamed_nodes"] == 2
    assert dump.meta["graph"]["renamed_duplicates"] == 0  # ops sharing a name are refused


def test_golden_inlines_the_taken_if_branch(cache):
    model = models.if_model()
    dump = golden_dump(model, {"x": np.full((2, 4), -1.0, np.float32)}, cache=cache)
    assert "pick" not in dump and "times3" in dump
    np.testing.assert_array_equal(dump["times3"].output(0).load(), np.full((2, 4), -3.0, np.float32))
    assert dump.meta["graph"]["inlined_ifs"] == [["pick", "else"]]


def test_input_shape_that_contradicts_the_inputs_is_an_error(cache):
    with pytest.raises(ConfigError, match=r"input 'x': input_shape says \[2, 4\], the given array has \[3, 4\]"):
        golden_dump(models.unnamed_model(), {"x": np.ones((3, 4), np.float32)}, cache=cache,
                    input_shape={"x": (2, 4)})


def test_missing_input_is_an_error_naming_it(cache):
    with pytest.raises(ConfigError, match="model input 'x' not given"):
        golden_dump(models.passing_mlp(), {}, cache=cache)


def test_model_path_and_proto_give_the_same_dump(cache, tmp_path):
    model = models.conv_bn_relu()
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    x = make_inputs(model)
    a = golden_dump(str(path), x, cache=cache)
    b = golden_dump(model, x, cache=cache)
    assert a.names == b.names and a.model_name == "m"
    np.testing.assert_array_equal(a["fc"].output(0).load(), b["fc"].output(0).load())


def test_loop_outputs_are_dumped_and_its_body_is_reported_not_dumped(cache):
    from onnx import TensorProto, helper

    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Add", ["acc_in", "x"], ["acc_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, None)])
    g = helper.make_graph([helper.make_node("Loop", ["n", "", "x"], ["acc"], name="loop", body=body),
                           helper.make_node("Relu", ["acc"], ["y"], name="relu")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          initializer=[onnx.numpy_helper.from_array(np.array(2, np.int64), "n")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    dump = golden_dump(model, {"x": np.array([1.0, -1.0], np.float32)}, cache=cache)
    assert dump.names == ["loop", "relu"]
    np.testing.assert_array_equal(dump["loop"].output(0).load(), [3.0, -3.0])
    assert [t.kind for t in dump["loop"].inputs] == ["input", "input"]  # n and x; the empty cond skipped
    assert dump.meta["graph"]["subgraph_ops"] == [["loop", "Loop"]]
    assert "not dumped" in dump.meta["graph"]["subgraph_note"]


def test_unreadable_model_file_is_named(cache, tmp_path):
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"\x00not a model")
    with pytest.raises(ConfigError, match="broken.onnx: cannot read ONNX model"):
        golden_dump(bad, {}, cache=cache)


def test_output_nodes_feed_the_csv_is_output_node_column(cache):
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.report.csv_report import csv_rows

    model = models.overflow_model()
    inputs = make_inputs(model)
    golden = golden_dump(model, inputs, cache=cache)
    assert golden.meta["output_nodes"] == ["fc2/Add"]
    backend = EmulatorBackend(cache)
    actual = backend.run(backend.convert(model, "default"), inputs)
    rows = {row[2]: (row[5], row[-2]) for row in csv_rows(compare_dumps(actual, golden))}
    # msit's rule (cmp_process._is_output_node): the whole GroundTruth cell among the output
    # nodes, so the fused MatMul+Add covering the output node reads NO, as msit writes it
    assert rows["fc2/MatMul"] == ("fc2/MatMul,fc2/Add", "NO")
    assert {v for _, v in rows.values()} == {"NO"}


def test_omitted_optional_slots_keep_every_tensor_at_its_slot_index(tmp_path):
    """LSTM outputs ["", "Y_h", "Y_c"]: Y_h is output 1 for ATC (ConstructInputOutputContext)
    and msit (enumerate(node.output)); the golden numbered only the tensors present, so a
    device's Y_h (origin index 1) was compared with Y_c. Resize(x, "", scales): scales is
    input 2. The emulator's origins count the omitted slots too (review helper)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.core.modes import Mode

    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((1, 20, 4)).astype(np.float32) * 0.3, "W")
    r = numpy_helper.from_array(rng.standard_normal((1, 20, 5)).astype(np.float32) * 0.3, "R")
    graph = helper.make_graph(
        [helper.make_node("LSTM", ["x", "W", "R"], ["", "Y_h", "Y_c"], name="lstm",
                          hidden_size=5),
         helper.make_node("Add", ["Y_h", "Y_c"], ["z"], name="add")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 1, 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 1, 5])], [w, r])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    cache = Cache(tmp_path / "cache")
    x = {"x": rng.standard_normal((3, 1, 4)).astype(np.float32)}
    golden = golden_dump(model, x, cache=cache)
    assert [t.index for t in golden.get("lstm").outputs] == [1, 2]
    backend = EmulatorBackend(cache)
    dump = backend.run(backend.convert(model, Mode(precision_mode="must_keep_origin_dtype")), x,
                       dump=True, dump_dir=tmp_path / "d")
    assert [t.origin for t in dump.get("lstm").outputs] == [("lstm", 1), ("lstm", 2)]
    result = compare_dumps(dump, golden)
    assert result.judge(0.999).passed  # Y_h against Y_h, Y_c against Y_c
