"""The FAKE NPU loads an om without running it, as aclmdlLoadFromFile does (H114): it ran the
model on all-zero inputs at load to learn its output shapes, and silero_vad's ``sr`` = 0 took
the If branch no caller feeds, which onnxruntime cannot run at the converted shape: the load
raised a bare onnxruntime exception. The om's input and output specs are now fixed at
conversion (``fake_om``); an onnxruntime failure at execution is an ACL error whose
``get_recent_err_msg`` names the fake, and an input ``--input_fp16_nodes`` names is float16 in
the om, as GE makes it."""
import numpy as np
import pytest

from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.errors import BackendError
from pytest_ascend_accuracy.testing import fake_runtime

SR = 16000


def _if_model(path, *, else_dims=(1, 4)):
    """``y = If(sr == 16000, Relu(x), else)`` on x float [1,4], sr int64 scalar: the else
    branch gathers column 9 of x (out of bounds: onnxruntime cannot run it), its output shape
    ``else_dims`` ([1,4] as the then branch's, or another, which leaves y's dims unknown)."""
    import onnx
    from onnx import TensorProto, helper

    then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="relu")], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1, 4])])
    idx = helper.make_tensor("idx", TensorProto.INT64, [else_dims[1]],
                             [0, 1, 2, 9][:else_dims[1]] + [9] * max(0, else_dims[1] - 4))
    other = helper.make_graph(
        [helper.make_node("Constant", [], ["i"], name="idx", value=idx),
         helper.make_node("Gather", ["x", "i"], ["e"], name="gather", axis=1)],
        "else", [], [helper.make_tensor_value_info("e", TensorProto.FLOAT, list(else_dims))])
    nodes = [
        helper.make_node("Constant", [], ["k"], name="k",
                         value=helper.make_tensor("kv", TensorProto.INT64, [], [SR])),
        helper.make_node("Equal", ["sr", "k"], ["c"], name="eq"),
        helper.make_node("If", ["c"], ["y"], name="If_0", then_branch=then, else_branch=other),
    ]
    graph = helper.make_graph(
        nodes, "iffy", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
                        helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "M"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def _open(acl):
    assert acl.init() in (0, 100002)  # the backend's soc probe may have initialised it
    assert acl.rt.set_device(0) == 0


def _buffers(acl, desc, arrays, out_sizes):
    in_ds, out_ds = acl.mdl.create_dataset(), acl.mdl.create_dataset()
    for array in arrays:
        data = np.ascontiguousarray(array).tobytes()
        dev, _ = acl.rt.malloc(len(data), 0)
        acl.rt.memcpy(dev, len(data), acl.util.bytes_to_ptr(data), len(data), 1)
        acl.mdl.add_dataset_buffer(in_ds, acl.create_data_buffer(dev, len(data)))
    for size in out_sizes:  # size 0: created with data 0 (the runtime allocates it)
        dev = acl.rt.malloc(size, 0)[0] if size else 0
        acl.mdl.add_dataset_buffer(out_ds, acl.create_data_buffer(dev, size))
    return in_ds, out_ds


def test_a_model_whose_zero_inputs_fail_loads_and_runs_on_the_fed_values(
        fake_atc_on_path, tmp_path, monkeypatch):
    npu = fake_runtime.install(monkeypatch, flavor="acl")
    be = AscendBackend(Cache(tmp_path / "cache"), progress=None)
    converted = be.convert(_if_model(tmp_path / "iffy.onnx"))
    x = np.array([[-1.0, 2.0, -3.0, 4.0]], np.float32)
    out = be.outputs(converted, {"x": x, "sr": np.array(SR, np.int64)})
    np.testing.assert_array_equal(out["y"], np.maximum(x, 0))
    with pytest.raises(BackendError) as info:  # the else branch: onnxruntime cannot run it
        be.outputs(converted, {"x": x, "sr": np.array(8000, np.int64)})
    text = str(info.value)
    assert "acl.mdl.execute failed with ACL error 500002" in text
    assert "the FAKE NPU (onnxruntime on the CPU standing in for the device) could not run " \
           "model 'iffy'" in text
    assert "gather" in text  # onnxruntime's reason, its first line
    assert npu.protocol_errors == []
    be.close()


def test_an_output_the_conversion_leaves_unknown_is_sized_as_acl_says(
        fake_atc_on_path, tmp_path, monkeypatch):
    """Branches of different shapes: y's second dim unknown (-1); aclmdlGetOutputSizeByIndex's page:
    its size is 0, a buffer created with data 0 and size 0 is allocated by the runtime, a small
    one fails saying the size it needs; get_cur_output_dims gives the run's dims."""
    fake_runtime.install(monkeypatch, flavor="acl")
    be = AscendBackend(Cache(tmp_path / "cache"), progress=None)
    converted = be.convert(_if_model(tmp_path / "iffy.onnx", else_dims=(1, 3)))
    import acl

    _open(acl)
    model_id, ret = acl.mdl.load_from_file(str(converted.path))
    assert ret == 0
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, model_id) == 0
    assert acl.mdl.get_output_dims(desc, 0)[0]["dims"] == [1, -1]  # merged per dim, as GE
    assert acl.mdl.get_output_size_by_index(desc, 0) == 0
    x = np.array([[-1.0, 2.0, -3.0, 4.0]], np.float32)
    in_ds, out_ds = _buffers(acl, desc, [x, np.array(SR, np.int64)], [0])
    assert acl.mdl.execute(model_id, in_ds, out_ds) == 0
    buf = acl.mdl.get_dataset_buffer(out_ds, 0)
    addr, size = acl.get_data_buffer_addr(buf), acl.get_data_buffer_size(buf)
    assert addr != 0 and size == 16
    dims = acl.mdl.get_cur_output_dims(desc, 0)[0]["dims"]
    got = np.frombuffer(acl.util.ptr_to_bytes(addr, size), np.float32).reshape(dims)
    np.testing.assert_array_equal(got, np.maximum(x, 0))
    small_in, small_out = _buffers(acl, desc, [x, np.array(SR, np.int64)], [8])
    assert acl.mdl.execute(model_id, small_in, small_out) != 0
    assert "output 0 ('y') needs 16 bytes; its buffer holds 8" in acl.get_recent_err_msg()


