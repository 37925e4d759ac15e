"""A diagnosis's fix of a model converted with an AIPP file pastes from the folder it says to run
from: ``ascend_model(m, aipp="cfg/camera.cfg")`` with ``--accuracy-diagnose
--accuracy-report=rep`` wrote ``rep/<test>/diagnosis/atc_args.txt`` holding
``--keep_dtype=diagnosis/keep_dtype.cfg`` beside ``--insert_op_conf=cfg/camera.cfg``, the AIPP
file named from where pytest ran; run from ``rep/<test>``, as the fix line says, it named no
file (and an absolute path, none on the Ascend machine the folder is copied to). The fix
folder now holds a byte-for-byte copy of the AIPP file the diagnosed conversions used, named
``diagnosis/camera.cfg`` as the config files are."""
import os
import shlex
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp
from pytest_ascend_accuracy.core.modes import Mode
from pytest_ascend_accuracy.testing import fake_atc

TEST = '''
import numpy as np
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb

RAW = random_rgb(1, 4, 4, seed=3)

def test_img(ascend_model, golden_dump, check_accuracy):
    om = ascend_model("models/img.onnx", aipp={aipp!r})
    golden = golden_dump("models/img.onnx",
                         {{"x": np.stack([imagenet_reference(i) for i in RAW])}})
    check_accuracy(om.run({{"x": RAW}}), golden)
'''


def image_overflow():
    """``x`` (1x3x4x4, the AIPP output) flattened, ``* 1e5``, MatMul, ``* 1e-5``: the scaled
    values leave the float16 range, so the default conversion fails and keep_dtype restores."""
    inits = [numpy_helper.from_array(np.array([1e5], np.float32), "big"),
             numpy_helper.from_array(np.array([1e-5], np.float32), "small"),
             numpy_helper.from_array(np.ones((48, 8), np.float32), "w")]
    nodes = [helper.make_node("Flatten", ["x"], ["f"], name="flat"),
             helper.make_node("Mul", ["f", "big"], ["a"], name="scale_up"),
             helper.make_node("MatMul", ["a", "w"], ["c"], name="matmul_big"),
             helper.make_node("Mul", ["c", "small"], ["y"], name="scale_down")]
    graph = helper.make_graph(
        nodes, "img", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.fixture(autouse=True)
def no_fake_atc_env(monkeypatch):
    for var in ("FAKE_ATC_FAIL", "FAKE_ATC_HANG", "FAKE_ATC_REJECT", "FAKE_ATC_CALLS",
                "FAKE_ATC_VERSION"):
        monkeypatch.delenv(var, raising=False)


def _atc(model, args):
    return fake_atc.main([f"--model={model}", "--framework=5", "--output=fixed",
                          "--soc_version=Ascend310P3", *args])


def _on_the_npu(fix: Path, where: Path, *gone: Path) -> None:
    """The Ascend machine: the fix folder alone copied to ``where``, the originals gone."""
    shutil.copytree(fix, where / fix.name)
    for path in gone:
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    os.chdir(where)


@pytest.mark.parametrize("inside", [True, False], ids=["below-cwd", "elsewhere"])
def test_the_plugins_fix_line_pastes_with_the_aipp_file(pytester, tmp_path_factory, inside):
    (pytester.path / "models").mkdir()
    model = pytester.path / "models" / "img.onnx"
    onnx.save(image_overflow(), str(model))
    folder = pytester.path / "cfg" if inside else tmp_path_factory.mktemp("elsewhere")
    folder.mkdir(exist_ok=True)
    aipp = folder / "camera.cfg"
    aipp.write_text(imagenet_aipp(src_hw=(4, 4)), encoding="utf-8")
    original = aipp.read_bytes()
    pytester.makepyfile(test_img=TEST.format(aipp="cfg/camera.cfg" if inside else str(aipp)))
    result = pytester.runpytest("-q", "--accuracy-diagnose", "--accuracy-report=rep")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "  fix files written to rep/test_img.py--test_img/diagnosis/ (atc_args.txt, camera.cfg, "
        "keep_dtype.cfg)",
        "  (atc_args.txt names them as diagnosis/...: run atc from rep/test_img.py--test_img)"])
    fix = pytester.path / "rep" / "test_img.py--test_img" / "diagnosis"
    line = next(x for x in (fix / "diagnosis.txt").read_text().splitlines()
                if x.startswith("  fix: "))
    assert "; ATC (run from rep/test_img.py--test_img, which holds diagnosis/): " in line, line
    pasted = shlex.split(line.partition("which holds diagnosis/): ")[2])
    args = (fix / "atc_args.txt").read_text().split()
    assert pasted == args and "--insert_op_conf=diagnosis/camera.cfg" in args, args
    # from the folder the line says to run from: every file resolves, the AIPP file as converted
    os.chdir(fix.parent)
    files = {a[2:].partition("=")[0]: a.partition("=")[2] for a in args if "/" in a}
    assert set(files) == {"keep_dtype", "insert_op_conf"}, files
    assert Path(files["insert_op_conf"]).read_bytes() == original
    assert _atc(model, args) == 0
    _on_the_npu(fix, pytester.path / "npu", pytester.path / "rep", aipp)
    assert _atc(model, pasted) == 0
    assert _atc(model, args) == 0


