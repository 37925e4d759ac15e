"""``refused_soc_advice``, the advice for a ``--soc-version`` ATC refuses, pasted as printed on
the fake toolchain, in both spellings it gives: the pytest option on the command line, and the
``soc_version=`` argument into an ``AscendBackend`` call that the test completes with nothing
but the backend's cache (its first argument).

* the device reports its chip: ``pass --soc-version=C (soc_version='C' in AscendBackend(...)),
  or leave --soc-version out``: each runs. Its Python form was ``AscendBackend(soc_version='C')``,
  which pasted raised ``TypeError: missing 1 required positional argument: 'cache'``.
* the runtime cannot report the chip (ais_bench without pyACL): ``the value is Ascend<Name>:
  pytest --soc-version=Ascend<Name> (soc_version='Ascend<Name>' in AscendBackend(...))``, with
  ``<Name>`` what ``npu-smi info`` shows (310P3 on a 310P3 device); each runs. Its Python form
  was ``AscendBackend(soc_version=...)`` (the same TypeError), and it said to leave
  --soc-version out, which fails there ("not given and the runtime reports none")."""
import re

import numpy as np
import pytest

from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.errors import ConversionError
from pytest_ascend_accuracy.testing.fake_ascend import use_fake_ascend
from tests.ascend.test_soc_advice_pasted import RUN_ON_DEVICE  # the same test file, run on it

#: the device reports its chip (pyACL)
KNOWN = re.compile(r"Ascend device 0 is \w+: pass (--soc-version=\S+) \((soc_version='\w+') in "
                   r"AscendBackend\(\.\.\.\)\), or leave (--soc-version) out to use the chip the "
                   r"device reports\.")
#: the runtime cannot report it: ``<Name>`` is for the user to fill in
UNKNOWN = re.compile(r"`npu-smi info` shows its Name, the value is Ascend<Name>: pytest "
                     r"(--soc-version=Ascend<Name>) \((soc_version='Ascend<Name>') in "
                     r"AscendBackend\(\.\.\.\)\); this runtime cannot report the chip, so "
                     r"--soc-version cannot be left out\.")
NAME = "310P3"  # what `npu-smi info` shows on the fake device (an Ascend310P3)
#: the backend call the test pastes the argument into: the cache is all it adds
CALL = "AscendBackend(Cache(cache_dir), {argument}, progress=None)"
X = {"x": np.zeros((1, 3, 4, 4), np.float32)}


def _project(pytester, tiny_model, monkeypatch, tmp_path, flavor):
    monkeypatch.delenv("ASCEND_RT_VISIBLE_DEVICES", raising=False)
    use_fake_ascend(monkeypatch, tmp_path, flavor=flavor, device_count=1,
                    soc_name="Ascend310P3")
    pytester.makepyfile(test_run=RUN_ON_DEVICE.format(model=tiny_model))
    return ["-q", "-p", "no:cacheprovider", "--ascend-device=0"]


def _refused(pytester, args, pattern):
    failed = pytester.runpytest(*args, "--soc-version=Ascend999")
    failed.assert_outcomes(failed=1)
    out = failed.stdout.str()
    assert "Soc version [Ascend999] is invalid" in out, out  # ATC's own refusal, then the advice
    said = pattern.search(out)
    assert said, out
    return said


def test_the_device_chip_pasted_on_the_command_line_runs(pytester, tiny_model, monkeypatch,
                                                         tmp_path):
    args = _project(pytester, tiny_model, monkeypatch, tmp_path, "acl")
    option, _, left_out = _refused(pytester, args, KNOWN).groups()
    pasted = pytester.runpytest(*args, option)
    pasted.assert_outcomes(passed=1)
    pasted.stdout.fnmatch_lines(["backend: ascend backend on device 0, soc Ascend310P3"])
    without = pytester.runpytest(*[a for a in args if not a.startswith(left_out + "=")])
    without.assert_outcomes(passed=1)


def test_an_unreported_chip_pasted_on_the_command_line_runs(pytester, tiny_model, monkeypatch,
                                                            tmp_path):
    args = _project(pytester, tiny_model, monkeypatch, tmp_path, "ais_bench")
    option, _ = _refused(pytester, args, UNKNOWN).groups()
    pasted = pytester.runpytest(*args, option.replace("<Name>", NAME))
    pasted.assert_outcomes(passed=1)
    pasted.stdout.fnmatch_lines(["backend: ascend backend on device 0, soc Ascend310P3"])
    without = pytester.runpytest(*args)  # as it says, leaving the option out does not do here
    without.assert_outcomes(failed=1)
    without.stdout.fnmatch_lines(["*not given and the runtime reports none*"])


def _pasted_into_the_call(tiny_model, tmp_path, pattern, group, fill=lambda a: a):
    names = {"AscendBackend": AscendBackend, "Cache": Cache, "cache_dir": tmp_path / "cache"}
    be = eval(CALL.format(argument="soc_version='Ascend999'"), names)
    with pytest.raises(ConversionError) as info:
        be.convert(tiny_model)
    be.close()
    said = pattern.search(str(info.value))
    assert said, str(info.value)
    be = eval(CALL.format(argument=fill(said.group(group))), names)  # the argument, as printed
    converted = be.convert(tiny_model)
    assert converted.info["soc_version"] == "Ascend310P3"
    assert set(be.outputs(converted, X)) == {"y"}
    be.close()


def test_the_device_chip_pasted_into_the_backend_call_runs(fake_atc_on_path, tiny_model,
                                                           tmp_path, monkeypatch):
    from pytest_ascend_accuracy.testing import fake_runtime

    fake_runtime.install(monkeypatch, flavor="acl", soc_name="Ascend310P3")
    _pasted_into_the_call(tiny_model, tmp_path, KNOWN, 2)


def test_an_unreported_chip_pasted_into_the_backend_call_runs(fake_atc_on_path, tiny_model,
                                                              tmp_path, monkeypatch):
    from pytest_ascend_accuracy.testing import fake_runtime

    fake_runtime.install(monkeypatch, flavor="ais_bench", soc_name="Ascend310P3")
    _pasted_into_the_call(tiny_model, tmp_path, UNKNOWN, 2,
                          lambda a: a.replace("<Name>", NAME))