def test_input_fp16_nodes_makes_that_input_float16_in_the_om(
        fake_atc_on_path, tmp_path, monkeypatch):
    """ATC's --input_fp16_nodes page: the named input's data type is float16 (GE
    ProcessInputFP16 sets its Data node to DT_FLOAT16): half the bytes, fed float16."""
    from tests.ascend.conftest import build_model

    fake_runtime.install(monkeypatch, flavor="both")
    be = AscendBackend(Cache(tmp_path / "cache"), progress=None)
    converted = be.convert(build_model(tmp_path / "tiny.onnx"),
                           atc_options={"input_fp16_nodes": "x"})
    import acl

    _open(acl)
    model_id, ret = acl.mdl.load_from_file(str(converted.path))
    assert ret == 0
    desc = acl.mdl.create_desc()
    acl.mdl.get_desc(desc, model_id)
    assert acl.mdl.get_input_data_type(desc, 0) == 1  # ACL_FLOAT16
    assert acl.mdl.get_input_size_by_index(desc, 0) == 1 * 3 * 4 * 4 * 2
    assert acl.mdl.get_output_data_type(desc, 0) == 0  # the output stays float32
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 4)).astype(np.float16)
    in_ds, out_ds = _buffers(acl, desc, [x], [acl.mdl.get_output_size_by_index(desc, 0)])
    assert acl.mdl.execute(model_id, in_ds, out_ds) == 0
    from ais_bench.infer.interface import InferSession

    session = InferSession(0, str(converted.path))
    assert [(i.datatype, i.size) for i in session.get_inputs()] == [("float16", 96)]
    # aclruntime compares bytes only (CheckInVectorAndFillBaseTensor): float32 is twice 96
    with pytest.raises(RuntimeError, match=r"Check i:0 name:x in size:192 needsize:96 not match"):
        session.infer([x.astype(np.float32)])
    assert session.infer([x])[0].shape == (1, 4, 4, 4)
    session.free_resource()


