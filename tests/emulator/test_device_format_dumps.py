"""The emulator dumps conv-like and matmul tensors in NPU layouts (NC1HWC0, FRACTAL_Z, FRACTAL_NZ)
as a device does, and such dumps compare to the golden exactly as ND dumps do."""
import dataclasses
import math

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend  # noqa: E402
from pytest_ascend_accuracy.backends.emulator.faults import Fault  # noqa: E402
from pytest_ascend_accuracy.compare.engine import compare_dumps  # noqa: E402
from pytest_ascend_accuracy.core.modes import DEFAULT, FUSION_OFF  # noqa: E402
from pytest_ascend_accuracy.dump.ascend_bin import parse_dump_file  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402


def _run(cache, tmp_path, model, mode=DEFAULT, **kw):
    backend = EmulatorBackend(cache, **kw)
    return backend.run(backend.convert(model, mode), make_inputs(model),
                       dump_dir=tmp_path / f"dumps-{kw.get('device_formats', True)}")


def _layouts(dump):
    return {op.name: ([t.format for t in op.inputs], [t.format for t in op.outputs]) for op in dump.ops}


def test_conv_and_matmul_tensors_are_dumped_in_device_layouts(cache, tmp_path):
    dump = _run(cache, tmp_path, models.conv_bn_relu())
    layouts = _layouts(dump)
    assert layouts["conv1relu1"] == (["NC1HWC0", "FRACTAL_Z", "ND"], ["NC1HWC0"])  # x, filter, bias
    assert layouts["gap"] == (["NC1HWC0"], ["NC1HWC0"])
    assert layouts["flatten"] == (["ND"], ["ND"])
    assert layouts["fc"] == (["FRACTAL_NZ", "FRACTAL_NZ", "ND"], ["FRACTAL_NZ"])
    # the file holds the device shape and the framework's original shape, as a device writes them
    parsed = parse_dump_file(dump["conv1relu1"].source)
    x, w, _ = parsed.inputs
    assert (x.device_shape, x.original_shape) == ((1, 1, 16, 16, 16), (1, 3, 16, 16))
    assert (w.device_shape, w.original_shape) == ((9, 1, 16, 16), (8, 3, 3, 3))
    out = parse_dump_file(dump["fc"].source).outputs[0]
    assert (out.format, out.device_shape, out.original_shape) == ("FRACTAL_NZ", (1, 1, 16, 16), (1, 4))
    # read back: the logical tensors, identical to an ND dump of the same run
    nd = _run(cache, tmp_path, models.conv_bn_relu(), device_formats=False)
    assert set(f for ins, outs in _layouts(nd).values() for f in ins + outs) == {"ND"}
    for op in nd.ops:
        for a, b in zip(op.inputs + op.outputs, dump[op.name].inputs + dump[op.name].outputs):
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_array_equal(a.load(), b.load())


def test_vector_ops_and_non_4d_tensors_stay_nd(cache, tmp_path):
    layouts = _layouts(_run(cache, tmp_path, models.overflow_model()))
    assert layouts["norm"] == (["ND"] * 5, ["ND"])  # a 3-D BatchNormalization: NCHW/ND on a device
    assert layouts["fc1/MatMul"] == (["FRACTAL_NZ", "FRACTAL_NZ", "ND"], ["FRACTAL_NZ"])


def _summary(result):
    verdict = result.judge(threshold=0.95)
    rows = [(r.op_name, r.slot, r.golden_name, r.shape, r.metrics) for r in result.rows]
    return verdict.passed, (verdict.first_failure.op_name if verdict.first_failure else None), rows


def _close(m1, m2):
    for f in dataclasses.fields(m1):
        a, b = getattr(m1, f.name), getattr(m2, f.name)
        if isinstance(a, float):
            assert (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), f.name
        else:
            assert a == b, f.name