def _diagnosis(fix_atc, mode):
    from pytest_ascend_accuracy.triage.result import Diagnosis

    return Diagnosis(model="m", backend="b", threshold=0.95, metric="cosine",
                     restored_by="keep_dtype" if mode.keep_dtype else "high_precision",
                     verdict="v", steps=(), fix_mode=mode, fix_atc=fix_atc)


def test_the_ascend_backends_spelling_copies_the_file_under_a_name_atc_takes(
        tmp_path, monkeypatch):
    """``--out nested/fix``; the AIPP file ``my aipp.cfg`` (a space, which ATC refuses in the
    path: the conversion read the cache's copy ``user_insert_op_conf.cfg``) holding GBK
    comments, copied as it is; and a user file named like a file of the fix folder's own
    (``keep_dtype.cfg``) does not overwrite it."""
    from pytest_ascend_accuracy.backends.ascend.atc_command import build_atc_command
    from pytest_ascend_accuracy.triage.atc_args import _from_command
    from pytest_ascend_accuracy.triage.report import text, write_all

    monkeypatch.chdir(tmp_path)
    model = tmp_path / "img.onnx"
    onnx.save(image_overflow(), str(model))
    (tmp_path / "cfg").mkdir()
    aipp = tmp_path / "cfg" / "my aipp.cfg"
    aipp.write_bytes("# 相机\n".encode("gbk") + imagenet_aipp(src_hw=(4, 4)).encode())
    mixlist = tmp_path / "cfg" / "keep_dtype.cfg"
    mixlist.write_text('{"allow": []}\n', encoding="utf-8")
    mode = Mode(keep_dtype=("scale_up",))
    command = build_atc_command("atc", model, mode, output_prefix="m", soc_version="Ascend310P3",
                                atc_options={"insert_op_conf": aipp, "modify_mixlist": mixlist},
                                toolkit_version="8.0.RC2")
    d = _diagnosis(_from_command(command, "8.0.RC2"), mode)
    files = write_all(d, "nested/fix")
    args = (tmp_path / "nested" / "fix" / "atc_args.txt").read_text().split()
    assert "--insert_op_conf=fix/my_aipp.cfg" in args, args
    assert "--modify_mixlist=fix/modify_mixlist_keep_dtype.cfg" in args, args
    assert "--keep_dtype=fix/keep_dtype.cfg" in args, args
    assert Path(files["my_aipp.cfg"]).read_bytes() == aipp.read_bytes()
    assert Path(files["keep_dtype.cfg"]).read_text() == "scale_up\n"
    line = next(x for x in text(d, files).splitlines() if x.startswith("  fix: "))
    assert "; ATC (run from nested, which holds fix/): " in line, line
    pasted = shlex.split(line.partition("which holds fix/): ")[2])
    assert pasted == args
    monkeypatch.chdir(tmp_path / "nested")
    for arg in args:
        if arg.startswith("--modify_mixlist="):
            assert Path(arg.partition("=")[2]).read_bytes() == mixlist.read_bytes()
    # the fake atc reads the AIPP file as UTF-8: without the GBK comment, converted pasted
    aipp.write_text(imagenet_aipp(src_hw=(4, 4)), encoding="utf-8")
    write_all(d, "fix")
    _on_the_npu(tmp_path / "nested" / "fix", tmp_path / "npu", tmp_path / "cfg")
    assert _atc(model, pasted) == 0


