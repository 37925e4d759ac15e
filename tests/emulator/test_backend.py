"""EmulatorBackend: cached conversion, dumps in the real Ascend layout, the acceptance flow."""
import re
import struct

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend  # noqa: E402
from pytest_ascend_accuracy.backends.emulator.faults import Fault  # noqa: E402
from pytest_ascend_accuracy.compare.engine import compare_dumps  # noqa: E402
from pytest_ascend_accuracy.dump.layout import MSACCUCMP_PATTERN, sanitize  # noqa: E402
from pytest_ascend_accuracy.dump.loader import load_dump  # noqa: E402
from pytest_ascend_accuracy.dump.om_json import read_om_json  # noqa: E402
from pytest_ascend_accuracy.errors import ConfigError  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.core.modes import BUFFER_OFF, DEFAULT, FUSION_OFF, HIGH_PRECISION, keep_dtype  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402


@pytest.fixture
def overflow_model(tmp_path):
    path = tmp_path / "overflow.onnx"
    onnx.save(models.overflow_model(), str(path))
    return path


def _first_failure(actual, golden):
    verdict = compare_dumps(actual, golden).judge(threshold=0.95)
    return verdict.passed, (verdict.first_failure.op_name if verdict.first_failure else None)


def test_overflow_model_acceptance(cache, overflow_model, tmp_path):
    x = make_inputs(overflow_model)
    golden = golden_dump(overflow_model, x, cache=cache)
    backend = EmulatorBackend(cache)
    runs = {mode.name: backend.run(backend.convert(overflow_model, mode), x, dump_dir=tmp_path / "dumps")
            for mode in (DEFAULT, HIGH_PRECISION, keep_dtype(["norm"]), FUSION_OFF)}
    assert _first_failure(runs["default"], golden) == (False, "norm")
    assert _first_failure(runs["fusion_off"], golden) == (False, "norm")
    assert _first_failure(runs["high_precision"], golden) == (True, None)
    assert _first_failure(runs["keep_dtype(norm)"], golden) == (True, None)
    # fused names map back to golden ops, and coverage says so
    result = compare_dumps(runs["default"], golden)
    fc1 = runs["default"]["fc1/MatMul"]
    assert fc1.original_names == ("fc1/MatMul", "fc1/Add") and fc1.output(0).origin == ("fc1/Add", 0)
    assert result.coverage.fused == ("fc1/MatMul", "fc2/MatMul")  # the model's own names
    assert result.coverage.compared == ("fc1/Add", "to_channels", "norm", "to_flat", "fc2/Add")
    assert result.coverage.unmatched_golden == () and result.coverage.unmatched_actual == ()
    assert result.coverage.matched == len(golden) == 7


def test_dumps_are_written_in_the_real_binary_layout(cache, tmp_path):
    model = models.conv_bn_relu()
    backend = EmulatorBackend(cache)
    converted = backend.convert(model, DEFAULT)
    dump = backend.run(converted, make_inputs(model), dump_dir=tmp_path / "dumps")
    leaf = tmp_path / "dumps"
    stamp = [p.name for p in leaf.iterdir()]
    assert len(stamp) == 1 and re.fullmatch(r"\d{14}", stamp[0])
    leaf = leaf / stamp[0] / "0" / "conv_bn_relu" / "1" / "0"
    files = sorted(p.name for p in leaf.iterdir())
    assert len(files) == 5 and all(MSACCUCMP_PATTERN.match(f) for f in files)
    assert any(f.startswith("Conv2D.conv1relu1.") for f in files)
    raw = next(leaf.glob("Conv2D.conv1relu1.*")).read_bytes()
    header_len = struct.unpack("<Q", raw[:8])[0]
    assert 8 + header_len < len(raw) and b"2.0" in raw[8:8 + header_len]
    assert dump.kind == "ascend" and dump.model_name == "conv_bn_relu"
    op = dump["conv1relu1"]
    assert op.op_type == "Conv2D" and op.original_names == ("conv1", "bn1", "relu1")
    assert op.output(0).dtype == "float16" and op.output(0).origin == ("relu1", 0)
    assert [t.dtype for t in op.inputs] == ["float16"] * 3  # x, folded weight, folded bias
    # reading the directory again from the dump root finds the same ops
    again = load_dump(tmp_path / "dumps", om_json=converted.om_json)
    assert again.names == dump.names == ["conv1relu1", "conv2relu2", "gap", "flatten", "fc"]


def test_om_json_lists_fused_ops_with_original_names(cache):
    converted = EmulatorBackend(cache).convert(models.transformer_block(), DEFAULT)
    graph = read_om_json(converted.om_json)
    assert graph.name == "transformer_block"
    ln = graph.by_name["/ln1/ReduceMean"]
    assert ln.type == "LayerNorm" and len(ln.original_names) == 9
    assert ln.output_origins == (("/ln1/Add_1", 0),)
    assert graph.by_name["/attn/q/MatMul"].inputs == ("/ln1/ReduceMean:0", "/attn/q.weight:0",
                                                      "/attn/q.bias:0")
    assert [op.id for op in graph.ops] == list(range(len(graph.ops)))
    assert "precision_mode=force_fp16" in graph.attrs["atc_cmdline"]


def test_convert_is_cached_and_keyed_by_everything_that_changes_numbers(cache):
    model = models.passing_mlp()
    backend = EmulatorBackend(cache)
    a = backend.convert(model, DEFAULT)
    b = backend.convert(model, DEFAULT)
    assert a.key == b.key and cache.stats.hits == 1 and cache.stats.misses == 1
    keys = {a.key, backend.convert(model, HIGH_PRECISION).key, backend.convert(model, BUFFER_OFF).key,
            EmulatorBackend(cache, overflow="saturate").convert(model, DEFAULT).key,
            EmulatorBackend(cache, faults=[Fault.on_op("relu1")]).convert(model, DEFAULT).key}
    assert len(keys) == 5  # (an ATC option it cannot emulate is refused: test_atc_option_check)
    assert (a.path.parent / "plan.json").is_file() and a.path.name == "model.onnx"