CASES = {  # model, mode, faults -> (passes, first failing op)
    "conv passes": (models.conv_bn_relu, DEFAULT, (), (True, None)),
    "conv fault fails": (models.conv_bn_relu, DEFAULT, (Fault.on_op("conv2"),), (False, "conv2relu2")),
    "conv unfused fault fails": (models.conv_bn_relu, FUSION_OFF, (Fault.on_op("conv1"),), (False, "conv1")),
    "matmul passes": (models.passing_mlp, DEFAULT, (), (True, None)),
    "overflow fails": (models.overflow_model, DEFAULT, (), (False, "norm")),
    "matmul fault fails": (models.transformer_block, DEFAULT, (Fault.on_op("/mlp/fc2/MatMul"),), None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_device_format_dumps_compare_like_nd_dumps(case, cache, tmp_path):
    build, mode, faults, expected = CASES[case]
    model = build()
    golden = golden_dump(model, make_inputs(model), cache=cache)
    results = {}
    for on in (False, True):
        dump = _run(cache, tmp_path, model, mode, faults=faults, device_formats=on)
        results[on] = _summary(compare_dumps(dump, golden, compare_inputs=True))
    (nd_pass, nd_first, nd_rows), (dev_pass, dev_first, dev_rows) = results[False], results[True]
    assert (dev_pass, dev_first) == (nd_pass, nd_first)
    if expected is not None:
        assert (dev_pass, dev_first) == expected
    else:
        assert dev_pass is False
    assert [r[:4] for r in dev_rows] == [r[:4] for r in nd_rows]
    assert sum(r[4] is not None for r in dev_rows) > 0
    for a, b in zip(nd_rows, dev_rows):
        assert (a[4] is None) == (b[4] is None), a[:2]
        if a[4] is not None:
            _close(a[4], b[4])


def test_device_formats_off_is_another_conversion(cache):
    model = models.passing_mlp()
    on = EmulatorBackend(cache).convert(model, DEFAULT)
    off = EmulatorBackend(cache, device_formats=False).convert(model, DEFAULT)
    assert on.key != off.key
    assert on.info["emulator"]["device_formats"] is True
    assert off.info["emulator"]["device_formats"] is False


def test_om_json_describes_outputs_as_atc_does(cache):
    import json

    from pytest_ascend_accuracy.dump.om_json import OmTensorDesc, read_om_json

    model = models.conv_bn_relu()
    om = EmulatorBackend(cache).convert(model, DEFAULT).om_json
    descs = {op.name: op.output_descs[0] for op in read_om_json(om).ops}
    assert descs["conv1relu1"] == OmTensorDesc("DT_FLOAT16", "NC1HWC0", (1, 1, 16, 16, 16), (1, 8, 16, 16), "NCHW")
    assert descs["fc"] == OmTensorDesc("DT_FLOAT16", "FRACTAL_NZ", (1, 1, 16, 16), (1, 4), "ND")
    assert descs["flatten"] == OmTensorDesc("DT_FLOAT16", "ND", (1, 8), (1, 8), "ND")
    raw = json.loads(om.read_text())["graph"][0]["op"][0]["output_desc"][0]
    attrs = {a["key"]: a["value"] for a in raw["attr"]}
    assert attrs["_datadump_origin_format"] == {"s": "NCHW"}  # what msaccucmp converts to
    assert attrs["_datadump_origin_name"] == {"s": "relu1"}
    # without device formats the om json says so: device layout = framework layout
    om_nd = EmulatorBackend(cache, device_formats=False).convert(model, DEFAULT).om_json
    nd = {op.name: op.output_descs[0] for op in read_om_json(om_nd).ops}
    assert nd["conv1relu1"] == OmTensorDesc("DT_FLOAT16", "NCHW", (1, 8, 16, 16), (1, 8, 16, 16), "NCHW")
    assert nd["fc"].layout == "ND" and nd["fc"].shape == (1, 4)


@pytest.mark.parametrize("dump_mode", ["output", "all"])
def test_a_run_hands_over_the_headers_it_wrote(cache, tmp_path, monkeypatch, dump_mode):
    """The run's DumpSet comes from the headers its writer encoded, not read back from its
    files (``load_dump(..., written=...)``), and says all that reading the directory says."""
    from pytest_ascend_accuracy.dump import ascend_bin, loader
    from pytest_ascend_accuracy.dump.loader import load_dump

    model = models.conv_bn_relu()
    backend = EmulatorBackend(cache, dump_mode=dump_mode)
    converted = backend.convert(model, DEFAULT)
    parses = []
    real_parse = ascend_bin.parse_dump_file
    monkeypatch.setattr(loader, "parse_dump_file", lambda p: parses.append(p) or real_parse(p))
    dump = backend.run(converted, make_inputs(model), dump_dir=tmp_path / "d")
    assert parses == [] and len(dump.ops) > 3
    from_files = load_dump(dump.root, om_json=converted.om_json, model_name=converted.model_name)
    assert len(parses) == len(dump.ops)

    def facts(d):
        return [(op.name, op.op_type, op.order, op.original_names, op.source,
                 [(t.kind, t.index, t.dtype, t.shape, t.format, t.origin, t.source,
                   t.load().tobytes()) for t in op.inputs + op.outputs]) for op in d.ops]
    assert facts(dump) == facts(from_files)
    for key, value in from_files.meta.items():
        assert dump.meta[key] == value, key
