"""The ascend backend's chip advice, pasted as printed on the fake toolchain (audit H325: printed,
never applied by a test).

* an .om converted for another chip than the device's: ``Convert for this device:
  --soc-version=C (soc_version='C' in AscendBackend(...)), or leave --soc-version out``: the
  option, the argument and leaving the option out each run. Its Python form was
  ``AscendBackend(soc_version='C')``, which pasted raised ``TypeError`` (the backend's cache is
  its first argument); it is now the argument to give the call.
* a runtime that cannot report the chip (ais_bench without pyACL): ``pass
  --soc-version=Ascend310P3 (or your chip)``, on a device of that chip."""
import re

import numpy as np
import pytest

from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.errors import BackendError, ConfigError
from pytest_ascend_accuracy.testing.fake_ascend import use_fake_ascend

RUN_ON_DEVICE = '''
import numpy as np


def test_run(ascend_model):
    ascend_model(r"{model}").run({{"x": np.zeros((1, 3, 4, 4), np.float32)}})
'''

MISMATCH = re.compile(r"Convert for this device: (--soc-version=\S+) \((soc_version='\w+') in "
                      r"AscendBackend\(\.\.\.\)\), or leave (--soc-version) out to use the chip "
                      r"the device reports\.")


def test_the_mismatch_advice_pasted_on_the_command_line_runs(pytester, tiny_model, monkeypatch,
                                                             tmp_path):
    monkeypatch.delenv("ASCEND_RT_VISIBLE_DEVICES", raising=False)
    use_fake_ascend(monkeypatch, tmp_path, device_count=1, soc_name="Ascend310P3")
    pytester.makepyfile(test_run=RUN_ON_DEVICE.format(model=tiny_model))
    args = ["-q", "-p", "no:cacheprovider", "--ascend-device=0", "--soc-version=Ascend910B3"]
    failed = pytester.runpytest(*args)
    failed.assert_outcomes(failed=1)
    said = MISMATCH.search(failed.stdout.str())
    assert said, failed.stdout.str()
    option, _, left_out = said.groups()
    pasted = pytester.runpytest(*[option if a.startswith("--soc-version=") else a for a in args])
    pasted.assert_outcomes(passed=1)  # (an .om of another chip fails to load, as above)
    pasted.stdout.fnmatch_lines(["backend: ascend backend on device 0, soc Ascend310P3"])
    without = pytester.runpytest(*[a for a in args if not a.startswith(left_out + "=")])
    without.assert_outcomes(passed=1)


def test_the_mismatch_advice_pasted_into_the_backend_call_runs(fake_atc_on_path, tiny_model,
                                                               tmp_path, monkeypatch):
    from pytest_ascend_accuracy.testing import fake_runtime

    fake_runtime.install(monkeypatch, flavor="acl", soc_name="Ascend310P3")
    call = "AscendBackend(Cache(cache_dir), soc_version='Ascend910B3', progress=None)"
    names = {"AscendBackend": AscendBackend, "Cache": Cache, "cache_dir": tmp_path / "cache"}
    be = eval(call, names)
    x = {"x": np.zeros((1, 3, 4, 4), np.float32)}
    with pytest.raises(BackendError) as info:
        be.run(be.convert(tiny_model), x)
    be.close()
    said = MISMATCH.search(str(info.value))
    assert said, str(info.value)
    pasted = re.sub(r"soc_version='\w+'", said.group(2), call)  # the argument, as printed
    be = eval(pasted, names)
    assert set(be.outputs(be.convert(tiny_model), x)) == {"y"}
    be.close()


def test_the_chip_the_runtime_cannot_report_pasted_runs(pytester, tiny_model, monkeypatch,
                                                        tmp_path):
    monkeypatch.delenv("ASCEND_RT_VISIBLE_DEVICES", raising=False)
    # ais_bench has no chip query, and without pyACL nothing asks the device
    use_fake_ascend(monkeypatch, tmp_path, flavor="ais_bench", device_count=1,
                    soc_name="Ascend310P3")
    pytester.makepyfile(test_run=RUN_ON_DEVICE.format(model=tiny_model))
    args = ["-q", "-p", "no:cacheprovider", "--ascend-device=0"]
    failed = pytester.runpytest(*args)
    failed.assert_outcomes(failed=1)
    said = re.search(r"not given and the runtime reports none; pass (--soc-version=\S+) \(or "
                     r"your chip\)", failed.stdout.str())
    assert said, failed.stdout.str()
    pytester.runpytest(*args, said.group(1)).assert_outcomes(passed=1)


def test_a_runtime_whose_chip_query_fails_gets_the_same_option(fake_atc_on_path, tiny_model,
                                                               tmp_path, monkeypatch):
    from pytest_ascend_accuracy.testing import fake_runtime

    npu = fake_runtime.install(monkeypatch, flavor="acl", soc_name="Ascend310P3")
    be = AscendBackend(Cache(tmp_path / "cache"), progress=None)

    def fails():
        raise BackendError("acl.get_soc_name failed (fake)")

    monkeypatch.setattr(be.runtime, "soc_version", fails)
    with pytest.raises(ConfigError) as info:
        be.convert(tiny_model)
    said = re.search(r"pass --soc-version=(\S+) \(or your chip\)", str(info.value))
    assert said, str(info.value)
    be = AscendBackend(Cache(tmp_path / "cache"), soc_version=said.group(1), progress=None)
    assert be.convert(tiny_model).info["soc_version"] == npu.soc_name
    x = {"x": np.zeros((1, 3, 4, 4), np.float32)}
    assert set(be.outputs(be.convert(tiny_model), x)) == {"y"}
    be.close()