def test_shapes_computed_from_static_shapes_are_fixed_at_conversion(
        fake_atc_on_path, tmp_path, monkeypatch):
    """Without a run the om still knows what ATC's folding knows: a Reshape target computed
    from Shape/Slice/Cast/Concat (PP-OCR cls and rec: ONNX inference alone left [-1, 2] and
    [-1, -1, 6625]) and an If on the input's shape (silero_vad_16k_op15), decided at
    conversion. The backend then runs such a model with its own output buffers."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def const(name, values):
        return helper.make_node("Constant", [], [name], name=name,
                                value=numpy_helper.from_array(np.array(values, np.int64)))

    one = helper.make_graph([helper.make_node("Relu", ["r"], ["t"], name="relu")], "then", [],
                            [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1, 8])])
    other = helper.make_graph([helper.make_node("Neg", ["r"], ["e"], name="neg")], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1, 8])])
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        const("b0", [0]), const("b1", [1]), const("tail", [-1]), const("one", [1]),
        helper.make_node("Slice", ["s", "b0", "b1"], ["n"], name="slice"),
        helper.make_node("Cast", ["n"], ["nf"], name="cast", to=TensorProto.INT64),
        helper.make_node("Concat", ["nf", "tail"], ["target"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["r"], name="reshape"),
        helper.make_node("Equal", ["n", "one"], ["c0"], name="eq"),
        helper.make_node("Squeeze", ["c0", "b0"], ["c"], name="sq"),
        helper.make_node("If", ["c"], ["y"], name="If_0", then_branch=one, else_branch=other),
    ]
    graph = helper.make_graph(
        nodes, "computed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "M"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(tmp_path / "computed.onnx"))
    fake_runtime.install(monkeypatch, flavor="acl")
    be = AscendBackend(Cache(tmp_path / "cache"), progress=None)
    converted = be.convert(tmp_path / "computed.onnx", input_shape={"x": (1, 2, 4)})
    from pytest_ascend_accuracy.testing.fake_om import read_fake_om

    assert read_fake_om(converted.path).io_specs()[1] == [("y", "float32", (1, 8))]
    x = np.arange(-4, 4, dtype=np.float32).reshape(1, 2, 4)
    np.testing.assert_array_equal(be.outputs(converted, {"x": x})["y"],
                                  np.maximum(x.reshape(1, 8), 0))
    be.close()


def test_an_output_the_om_leaves_unknown_is_read_from_the_buffer_the_runtime_allocated(
        fake_atc_on_path, tmp_path, monkeypatch):
    """The backend's ACL driver gave an output of size 0 (dims the om leaves unknown) a
    0-byte buffer, and execution failed 'needs 16 bytes; its buffer holds 0'; it now creates
    the buffer with data 0 and size 0, which the runtime allocates (aclmdlGetOutputSizeByIndex,
    method 1), reads it and frees it."""
    fake_runtime.install(monkeypatch, flavor="acl")
    be = AscendBackend(Cache(tmp_path / "cache"), progress=None)
    converted = be.convert(_if_model(tmp_path / "iffy.onnx", else_dims=(1, 6)))
    x = np.array([[-1.0, 2.0, -3.0, 4.0]], np.float32)
    out = be.outputs(converted, {"x": x, "sr": np.array(SR, np.int64)})
    np.testing.assert_array_equal(out["y"], np.maximum(x, 0))


def _two_unknown_dims_model(path):
    """``y = If(sr == 16000, Relu(x) [1,4], Reshape(x, [4,1]))``: both dims of y unknown."""
    import onnx
    from onnx import TensorProto, helper

    then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="relu")], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1, 4])])
    to = helper.make_tensor("to", TensorProto.INT64, [2], [4, 1])
    other = helper.make_graph(
        [helper.make_node("Constant", [], ["s"], name="shape", value=to),
         helper.make_node("Reshape", ["x", "s"], ["e"], name="column")],
        "else", [], [helper.make_tensor_value_info("e", TensorProto.FLOAT, [4, 1])])
    nodes = [helper.make_node("Constant", [], ["k"], name="k",
                              value=helper.make_tensor("kv", TensorProto.INT64, [], [SR])),
             helper.make_node("Equal", ["sr", "k"], ["c"], name="eq"),
             helper.make_node("If", ["c"], ["y"], name="If_0", then_branch=then,
                              else_branch=other)]
    graph = helper.make_graph(
        nodes, "twodims", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
                           helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "M"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_an_output_with_every_dim_unknown_takes_its_dims_from_the_dataset_and_frees_it(
        fake_atc_on_path, tmp_path, monkeypatch):
    """H116: aclmdlGetCurOutputDims gives a dynamic output's om dims (-1 where unknown), not
    the run's; the run's come from aclmdlGetDatasetTensorDesc after execution. The memory the
    runtime allocated is freed, whether the run passed or failed."""
    npu = fake_runtime.install(monkeypatch, flavor="acl")
    be = AscendBackend(Cache(tmp_path / "cache"), progress=None)
    converted = be.convert(_two_unknown_dims_model(tmp_path / "twodims.onnx"))
    x = np.array([[-1.0, 2.0, -3.0, 4.0]], np.float32)
    held = len(npu.memory)
    out = be.outputs(converted, {"x": x, "sr": np.array(SR, np.int64)})
    np.testing.assert_array_equal(out["y"], np.maximum(x, 0))
    out = be.outputs(converted, {"x": x, "sr": np.array(8000, np.int64)})
    np.testing.assert_array_equal(out["y"], x.reshape(4, 1))
    assert len(npu.memory) == held
