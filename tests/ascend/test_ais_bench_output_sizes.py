"""The ais_bench runtime and oms whose output size is unknown, against the FAKES.

Real aclruntime (ait mirror mjlovesz/sync-ait, ``ait/components/benchmark``) allocates every
output buffer before the run (``CreateOutMemoryData``): a NonZero output (aclmdlGetOutputSizeByIndex
0) fails static mode with APP_ERR_INFER_OUTPUTSIZE_IS_ZERO, and dymshape needs byte sizes up
front. The fake ran such an om in any mode, so the driver's static ``infer`` passed here and failed
on hardware with aclruntime's words and no way forward. The driver now refuses it before the run,
naming the output and the pyACL runtime, whose advice is applied here. Also: aclruntime compares
input bytes only, so a 0-d ``sr`` (fed as ``[1]`` by ``np.ascontiguousarray``) runs.
"""
import re

import numpy as np
import pytest

from pytest_ascend_accuracy.errors import BackendError

X = np.array([[0, 1, 0, 2]], np.float32)


def nonzero_model(path):
    """x float [1, 4] -> y = NonZero(x), int64 [2, n]: a size no conversion can know."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["y"], name="nz")], "nonzero",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2, "n"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def fake_backend(monkeypatch, tmp_path, **kw):
    """(AscendBackend on the fakes, for their chip (ais_bench reports none), the fakes);
    ``runtime`` goes to the backend."""
    from pytest_ascend_accuracy.backends.ascend import AscendBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.testing.fake_ascend import use_fake_ascend

    runtime = kw.pop("runtime", None)
    fakes = use_fake_ascend(monkeypatch, tmp_path / "fake", **kw)
    return AscendBackend(Cache(tmp_path / "cache"), soc_version="Ascend310P3", progress=None,
                         runtime=runtime), fakes


def test_the_fake_aclruntime_allocates_outputs_before_the_run(monkeypatch, tmp_path):
    """interface.py's modes and aclruntime's CreateOutMemoryData, on a NonZero om."""
    be, _ = fake_backend(monkeypatch, tmp_path, flavor="ais_bench", runtime="ais_bench")
    om = be.convert(nonzero_model(tmp_path / "nz.onnx")).path
    from ais_bench.infer.interface import InferSession

    session = InferSession(0, str(om))
    assert [(d.name, d.shape, d.size) for d in session.get_outputs()] == [("y", [2, -1], 0)]
    with pytest.raises(RuntimeError, match=r"^wrong infer_mode:auto, only support \"static\","):
        session.infer([X], mode="auto")
    with pytest.raises(RuntimeError, match=r"^\[3011\]\[Undefined error code\] .*out i:0 size "
                                           r"is zero"):
        session.infer([X], mode="static")
    with pytest.raises(RuntimeError, match=r"^\[-1\]\[ACL: general failure\] .*output i:0 \(y\) "
                                           r"needs 32 bytes, its buffer has 8"):
        session.infer([X], mode="dymshape", custom_sizes=8)  # an int: one per output
    out = session.infer([X], mode="dymshape", custom_sizes=[32])
    np.testing.assert_array_equal(out[0], np.stack(np.nonzero(X)))
    with pytest.raises(RuntimeError, match=r"dims \[2, -1\] .* \[2, 4294967295\]"):
        session.infer([X], mode="static")  # the custom size stays; the dims are the om's
    session.free_resource()


def test_ais_bench_refuses_an_unknown_output_size_and_the_advice_runs_it(monkeypatch, tmp_path):
    """The error names the om, 'y' and the acl runtime; both pasted forms run the same om
    and compare with the golden dump to a verdict."""
    from pytest_ascend_accuracy.backends.ascend import AscendBackend
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump

    be, fakes = fake_backend(monkeypatch, tmp_path, flavor="both", runtime="ais_bench")
    model = nonzero_model(tmp_path / "nz.onnx")
    converted = be.convert(model)
    with pytest.raises(BackendError) as info:
        be.run(converted, {"x": X})
    text = str(info.value)
    assert f"cannot run {converted.path}" in text and "'y' (dims [2, -1], size 0)" in text, text
    assert "AscendBackend(runtime='acl')" in text and "ASCEND_ACCURACY_RUNTIME=acl" in text, text
    assert "pyACL does not import" not in text  # it does here: the advice can be followed
    assert fakes.npu.calls.count("InferSession(0)") == 1 and not fakes.npu.dumps  # never ran
    be.close()

    golden = golden_dump(model, {"x": X}, cache=be.cache)
    kwargs = dict(re.findall(r"AscendBackend\((\w+)='(\w+)'\)", text))  # {'runtime': 'acl'}
    env = re.search(r"(ASCEND_ACCURACY_RUNTIME)=(\w+)", text)
    with monkeypatch.context() as mp:
        mp.setenv(*env.groups())
        for advised in (AscendBackend(be.cache, progress=None, **kwargs),  # runtime='acl'
                        AscendBackend(be.cache, progress=None)):  # the env variable
            with advised:
                dump = advised.run(advised.convert(model), {"x": X})
                assert dump.meta["runtime"] == "acl"
                np.testing.assert_array_equal(
                    advised.outputs(advised.convert(model), {"x": X})["y"], np.stack(np.nonzero(X)))
                result = compare_dumps(dump, golden)
                assert [r.op_name for r in result.rows] == ["nz"]
                assert result.judge(threshold=0.99).passed


def test_the_refusal_says_when_pyacl_does_not_import(monkeypatch, tmp_path):
    be, _ = fake_backend(monkeypatch, tmp_path, flavor="ais_bench", runtime="ais_bench")
    with pytest.raises(BackendError, match=r"ASCEND_ACCURACY_RUNTIME=acl\): .* pyACL does not "
                                           r"import in this process \(ModuleNotFoundError"):
        be.outputs(be.convert(nonzero_model(tmp_path / "nz.onnx")), {"x": X})


def test_a_size_with_unknown_dims_is_refused_too():
    """A shape-range om: a size (the largest) but dims -1, which static mode returns as
    4294967295; sizes of known outputs pass."""
    from types import SimpleNamespace as Desc

    from pytest_ascend_accuracy.backends.ascend.ais_bench_driver import check_output_sizes

    check_output_sizes("m.om", [Desc(name="y", shape=[1, 4], size=16)])
    with pytest.raises(BackendError, match=r"output\(s\) 'b' \(dims \[-1, 4\], size 64\) unknown"):
        check_output_sizes("m.om", [Desc(name="a", shape=[1, 4], size=16),
                                    Desc(name="b", shape=[-1, 4], size=64)])


def test_a_0d_input_runs_on_the_ais_bench_runtime(monkeypatch, tmp_path):
    """silero_vad's 0-d int64 ``sr``: aclruntime compares its 8 bytes, not its shape."""
    from tests.ascend.test_h114_scalar_aipp_dtype_gear import scalar_model

    be, _ = fake_backend(monkeypatch, tmp_path, flavor="ais_bench", runtime="ais_bench")
    converted = be.convert(scalar_model(tmp_path / "scalar.onnx"), input_shape={"x": (1, 4)})
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    out = be.outputs(converted, {"x": x, "sr": np.array(16000, np.int64)})
    np.testing.assert_array_equal(out["y"], x * 16000)
    with pytest.raises(BackendError, match=r"in size:16 needsize:8 not match"):  # bytes
        be.runtime.run(converted.path, {"x": x, "sr": np.array([1, 2], np.int64)},
                       model_name=converted.model_name, input_names=["x", "sr"])
