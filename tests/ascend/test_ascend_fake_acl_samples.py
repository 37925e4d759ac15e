"""Scripts written the way Ascend's own pyACL samples are written run against the FAKE acl
unchanged. The call sequences follow Ascend's ``sampleResnetQuickStart`` (python): get_run_mode,
init, set_device, create_context, create_stream, load_from_file, get_desc, create_dataset /
create_data_buffer / add_dataset_buffer, bytes_to_ptr or numpy_to_ptr, memcpy, execute,
get_dataset_buffer, get_data_buffer_addr, get_data_buffer_size, malloc_host,
get_cur_output_dims, ptr_to_bytes or ptr_to_numpy, and the release order; and a common async
variant (execute_async + synchronize_stream, get_input_dims, get_dataset_num_buffers)."""
import sys
import textwrap

import numpy as np
import pytest

from pytest_ascend_accuracy.testing import fake_runtime

SAMPLE_SYNC = textwrap.dedent('''
    import acl
    import numpy as np

    ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 0, 1, 2
    NPY_FLOAT32 = 11

    run_mode = acl.rt.get_run_mode()
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    context, ret = acl.rt.create_context(0)
    stream, ret = acl.rt.create_stream()
    model_id, ret = acl.mdl.load_from_file(OM)
    assert ret == 0
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, model_id) == 0

    in_size = acl.mdl.get_input_size_by_index(desc, 0)
    in_buffer, ret = acl.rt.malloc(in_size, ACL_MEM_MALLOC_HUGE_FIRST)
    in_dataset = acl.mdl.create_dataset()
    in_dataset, ret = acl.mdl.add_dataset_buffer(in_dataset, acl.create_data_buffer(in_buffer, in_size))
    out_size = acl.mdl.get_output_size_by_index(desc, 0)
    out_buffer, ret = acl.rt.malloc(out_size, ACL_MEM_MALLOC_HUGE_FIRST)
    out_dataset = acl.mdl.create_dataset()
    out_dataset, ret = acl.mdl.add_dataset_buffer(out_dataset, acl.create_data_buffer(out_buffer, out_size))

    image_bytes = np.frombuffer(IMAGE.tobytes())
    if "bytes_to_ptr" in dir(acl.util):
        data = image_bytes.tobytes()
        ptr = acl.util.bytes_to_ptr(data)
    else:
        ptr = acl.util.numpy_to_ptr(image_bytes)
    assert acl.rt.memcpy(in_buffer, in_size, ptr, in_size, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    assert acl.mdl.execute(model_id, in_dataset, out_dataset) == 0

    buf = acl.mdl.get_dataset_buffer(out_dataset, 0)
    addr = acl.get_data_buffer_addr(buf)
    size = acl.get_data_buffer_size(buf)
    host, ret = acl.rt.malloc_host(size)
    assert acl.rt.memcpy(host, size, addr, size, ACL_MEMCPY_DEVICE_TO_HOST) == 0
    dims, ret = acl.mdl.get_cur_output_dims(desc, 0)
    assert ret == 0
    if "ptr_to_bytes" in dir(acl.util):
        RESULT = np.frombuffer(acl.util.ptr_to_bytes(host, size), dtype=np.float32).reshape(dims["dims"])
    RESULT_VIA_NUMPY = acl.util.ptr_to_numpy(host, dims["dims"], NPY_FLOAT32).copy()
    assert acl.rt.free_host(host) == 0

    acl.rt.free(in_buffer)
    acl.mdl.destroy_dataset(in_dataset)
    acl.rt.free(out_buffer)
    acl.mdl.destroy_dataset(out_dataset)
    assert acl.mdl.unload(model_id) == 0
    acl.mdl.destroy_desc(desc)
    assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.destroy_context(context) == 0
    assert acl.rt.reset_device(0) == 0
    assert acl.finalize() == 0
''')

