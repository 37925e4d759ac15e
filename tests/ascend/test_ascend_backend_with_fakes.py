"""The whole AscendBackend path, convert -> run -> load_dump, against FAKES only: the fake atc on
PATH and the fake pyACL / ais_bench modules in sys.modules. Checks the exact ATC argv, the cache
entry, acl.json, the DumpSet, and that every bad input is a clear error leaving the cache intact."""
import hashlib
import json
import os

import numpy as np
import pytest

from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.errors import BackendError, ConfigError, ConversionError, DumpFormatError
from pytest_ascend_accuracy.core.modes import DEFAULT, FUSION_OFF, HIGH_PRECISION, Mode, keep_dtype
from pytest_ascend_accuracy.testing import fake_runtime


def snapshot(root):
    """{relative path: sha256} of every file under the cache root, lock files excluded."""
    out = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if rel.split(os.sep)[0] != ".locks":
                with open(path, "rb") as f:
                    out[rel] = hashlib.sha256(f.read()).hexdigest()
    return out


def reference_outputs(model_path, x):
    """Every node output of the model under onnxruntime fp32 (what the fake runtime computes)."""
    import onnx
    import onnxruntime as ort

    model = onnx.load(str(model_path))
    for node in model.graph.node:
        for out in node.output:
            if out not in {o.name for o in model.graph.output}:
                model.graph.output.append(onnx.ValueInfoProto(name=out))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, {"x": x})))


@pytest.fixture
def cache(tmp_path):
    return Cache(tmp_path / "cache")


@pytest.fixture
def x():
    return np.random.default_rng(7).standard_normal((1, 3, 4, 4)).astype(np.float32)


@pytest.fixture
def backend(cache, fake_atc_on_path, monkeypatch):
    npu = fake_runtime.install(monkeypatch, flavor="acl")
    be = AscendBackend(cache, device_id=0, progress=None)
    be.npu = npu
    yield be
    be.close()


