"""What real ATC and ACL do with ``--output`` folders and chip names, in the FAKES, and what the
backend then tells the user (user trial findings 1 and 2).

* GE ``CheckOutputPathValid`` (hicann/ge ``base/common/util.cc``, called by ``main_impl.cc``
  ``CheckOutputPathWithSuffix(FLAGS_output, "--output")``) creates the folders before the file
  name; one that cannot be made is ``E10001`` naming ``--output``.
* A chip without a ``data/platform_config/<soc>.ini`` in the toolkit is refused by GE at
  ``GELib::Initialize``: ``EE1001: The argument is invalid.Reason: Soc version [X] is invalid``
  (a real ATC 7.0 console on the hiascend forum).
* An .om converted for another chip than the device's: the fake pyACL refuses to load it.
"""
import subprocess

import numpy as np
import pytest

from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.errors import BackendError, ConversionError
from pytest_ascend_accuracy.testing import fake_runtime


def atc(toolkit, *args, cwd):
    return subprocess.run([str(toolkit.atc), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_output_folder_is_created_as_ge_creates_it(fake_toolkit, tiny_model, tmp_path):
    r = atc(fake_toolkit, f"--model={tiny_model}", "--framework=5", "--output=out/sub/trial",
            "--soc_version=Ascend310P3", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert (tmp_path / "out" / "sub" / "trial.om").is_file()


def test_output_folder_that_cannot_be_made_is_e10001_naming_output(fake_toolkit, tiny_model,
                                                                   tmp_path):
    (tmp_path / "afile").write_text("not a folder")
    r = atc(fake_toolkit, f"--model={tiny_model}", "--framework=5", "--output=afile/trial",
            "--soc_version=Ascend310P3", cwd=tmp_path)
    assert r.returncode == 255 and "Traceback" not in r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[1].startswith("ATC run failed")
    assert lines[2].startswith("E10001: Value [afile/trial.om] for parameter [--output] is "
                               "invalid. Reason: Can not create directory")


def test_unknown_soc_version_is_refused_as_ge_refuses_it(fake_toolkit, tiny_model, tmp_path):
    r = atc(fake_toolkit, f"--model={tiny_model}", "--framework=5", "--output=trial",
            "--soc_version=Ascend999", cwd=tmp_path)
    assert r.returncode == 255
    assert "EE1001: The argument is invalid.Reason: Soc version [Ascend999] is invalid" in r.stdout
    assert not (tmp_path / "trial.om").exists()


def test_backend_names_the_option_value_and_closest_chips(fake_atc_on_path, tiny_model, tmp_path,
                                                          monkeypatch):
    fake_runtime.install(monkeypatch, flavor="acl", soc_name="Ascend310P3")
    be = AscendBackend(Cache(tmp_path / "cache"), soc_version="Ascend310P", progress=None)
    with pytest.raises(ConversionError) as info:
        be.convert(tiny_model)
    text = str(info.value)
    assert info.value.code == "EE1001"
    line = next(x for x in text.splitlines() if x.startswith("--soc_version=Ascend310P "))
    assert line.startswith("--soc_version=Ascend310P is not a chip this toolkit can convert for; "
                           "closest: ")
    closest = line.split("closest: ")[1].split(" (")[0].split(", ")
    assert {"Ascend310P1", "Ascend310P3"} <= set(closest) and len(closest) <= 3
    assert "data/platform_config" in text
    assert ("Ascend device 0 is Ascend310P3: pass --soc-version=Ascend310P3 "
            "(soc_version='Ascend310P3' in AscendBackend(...))") in text


@pytest.mark.parametrize("soc, closest", [
    ("Ascend999", ()), ("ascend310p3", ("Ascend310P3",)), ("Ascend910b", ("Ascend910B",)),
    ("Ascend910B5", ("Ascend910B",)), ("Ascend310P", ("Ascend310P3", "Ascend310P1"))])
def test_closest_names_are_typos_only(fake_toolkit, soc, closest):
    from pytest_ascend_accuracy.backends.ascend import soc_names

    known, folder = soc_names.toolkit_soc_versions(fake_toolkit.home)
    assert "Ascend310P3" in known and folder.name == "platform_config"
    found = soc_names.closest_soc_versions(soc, known)
    assert found[:len(closest)] == closest and (closest or not found)


def test_without_a_device_the_advice_says_how_to_find_the_chip(fake_atc_on_path, tiny_model,
                                                               tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "acl", None)  # no runtime importable
    be = AscendBackend(Cache(tmp_path / "cache"), soc_version="Ascend999", progress=None)
    with pytest.raises(ConversionError) as info:
        be.convert(tiny_model)
    text = str(info.value)
    assert "--soc_version=Ascend999 is not a chip this toolkit can convert for (it knows" in text
    assert "`npu-smi info` shows its Name, the value is Ascend<Name>" in text


def test_om_for_another_chip_names_the_device_chip(fake_atc_on_path, tiny_model, tmp_path,
                                                   monkeypatch):
    npu = fake_runtime.install(monkeypatch, flavor="acl", soc_name="Ascend310P3")
    be = AscendBackend(Cache(tmp_path / "cache"), soc_version="Ascend910B3", progress=None)
    converted = be.convert(tiny_model)  # ATC knows Ascend910B3: the conversion itself succeeds
    x = np.zeros((1, 3, 4, 4), np.float32)
    with pytest.raises(BackendError) as info:
        be.run(converted, {"x": x})
    text = str(info.value)
    assert "acl.mdl.load_from_file" in text
    assert ("converted for Ascend910B3 (--soc_version) but Ascend device 0 is Ascend310P3"
            in text)
    assert "--soc-version=Ascend310P3" in text
    assert "Ascend910B3" in npu.last_error and "Ascend310P3" in npu.last_error
    be.close()


RUN_ON_DEVICE = '''
import numpy as np


def test_run(ascend_model):
    ascend_model(r"{model}").run({{"x": np.zeros((1, 3, 4, 4), np.float32)}})
'''


@pytest.mark.parametrize("soc, expected", [
    ("Ascend999", ["*--soc_version=Ascend999 is not a chip this toolkit can convert for (*"
                   "Ascend device 0 is Ascend310P3: pass --soc-version=Ascend310P3*",
                   "*EE1001: The argument is invalid.Reason: Soc version [[]Ascend999[]] is "
                   "invalid*"]),
    ("Ascend910B3", ["*The .om was converted for Ascend910B3 (--soc_version) but Ascend device 0 "
                     "is Ascend310P3*--soc-version=Ascend310P3*"]),
])
def test_what_the_plugin_prints(pytester, tiny_model, monkeypatch, tmp_path, soc, expected):
    from pytest_ascend_accuracy.testing.fake_ascend import use_fake_ascend

    monkeypatch.delenv("ASCEND_RT_VISIBLE_DEVICES", raising=False)
    use_fake_ascend(monkeypatch, tmp_path, device_count=1, soc_name="Ascend310P3")
    pytester.makepyfile(test_run=RUN_ON_DEVICE.format(model=tiny_model))
    result = pytester.runpytest("--ascend-device=0", f"--soc-version={soc}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(expected)