def test_buffer_off_is_numerically_neutral(cache, tmp_path):
    model = models.transformer_block()
    x = make_inputs(model)
    backend = EmulatorBackend(cache)
    on = backend.run(backend.convert(model, DEFAULT), x, dump_dir=tmp_path)
    off = backend.run(backend.convert(model, BUFFER_OFF), x, dump_dir=tmp_path)
    assert on.names == off.names
    for a, b in zip(on.ops, off.ops):
        np.testing.assert_array_equal(a.output(0).load(), b.output(0).load())


def test_repeated_runs_into_one_dump_path_never_mix(cache, tmp_path):
    model = models.passing_mlp()
    backend = EmulatorBackend(cache)
    conv = backend.convert(model, DEFAULT)
    first = backend.run(conv, make_inputs(model), dump_dir=tmp_path)
    second = backend.run(conv, make_inputs(model, seed=5), dump_dir=tmp_path)
    assert first.root != second.root
    assert not np.array_equal(first["fc3/MatMul"].output(0).load(), second["fc3/MatMul"].output(0).load())


def test_run_without_dump_returns_model_outputs(cache):
    model = models.overflow_model()
    backend = EmulatorBackend(cache)
    out = backend.run(backend.convert(model, DEFAULT), make_inputs(model), dump=False)
    assert out.names == ["y"] and out["y"].output(0).shape == (1, 8)


def test_dynamic_model_needs_input_shape_and_checks_inputs(cache, tmp_path):
    backend = EmulatorBackend(cache)
    with pytest.raises(ConfigError, match="input 'x' dimension 0 \\('N'\\) is dynamic"):
        backend.convert(models.unnamed_model(), DEFAULT)
    conv = backend.convert(models.unnamed_model(), DEFAULT, input_shape={"x": (2, 4)})
    dump = backend.run(conv, {"x": np.ones((2, 4), np.float32)}, dump_dir=tmp_path)
    assert dump.names == ["MatMul_0Relu_1", "dup_1"]  # MatMul + bias + Relu fused
    assert dump["MatMul_0Relu_1"].original_names == ("MatMul_0", "dup", "Relu_1")
    with pytest.raises(ConfigError, match=r"input 'x' has shape \[3, 4\], the model declares \[2, 4\]"):
        backend.run(conv, {"x": np.ones((3, 4), np.float32)}, dump_dir=tmp_path)


def test_fault_reaches_the_dump_and_compare_finds_it(cache, tmp_path):
    model = models.conv_bn_relu()
    x = make_inputs(model)
    golden = golden_dump(model, x, cache=cache)
    backend = EmulatorBackend(cache, faults=[Fault.on_rule("TbeCommonRules0FusionPass")])
    converted = backend.convert(model, DEFAULT)
    assert converted.info["emulator"]["faults_active"]
    assert _first_failure(backend.run(converted, x, dump_dir=tmp_path), golden) == (False, "conv1relu1")
    assert _first_failure(backend.run(backend.convert(model, FUSION_OFF), x, dump_dir=tmp_path), golden) == \
        (True, None)


def test_describe_names_the_backend(cache):
    text = EmulatorBackend(cache, overflow="saturate").describe()
    assert text.startswith("emulator (CPU, onnxruntime ") and "overflow=saturate" in text
    assert sanitize("/a.b") == "_a_b"


def test_convert_of_a_missing_or_broken_model_names_the_file(cache, tmp_path):
    backend = EmulatorBackend(cache)
    with pytest.raises(ConfigError, match="nope.onnx: ONNX model file not found"):
        backend.convert(tmp_path / "nope.onnx", DEFAULT)
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"\x00not a model")
    with pytest.raises(ConfigError, match="broken.onnx: cannot read ONNX model"):
        backend.convert(bad, DEFAULT)


def test_bf16_modes_dump_bfloat16_tensors(cache, tmp_path):
    from pytest_ascend_accuracy.backends.emulator.rounding import round_bf16
    from pytest_ascend_accuracy.core.modes import Mode

    model = models.passing_mlp()
    x = make_inputs(model)
    backend = EmulatorBackend(cache)
    dump = backend.run(backend.convert(model, Mode(precision_mode="allow_fp32_to_bf16", fusion=False)), x,
                       dump_dir=tmp_path)
    mm = dump["fc1/MatMul"]
    assert mm.output(0).dtype == "bfloat16" and mm.inputs[0].dtype == "bfloat16"
    np.testing.assert_array_equal(mm.inputs[0].load(), round_bf16(x["x"]))
    assert dump["relu1"].output(0).dtype == "float32"  # vector ops keep fp32 in this mode


def test_assert_accuracy_on_the_overflow_model(cache, overflow_model, tmp_path):
    from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy

    x = make_inputs(overflow_model)
    golden = golden_dump(overflow_model, x, cache=cache)
    backend = EmulatorBackend(cache)
    with pytest.raises(AccuracyFailure) as failure:
        assert_accuracy(backend.run(backend.convert(overflow_model, DEFAULT), x, dump_dir=tmp_path), golden)
    assert failure.value.verdict.first_failure.op_name == "norm"
    assert "norm" in str(failure.value)
    for mode in (HIGH_PRECISION, keep_dtype(["norm"])):
        result = assert_accuracy(backend.run(backend.convert(overflow_model, mode), x, dump_dir=tmp_path), golden)
        assert result.coverage.matched == 7
