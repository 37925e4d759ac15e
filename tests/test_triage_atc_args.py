"""The diagnosis's ATC options (the printed fix line and ``atc_args.txt``) are the options the
backend passes to its toolkit for the fix mode, complete enough to paste after
``atc --model=M --framework=5 --output=O --soc_version=S`` (user review: on CANN 6.0 they said
``--precision_mode=allow_mix_precision_fp16``, which that atc refuses, while the run used
``allow_mix_precision``; and they left out the conversion's own ``--input_shape``, so a
dynamic-shape model did not convert). Runs against the FAKE toolkit and NPU only."""
import json
import os
import subprocess

import pytest

pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.core.modes import Mode  # noqa: E402
from pytest_ascend_accuracy.testing.fake_ascend import use_fake_ascend  # noqa: E402
from pytest_ascend_accuracy.triage.flow import diagnose  # noqa: E402
from pytest_ascend_accuracy.triage.report import text  # noqa: E402

LEFT_OUT = ("--model=", "--framework=", "--output=", "--soc_version=")


def bigval():
    """``y = MatMul(x * 1e5, ones) * 1e-5``: the scaled values leave the float16 range, so the
    default conversion fails on the fake NPU too and keep_dtype restores it."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    inits = [numpy_helper.from_array(np.array([1e5], np.float32), "big"),
             numpy_helper.from_array(np.array([1e-5], np.float32), "small"),
             numpy_helper.from_array(np.ones((16, 8), np.float32), "w")]
    nodes = [helper.make_node("Mul", ["x", "big"], ["a"], name="scale_up"),
             helper.make_node("MatMul", ["a", "w"], ["c"], name="matmul_big"),
             helper.make_node("Mul", ["c", "small"], ["y"], name="scale_down")]
    graph = helper.make_graph(nodes, "bigval",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _save(proto, path, *, dynamic=False):
    import onnx

    if dynamic:  # the batch dimension of input and output left open: ATC needs --input_shape
        for vi in (proto.graph.input[0], proto.graph.output[0]):
            vi.type.tensor_type.shape.dim[0].dim_param = "N"
    onnx.save(proto, str(path))
    return path


def _backend(kind, cache):
    if kind == "ascend":
        from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend

        return AscendBackend(cache, soc_version="Ascend310P3", progress=None)
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend

    return EmulatorBackend(cache)


def _paste(fake, model, args_file, output="pasted"):
    """The user's paste: ``atc --model=M ... $(cat atc_args.txt)`` through a shell, fake atc."""
    line = (f"{fake.toolkit.atc} --model={model} --framework=5 --output={output} "
            f"--soc_version=Ascend310P3 $(cat {args_file})")
    env = dict(os.environ, FAKE_ATC_CALLS=os.devnull)
    return subprocess.run(["sh", "-c", line], capture_output=True, text=True, env=env)


@pytest.mark.parametrize("version, precision", [
    ("6.0.RC1", "--precision_mode=allow_mix_precision"),
    ("8.0.RC2", "--precision_mode_v2=mixed_float16"),
])
def test_fix_atc_args_are_the_backends_own_spelling_for_the_installed_toolkit(
        tmp_path, monkeypatch, version, precision):
    fake = use_fake_ascend(monkeypatch, tmp_path / "asc", toolkit_version=version)
    monkeypatch.chdir(tmp_path)
    model = _save(bigval(), tmp_path / "overflow.onnx")
    cache = Cache(tmp_path / "cache")
    backend = _backend("ascend", cache)
    d = diagnose(model, backend=backend, cache=cache, out_dir="fix",
                 mode=Mode(precision_mode="allow_mix_precision_fp16"))
    assert d.restored_by == "keep_dtype", d.verdict
    args = (tmp_path / "fix" / "atc_args.txt").read_text().splitlines()
    assert precision in args and "--keep_dtype=fix/keep_dtype.cfg" in args
    # exactly the argv the backend gave the fake atc for the fix conversion (paths aside)
    calls = [json.loads(line)["argv"] for line in fake.atc_calls.read_text().splitlines()]
    fix_calls = [[a for a in argv if not a.startswith(LEFT_OUT)] for argv in calls
                 if "--keep_dtype=keep_dtype.cfg" in argv]
    expected = [a.replace("=keep_dtype.cfg", "=fix/keep_dtype.cfg") for a in fix_calls[-1]]
    assert args == expected, (args, expected)
    printed = text(d)
    assert f"ATC: {' '.join(args)}\n" in printed
    assert f"(these ATC options are as passed to CANN {version}, the toolkit" in printed
    report = json.loads((tmp_path / "fix" / "diagnosis.json").read_text())
    assert report["fix"]["atc_args"] == args
    # and that toolkit's atc takes them pasted (6.0 refused allow_mix_precision_fp16, rc 255)
    run = _paste(fake, model, "fix/atc_args.txt")
    assert run.returncode == 0, run.stdout + run.stderr
    backend.close()