SAMPLE_ASYNC = textwrap.dedent('''
    import acl
    import numpy as np

    acl.init()
    acl.rt.set_device(0)
    context, _ = acl.rt.create_context(0)
    stream, _ = acl.rt.create_stream()
    model_id, _ = acl.mdl.load_from_file(OM)
    desc = acl.mdl.create_desc()
    acl.mdl.get_desc(desc, model_id)
    dims = acl.mdl.get_input_dims(desc, 0)[0]["dims"]
    datasets = []
    for sizes, source in ((acl.mdl.get_input_size_by_index, IMAGE), (acl.mdl.get_output_size_by_index, None)):
        dataset = acl.mdl.create_dataset()
        size = sizes(desc, 0)
        dev, _ = acl.rt.malloc(size, 2)  # ACL_MEM_MALLOC_NORMAL_ONLY
        if source is not None:
            acl.rt.memcpy(dev, size, acl.util.numpy_to_ptr(source), size, 1)
        acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(dev, size))
        datasets.append(dataset)
    assert acl.mdl.execute_async(model_id, datasets[0], datasets[1], stream) == 0
    out = acl.mdl.get_dataset_buffer(datasets[1], 0)
    size = acl.get_data_buffer_size_v2(out)
    BEFORE_SYNC = acl.util.ptr_to_numpy(acl.get_data_buffer_addr(out), (size // 4,), 11).copy()
    assert acl.rt.synchronize_stream(stream) == 0
    RESULT = acl.util.ptr_to_numpy(acl.get_data_buffer_addr(out), (size // 4,), 11).copy()
    for dataset in datasets:
        for i in range(acl.mdl.get_dataset_num_buffers(dataset)):
            acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(dataset, i))
        acl.mdl.destroy_dataset(dataset)
    acl.mdl.unload(model_id)
    acl.rt.destroy_stream(stream)
    acl.rt.destroy_context(context)
    acl.rt.reset_device(0)
    acl.finalize()
''')


@pytest.fixture
def image():
    return np.random.default_rng(3).standard_normal((1, 3, 4, 4)).astype(np.float32)


def expected_output(om, image):
    """What the FAKE runtime computes for the fake om: the ONNX model in float32."""
    import onnxruntime as ort

    from pytest_ascend_accuracy.testing.fake_om import read_fake_om

    sess = ort.InferenceSession(read_fake_om(om).model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": image})[0]


def test_resnet_quick_start_style_script_runs_unchanged(monkeypatch, fake_oms, image):
    npu = fake_runtime.install(monkeypatch, flavor="acl")
    scope = {"OM": str(fake_oms["tiny"]), "IMAGE": image}
    exec(compile(SAMPLE_SYNC, "sample_resnet_quick_start_style.py", "exec"), scope)
    want = expected_output(fake_oms["tiny"], image)
    np.testing.assert_allclose(scope["RESULT"], want, rtol=1e-6)
    np.testing.assert_array_equal(scope["RESULT_VIA_NUMPY"], scope["RESULT"])
    assert npu.calls[:3] == ["init", "rt.set_device(0)", "rt.create_context(0)"] and "rt.create_stream" in npu.calls
    assert not npu.models and not npu.streams and not npu.acl_initialised and npu.protocol_errors == []


def test_async_execution_lands_when_the_stream_is_synchronised(monkeypatch, fake_oms, image):
    fake_runtime.install(monkeypatch, flavor="acl")
    scope = {"OM": str(fake_oms["tiny"]), "IMAGE": image}
    exec(compile(SAMPLE_ASYNC, "sample_async_style.py", "exec"), scope)
    want = expected_output(fake_oms["tiny"], image).ravel()
    assert not np.any(scope["BEFORE_SYNC"])  # execute_async has only queued the work
    np.testing.assert_allclose(scope["RESULT"], want, rtol=1e-6)
    assert "acl" in sys.modules and getattr(sys.modules["acl"], "__fake__", False)