def test_fakes_convert_run_and_load_dump_end_to_end(backend, tiny_model, x, atc_calls, fake_atc_on_path,
                                                    fake_toolkit):
    converted = backend.convert(tiny_model, DEFAULT)
    entry = converted.path.parent
    calls = atc_calls(fake_atc_on_path)
    assert [c["argv"] for c in calls] == [
        [f"--model={tiny_model.resolve()}", "--framework=5", "--output=tiny", "--soc_version=Ascend310P3",
         "--input_format=NCHW", "--precision_mode_v2=fp16", "--log=error"],
        ["--mode=1", "--om=tiny.om", "--json=tiny.json"]]
    assert all(c["cwd"] != str(entry) for c in calls)  # built in a temporary dir, renamed afterwards
    files = sorted(p.name for p in entry.iterdir())
    assert {"tiny.om", "tiny.json", "atc.log", "atc_json.log", "atc_command.json", ".manifest.json"} <= set(files)
    record = json.loads((entry / "atc_command.json").read_text())
    assert record["atc_command"] == [str(fake_toolkit.atc)] + calls[0]["argv"]
    assert record["om_json_command"] == [str(fake_toolkit.atc)] + calls[1]["argv"]
    assert record["toolkit_version"] == "8.0.RC2" and record["soc_version"] == "Ascend310P3"
    assert converted.model_name == "tiny" and converted.om_json == entry / "tiny.json"
    assert converted.info["precision_option"] == "precision_mode_v2"

    dump = backend.run(converted, {"x": x})
    assert dump.names == ["conv1", "add1", "sig1"]
    fused = dump["conv1"]
    assert set(fused.original_names) == {"conv1", "relu1"}
    assert fused.outputs[0].origin == ("relu1", 0)
    acl = json.loads(open(dump.meta["acl_json"]).read())
    assert acl["dump"]["dump_list"] == [{"model_name": "tiny"}] and acl["dump"]["dump_mode"] == "all"
    assert dump.meta["runtime"] == "acl" and dump.meta["toolkit_version"] == "8.0.RC2"
    ref = reference_outputs(tiny_model, x)
    out = dump["conv1"].output(0)
    assert out.dtype == "float16" and out.shape == (1, 4, 4, 4)  # fp16 mode: stored as fp16 (NC1HWC0)
    np.testing.assert_allclose(out.load(), ref["r"], rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(dump["sig1"].output(0).load(), ref["y"], rtol=2e-3, atol=2e-3)
    assert backend.npu.calls.count("rt.set_device(0)") == 1


def test_second_convert_is_a_cache_hit_and_keys_follow_mode(backend, tiny_model, atc_calls, fake_atc_on_path,
                                                           cache):
    first = backend.convert(tiny_model, DEFAULT)
    again = backend.convert(tiny_model, "default")
    assert again.path == first.path and len(atc_calls(fake_atc_on_path)) == 2
    high = backend.convert(tiny_model, HIGH_PRECISION)
    assert high.key != first.key
    assert "--precision_mode=allow_fp32_to_fp16" in atc_calls(fake_atc_on_path)[2]["argv"]
    assert cache.stats.hits == 1 and cache.stats.misses == 2


def test_fp32_mode_keeps_float32_and_fusion_off_keeps_every_op(backend, tiny_model, x):
    origin = backend.convert(tiny_model, Mode(precision_mode="must_keep_origin_dtype") | FUSION_OFF)
    assert origin.info["atc_command"][5:8] == ["--input_format=NCHW", "--precision_mode_v2=origin",
                                                "--fusion_switch_file=fusion_switch.cfg"]
    assert (origin.path.parent / "fusion_switch.cfg").is_file()
    dump = backend.run(origin, {"x": x})
    assert dump.names == ["conv1", "relu1", "add1", "sig1"]
    ref = reference_outputs(tiny_model, x)
    assert dump["relu1"].output(0).dtype == "float32"
    np.testing.assert_allclose(dump["relu1"].output(0).load(), ref["r"], rtol=1e-6, atol=1e-6)


def test_keep_dtype_writes_the_config_file_next_to_the_om(backend, tiny_model, x, atc_calls, fake_atc_on_path):
    converted = backend.convert(tiny_model, keep_dtype(["add1"]))
    assert "--keep_dtype=keep_dtype.cfg" in atc_calls(fake_atc_on_path)[0]["argv"]
    assert (converted.path.parent / "keep_dtype.cfg").read_text() == "add1\n"
    dump = backend.run(converted, {"x": x})
    assert dump["add1"].output(0).dtype == "float32" and dump["sig1"].output(0).dtype == "float16"


def test_run_without_dump_returns_model_outputs(backend, tiny_model, x):
    dump = backend.run(backend.convert(tiny_model), {"x": x}, dump=False)
    assert dump.names == ["y"] and dump.kind == "ascend-outputs"
    np.testing.assert_allclose(dump["y"].output(0).load(), reference_outputs(tiny_model, x)["y"], rtol=1e-6)


def test_dynamic_batch_needs_input_shape(backend, model_factory, x, atc_calls, fake_atc_on_path):
    model = model_factory("dyn.onnx", dynamic_batch=True)
    with pytest.raises(ConfigError, match=r"input 'x' has dynamic dims \[-1, 3, 4, 4\]; nothing gives "
                       r"its size: .*input_shape=\{'x': \(1, 3, 4, 4\)\}"):
        backend.convert(model)
    converted = backend.convert(model, input_shape={"x": (1, 3, 4, 4)})
    assert "--input_shape=x:1,3,4,4" in atc_calls(fake_atc_on_path)[0]["argv"]
    assert backend.run(converted, {"x": x}).names == ["conv1", "add1", "sig1"]


def test_ais_bench_runtime_end_to_end(cache, fake_atc_on_path, monkeypatch, tiny_model, x):
    fake_runtime.install(monkeypatch, flavor="ais_bench")
    with AscendBackend(cache, soc_version="Ascend310P3", progress=None) as be:
        dump = be.run(be.convert(tiny_model), {"x": x})
    assert dump.names == ["conv1", "add1", "sig1"] and dump.meta["runtime"] == "ais_bench"


# -- bad input: each a clear error, the cache left intact ---------------------------------------
@pytest.fixture
def warm_cache(cache, converted_cache_template):
    """The cache already holds the tiny model converted under DEFAULT; returns its snapshot."""
    import shutil

    shutil.copytree(converted_cache_template, cache.root)
    return snapshot(cache.root)


def test_fake_atc_missing(cache, monkeypatch, tiny_model, fake_atc_on_path, warm_cache):
    monkeypatch.setenv("PATH", "")
    fake_runtime.install(monkeypatch, flavor="acl")
    with pytest.raises(ConversionError, match=r"ATC not found: searched PATH; \$ASCEND_TOOLKIT_HOME \(unset\)"):
        AscendBackend(cache, soc_version="Ascend310P3", progress=None).convert(tiny_model, FUSION_OFF)
    assert snapshot(cache.root) == warm_cache


def test_fake_atc_failing(backend, monkeypatch, tiny_model, cache, warm_cache):
    monkeypatch.setenv("FAKE_ATC_FAIL", "EZ3003")
    with pytest.raises(ConversionError) as info:
        backend.convert(tiny_model, FUSION_OFF)
    text = str(info.value)
    assert info.value.code == "EZ3003" and "EZ3003: No supported Ops kernel and engine are found for [conv1]" in text
    assert "command: " in text and "--fusion_switch_file=fusion_switch.cfg" in text
    kept = text.rsplit("full ATC log kept at ", 1)[1].strip()
    assert "ATC run failed" in open(os.path.join(kept, "atc.log")).read()
    assert snapshot(cache.root) == warm_cache
    assert not [p for p in cache.root.rglob(".tmp-*")]


def test_fake_atc_hanging_times_out(cache, fake_atc_on_path, monkeypatch, tiny_model, warm_cache):
    monkeypatch.setenv("FAKE_ATC_HANG", "120")
    be = AscendBackend(cache, soc_version="Ascend310P3", timeout=0.4, progress=None)
    with pytest.raises(ConversionError, match=r"did not finish converting tiny.onnx \(mode "
                                              r"fusion_off\) within 0.4s"):
        be.convert(tiny_model, FUSION_OFF)
    assert snapshot(cache.root) == warm_cache


def test_mode_option_the_installed_fake_atc_does_not_know(backend, monkeypatch, tiny_model, cache, warm_cache):
    monkeypatch.setenv("FAKE_ATC_REJECT", "precision_mode_v2")
    with pytest.raises(ConversionError) as info:
        backend.convert(tiny_model, FUSION_OFF)
    assert info.value.code == "E10001"
    assert "rejected --precision_mode_v2=fp16" in str(info.value)
    assert snapshot(cache.root) == warm_cache
    old = AscendBackend(backend.cache, soc_version="Ascend310P3", precision_policy="precision_mode", progress=None)
    assert old.convert(tiny_model, FUSION_OFF).info["precision_option"] == "precision_mode"


def test_cann_6_toolkit_gets_only_the_precision_modes_it_documents(cache, fake_atc_on_path, monkeypatch, tiny_model,
                                                                   tmp_path, atc_calls):
    """A CANN 6.0.1 toolkit (install record ``version=6.0.1``): a mode value it lacks is refused
    before ATC runs, a same-effect one is spelled the old way; with the version unknown a
    same-effect one is spelled the old way too, any other value goes to ATC, and the fake 6.0.1
    ATC refuses it the way real ATC does."""
    import platform

    from pytest_ascend_accuracy.testing.fake_toolkit import install_fake_toolkit

    old = install_fake_toolkit(tmp_path / "cann-6.0.1", version="6.0.1")
    monkeypatch.setenv("PATH", f"{old.home / 'bin'}{os.pathsep}{os.environ['PATH']}")
    be = AscendBackend(cache, soc_version="Ascend310P3", progress=None)
    with pytest.raises(ConfigError, match=r"'allow_mix_precision_bf16' needs CANN 6\.2 or later; the installed "
                                          r"toolkit is CANN 6\.0\.1 \(read from .*ascend_toolkit_install\.info\)"):
        be.convert(tiny_model, Mode(precision_mode="allow_mix_precision_bf16"))
    assert atc_calls(fake_atc_on_path) == []
    converted = be.convert(tiny_model, Mode(precision_mode="cube_fp16in_fp32out"))
    assert "--precision_mode=force_fp32" in converted.info["atc_command"]
    (old.home / f"{platform.machine()}-linux" / "ascend_toolkit_install.info").unlink()
    unknown = AscendBackend(cache, soc_version="Ascend310P3", progress=None)
    # the version unknown, a mode value with a same-effect spelling every release takes gets it
    # (cube_fp16in_fp32out went to ATC as it is, and the 6.0.1 ATC refused it: a review)
    same = unknown.convert(tiny_model, Mode(precision_mode="cube_fp16in_fp32out"))
    assert "--precision_mode=force_fp32" in same.info["atc_command"]
    with pytest.raises(ConversionError) as info:
        unknown.convert(tiny_model, Mode(precision_mode="allow_mix_precision_bf16"))
    assert info.value.code == "E10001" and "rejected --precision_mode=allow_mix_precision_bf16" in str(info.value)
    assert "E10001: Value [allow_mix_precision_bf16] for parameter [--precision_mode] is invalid." in str(info.value)


def test_dump_directory_with_files_from_several_runs(backend, tiny_model, x, tmp_path, cache):
    converted = backend.convert(tiny_model)
    backend.run(converted, {"x": x}, dump_dir=tmp_path / "dumps")
    before = snapshot(cache.root)
    with pytest.raises(DumpFormatError, match=r"dumps: already holds dumps of 1 earlier run"):
        backend.run(converted, {"x": x}, dump_dir=tmp_path / "dumps")
    assert snapshot(cache.root) == before


@pytest.mark.parametrize("file_name", ["my model#2.onnx", "模型.onnx", "a(b).onnx"])
def test_model_name_invalid_in_dump_paths(backend, model_factory, file_name, cache, warm_cache, atc_calls,
                                          fake_atc_on_path):
    model = model_factory(file_name)
    calls = len(atc_calls(fake_atc_on_path))
    with pytest.raises(ConfigError, match="contains characters that are invalid in Ascend dump paths"):
        backend.convert(model)
    assert len(atc_calls(fake_atc_on_path)) == calls and snapshot(cache.root) == warm_cache


def test_model_name_dots_become_underscores(backend, model_factory, x):
    converted = backend.convert(model_factory("resnet50.v2.onnx"))
    assert converted.model_name == "resnet50_v2" and converted.path.name == "resnet50_v2.om"
    assert backend.run(converted, {"x": x}).model_name in (None, "resnet50_v2")


def test_a_model_whose_path_atc_refuses_is_refused_before_atc_runs(backend, model_factory,
                                                                   atc_calls, fake_atc_on_path):
    """Real ATC checks --model's resolved path as it checks the config files' (GE main.cc
    CheckInputPathValid(FLAGS_model, "--model")): a model named with a space got to ATC's
    E10001 (the fake did not check --model; a review found it in GE's code)."""
    import shutil

    model = model_factory("resnet 50.onnx")
    with pytest.raises(ConfigError) as refused:
        backend.convert(model)
    assert "resnet 50.onnx: its resolved path" in str(refused.value)
    assert "holds ' ', and ATC refuses a model or config file" in str(refused.value)
    assert "copy or move the model (with its external data files, if any) to a folder" in \
        str(refused.value)
    assert atc_calls(fake_atc_on_path) == []
    # the advice applied: the model copied to a folder whose path holds none of them converts
    (model.parent / "models_ok").mkdir()
    moved = shutil.copy(model, model.parent / "models_ok" / "resnet50.onnx")
    assert backend.convert(moved).path.is_file()


def test_device_id_that_does_not_exist(cache, fake_atc_on_path, monkeypatch, tiny_model, x, warm_cache):
    fake_runtime.install(monkeypatch, flavor="acl", device_count=1)
    be = AscendBackend(cache, device_id=4, soc_version="Ascend310P3", progress=None)
    converted = be.convert(tiny_model, DEFAULT)  # a cache hit; needs no device with soc_version given
    assert be.cache.stats.hits == 1
    with pytest.raises(BackendError, match=r"Ascend device 4 does not exist: this machine has 1 device"):
        be.run(converted, {"x": x})
    assert snapshot(cache.root) == warm_cache


def test_soc_version_comes_from_the_runtime_or_a_clear_error(cache, fake_atc_on_path, monkeypatch, tiny_model):
    fake_runtime.install(monkeypatch, flavor="acl", soc_name="Ascend910B3")
    be = AscendBackend(cache, progress=None)
    assert be.convert(tiny_model).info["soc_version"] == "Ascend910B3"
    monkeypatch.setitem(__import__("sys").modules, "acl", None)
    with pytest.raises(ConfigError, match="soc_version: not given and the runtime cannot report it"):
        AscendBackend(cache, progress=None).convert(tiny_model)


def test_missing_inputs_and_wrong_backend(backend, tiny_model):
    converted = backend.convert(tiny_model)
    with pytest.raises(ConfigError, match=r"missing model input\(s\) \['x'\]"):
        backend.run(converted, {"y": np.zeros(1)})
    from dataclasses import replace

    with pytest.raises(BackendError, match="converted by the emulator backend"):
        backend.run(replace(converted, backend="emulator"), {"x": np.zeros((1, 3, 4, 4), np.float32)})


def test_fake_ascend_dump_compares_with_the_golden_dump(monkeypatch, tmp_path, tiny_model, x):
    """use_fake_ascend (what the plugin tests use) + golden + compare: the fused conv1 (covering
    conv1 and relu1) is matched to the golden relu1 output through its dump origin."""
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.testing.fake_ascend import use_fake_ascend

    fakes = use_fake_ascend(monkeypatch, tmp_path, soc_name="Ascend310B1")
    cache = Cache(tmp_path / "cache")
    with AscendBackend(cache, progress=None) as be:
        dump = be.run(be.convert(tiny_model), {"x": x})
        result = compare_dumps(dump, golden_dump(tiny_model, {"x": x}, cache=cache))
    rows = {r.op_name: r for r in result.rows}
    assert rows["conv1"].golden_name == "relu1" and rows["conv1"].metrics.cosine > 0.9999
    assert result.judge(threshold=0.999).passed
    assert "--soc_version=Ascend310B1" in json.loads(fakes.atc_calls.read_text().splitlines()[0])["argv"]


def test_weights_changed_only_in_external_data_are_another_model(backend, tmp_path, atc_calls,
                                                                  fake_atc_on_path, cache):
    """ATC reads the .onnx and its external data: new weights in model.onnx.data alone must not
    reuse the .om converted from the old ones (the key once hashed the .onnx file only)."""
    import onnx

    from tests.ascend.conftest import build_model

    source = build_model(tmp_path / "src.onnx")
    path = tmp_path / "ext" / "tiny.onnx"
    path.parent.mkdir()
    onnx.save_model(onnx.load(str(source)), str(path), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="tiny.onnx.data", size_threshold=0)
    data = path.parent / "tiny.onnx.data"
    first = backend.convert(path, DEFAULT)
    assert backend.convert(path, DEFAULT).key == first.key  # unchanged: a cache hit
    onnx_bytes = path.read_bytes()
    raw = bytearray(data.read_bytes())
    raw[3] ^= 0x01  # the first float32 weight, a little different
    data.write_bytes(bytes(raw))
    assert path.read_bytes() == onnx_bytes  # the .onnx file itself is the same
    second = backend.convert(path, DEFAULT)
    assert second.key != first.key and second.path != first.path
    conversions = [c for c in atc_calls(fake_atc_on_path) if "--framework=5" in c["argv"]]
    assert len(conversions) == 2  # converted again (each also runs atc --mode=1 for its json)
    assert cache.stats.hits == 1 and cache.stats.misses == 2


def test_toolkits_of_unknown_version_never_share_a_converted_model(cache, fake_atc_on_path,
                                                                   monkeypatch, tiny_model,
                                                                   tmp_path, atc_calls):
    """Two FAKE toolkits without an install record (version unknown), at two paths: each converts
    the model itself. Keyed by the version alone (None for both), the second reused the first
    one's .om, built by another ATC; a toolkit whose atc changed in place converts again too."""
    import platform

    from pytest_ascend_accuracy.testing.fake_toolkit import install_fake_toolkit

    record = f"{platform.machine()}-linux/ascend_toolkit_install.info"
    entries = []
    for name in ("cann-a", "cann-b"):
        kit = install_fake_toolkit(tmp_path / name, version="8.0.RC2")
        (kit.home / record).unlink()  # no install record: version unknown
        monkeypatch.setenv("PATH", f"{kit.home / 'bin'}{os.pathsep}{os.environ['PATH']}")
        be = AscendBackend(cache, soc_version="Ascend310P3", progress=None)
        assert be.toolkit.version is None
        entries.append(be.convert(tiny_model).info["entry"])
    assert entries[0] != entries[1]
    assert len(atc_calls(fake_atc_on_path)) == 4  # two ATC runs (om + json) per toolkit
    be = AscendBackend(cache, soc_version="Ascend310P3", progress=None)
    assert be.convert(tiny_model).info["entry"] == entries[1]  # same atc: a cache hit
    atc = be.toolkit.atc
    atc.write_text(atc.read_text() + "\n")  # reinstalled in place (another size, another mtime)
    be = AscendBackend(cache, soc_version="Ascend310P3", progress=None)
    assert be.convert(tiny_model).info["entry"] not in entries