@pytest.mark.parametrize("kind", ["ascend", "emulator"])
def test_pasted_atc_args_convert_a_dynamic_shape_model(tmp_path, monkeypatch, kind):
    fake = use_fake_ascend(monkeypatch, tmp_path / "asc", toolkit_version="8.0.RC2")
    monkeypatch.chdir(tmp_path)
    model = _save(bigval(), tmp_path / "dyn.onnx", dynamic=True)
    cache = Cache(tmp_path / "cache")
    backend = _backend(kind, cache)
    # as ascend_model(m, input_shape={"x": [1, 16]}, input_format="ND") converted it
    d = diagnose(model, backend=backend, cache=cache, out_dir="fix", input_shape={"x": [1, 16]},
                 atc_options={"input_format": "ND"})
    assert d.restored_by == "keep_dtype", d.verdict
    args = (tmp_path / "fix" / "atc_args.txt").read_text().splitlines()
    assert "--input_shape=x:1,16" in args and "--input_format=ND" in args
    assert "--keep_dtype=fix/keep_dtype.cfg" in args
    assert not any(a.startswith(LEFT_OUT) for a in args)
    run = _paste(fake, model, "fix/atc_args.txt")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "ATC run success" in run.stdout
    if kind == "emulator":  # no toolkit: today's spelling, and for which releases it is
        assert "--precision_mode=force_fp16" in args
        assert ("(these ATC options are spelled by the emulator, which has no toolkit, for "
                "every CANN release;") in text(d)


def test_emulator_spelling_names_the_releases_that_take_it(tmp_path):
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.triage.atc_args import fix_atc

    spelled = fix_atc(EmulatorBackend(Cache(tmp_path / "c")), None,
                      Mode(precision_mode="allow_mix_precision_fp16", keep_dtype=("a",)))
    assert spelled.args("out") == ["--precision_mode=allow_mix_precision_fp16",
                                   f"--keep_dtype={os.path.join('out', 'keep_dtype.cfg')}"]
    assert "for CANN 6.2 or later" in spelled.spelled_for


def test_a_user_file_is_named_by_its_own_path_not_the_cache_copy(tmp_path, monkeypatch):
    from pytest_ascend_accuracy.backends.ascend.atc_command import build_atc_command
    from pytest_ascend_accuracy.triage.atc_args import _from_command

    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg").mkdir()
    aipp = tmp_path / "cfg" / "aipp.cfg"
    aipp.write_text("aipp_op { aipp_mode: static }\n")
    model = _save(bigval(), tmp_path / "m.onnx")
    command = build_atc_command("atc", model, Mode(keep_dtype=("scale_up",)), output_prefix="m",
                                soc_version="Ascend310P3", atc_options={"insert_op_conf": aipp},
                                toolkit_version="6.0.RC1")
    assert command.option("insert_op_conf") == "user_insert_op_conf.cfg"
    args = _from_command(command, "6.0.RC1").args("fix")
    assert os.path.join("cfg", "aipp.cfg") in [a.partition("=")[2] for a in args]
    assert f"--keep_dtype={os.path.join('fix', 'keep_dtype.cfg')}" in args