def test_a_fix_without_config_files_still_says_where_to_run_from(tmp_path, monkeypatch):
    """High precision holds no config file; the AIPP file's copy is all the folder's options
    name, so the line says where to run from; without a fix folder (``diagnose`` without
    ``--out``) the AIPP file is named from the working directory, where the line runs."""
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.triage.atc_args import fix_atc
    from pytest_ascend_accuracy.triage.report import text, write_all

    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "camera.cfg").write_text(imagenet_aipp(src_hw=(4, 4)), encoding="utf-8")
    mode = Mode(precision_mode="allow_fp32_to_fp16")
    spelled = fix_atc(EmulatorBackend(Cache(tmp_path / "c")), None, mode,
                      atc_options={"insert_op_conf": "cfg/camera.cfg"})
    d = _diagnosis(spelled, mode)
    line = next(x for x in text(d).splitlines() if x.startswith("  fix: "))
    assert line.endswith("ATC: --precision_mode=allow_fp32_to_fp16 "
                         "--insert_op_conf=cfg/camera.cfg"), line
    files = write_all(d, "out/diagnosis")
    line = next(x for x in text(d, files).splitlines() if x.startswith("  fix: "))
    assert line.endswith("ATC (run from out, which holds diagnosis/): "
                         "--precision_mode=allow_fp32_to_fp16 "
                         "--insert_op_conf=diagnosis/camera.cfg"), line
    assert (tmp_path / "out" / "diagnosis" / "atc_args.txt").read_text().split()[-1] == (
        "--insert_op_conf=diagnosis/camera.cfg")


def test_copy_names_keep_the_files_name_and_never_clash():
    from pytest_ascend_accuracy.triage.fix_folder import copy_names

    assert copy_names([("insert_op_conf", "/a/aipp.cfg")]) == {"insert_op_conf": "aipp.cfg"}
    names = copy_names([("insert_op_conf", "/a/Keep_Dtype.CFG"),
                        ("modify_mixlist", "/b/ops.json"), ("op_name_map", "/c/ops.json"),
                        ("customize_dtypes", "/d/diagnosis.txt"),
                        ("op_precision_mode", "/e/op+mode 1.ini")])
    assert names == {"insert_op_conf": "insert_op_conf_Keep_Dtype.CFG",
                     "modify_mixlist": "ops.json", "op_name_map": "op_name_map_ops.json",
                     "customize_dtypes": "customize_dtypes_diagnosis.txt",
                     "op_precision_mode": "op_mode_1.ini"}


def test_diagnose_refuses_a_mode_extra_file_option(tmp_path, monkeypatch, capsys):
    """``diagnose --mode '{extra: {modify_mixlist: mix.json}}'`` converted on the emulator
    without the file (ignored: a false PASS, a trial) and printed the fix with it; the option
    is now refused before anything converts, as the plugin refuses it."""
    from pytest_ascend_accuracy import cli
    from pytest_ascend_accuracy.testing import models

    monkeypatch.chdir(tmp_path)
    onnx.save(models.overflow_model(), "overflow.onnx")
    (tmp_path / "mix.json").write_text('{"allow": []}\n', encoding="utf-8")
    assert cli.main(["diagnose", "overflow.onnx", "--cache-dir", "c", "--out", "nested/fix",
                     "--mode", "{base: default, extra: {modify_mixlist: mix.json}}"]) == 2
    err = capsys.readouterr().err
    assert ("--mode extra: ATC option modify_mixlist=... is refused on every backend" in err), err
    assert not (tmp_path / "nested").exists()
