"""A device whose chip the toolkit has no platform config for (a toolkit older than the chip):
ATC refuses ``--soc_version=<the device's chip>``, and no other chip name helps. The advice
names the toolkit as what lacks the chip and how to point the backend at one that has it, never
the refused value again, "leave --soc-version out" (already out) or typo-closest chips (review
of aefdb4b: it printed ``closest: Ascend910ProB, Ascend910ProA`` and ``pass
--soc-version=Ascend950PR``). The advice is applied as printed and the conversion then runs."""
import json
import re
import subprocess

import pytest

from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.errors import ConversionError
from pytest_ascend_accuracy.testing import fake_runtime

CHIP = "Ascend950PR"  # a real chip name the fake toolkit (8.0.RC2) has no .ini for
#: the lines of CANN's ``<install dir>/set_env.sh`` that ``toolkit.find_toolkit`` reads
SET_ENV = """\
export ASCEND_TOOLKIT_HOME={home}
export PATH=${{ASCEND_TOOLKIT_HOME}}/bin:${{ASCEND_TOOLKIT_HOME}}/compiler/ccec_compiler/bin:$PATH
export ASCEND_HOME_PATH=${{ASCEND_TOOLKIT_HOME}}
"""


def refused(model, cache, soc_version):
    """The advice line of the refusal: the last line before the command and the logs."""
    be = AscendBackend(Cache(cache), soc_version=soc_version, progress=None)
    with pytest.raises(ConversionError) as info:
        be.convert(model)
    assert info.value.code == "EE1001"
    return str(info.value).split("\ncommand: ")[0].splitlines()[-1]


def newer_toolkit(root):
    """A fake CANN install that knows ``CHIP``, with a ``set_env.sh`` as CANN ships one."""
    from pytest_ascend_accuracy.backends.ascend.soc_names import toolkit_soc_versions
    from pytest_ascend_accuracy.testing.fake_toolkit import install_fake_toolkit

    tk = install_fake_toolkit(root / "latest", version="8.5.0")
    folder = toolkit_soc_versions(tk.home)[1]
    (folder / f"{CHIP}.ini").write_text(f"# FAKE platform config\n[version]\nSoC_version={CHIP}\n")
    (root / "set_env.sh").write_text(SET_ENV.format(home=tk.home))
    return tk


def apply_advice(text, install_dir, monkeypatch):
    """Run the printed command with ``<its install dir>`` filled in; keep what it exports."""
    command = re.search(r"`(source <its install dir>/set_env\.sh)`", text).group(1)
    command = command.replace("source ", ". ").replace("<its install dir>", str(install_dir))
    out = subprocess.run(["sh", "-c", f"{command} && env -0"], capture_output=True, text=True,
                         check=True).stdout
    env = dict(item.split("=", 1) for item in out.split("\0") if "=" in item)
    for var in ("PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH"):
        monkeypatch.setenv(var, env[var])


@pytest.mark.parametrize("soc_version, how", [(None, "no --soc-version given"),
                                              (CHIP, "as given by --soc-version")])
def test_device_chip_unknown_to_the_toolkit(fake_atc_on_path, fake_toolkit, tiny_model, tmp_path,
                                            monkeypatch, soc_version, how):
    fake_runtime.install(monkeypatch, flavor="acl", soc_name=CHIP)
    advice = refused(tiny_model, tmp_path / "cache", soc_version)
    assert advice.startswith(f"--soc_version={CHIP} ({how}) is the chip Ascend device 0 "
                             "reports, and this CANN toolkit has no platform config for it: it "
                             f"has no {CHIP}.ini in ")
    assert ("Converting for Ascend950PR needs a CANN toolkit that supports it: install one and "
            "`source <its install dir>/set_env.sh` before running") in advice
    assert f"The toolkit used now: CANN toolkit 8.0.RC2 at {fake_toolkit.home}," in advice
    for wrong in ("closest", "pass --soc-version", "leave --soc-version out", "Ascend910"):
        assert wrong not in advice
    newer = newer_toolkit(tmp_path / "cann-8.5")
    apply_advice(advice, tmp_path / "cann-8.5", monkeypatch)
    be = AscendBackend(Cache(tmp_path / "cache"), soc_version=soc_version, progress=None)
    converted = be.convert(tiny_model)
    record = json.loads((converted.path.parent / "atc_command.json").read_text())
    assert record["soc_version"] == CHIP and record["toolkit_home"] == str(newer.home)
    assert record["toolkit_version"] == "8.5.0" and converted.path.is_file()


def test_a_typo_on_a_device_the_toolkit_lacks_names_the_toolkit(fake_atc_on_path, tiny_model,
                                                                tmp_path, monkeypatch):
    fake_runtime.install(monkeypatch, flavor="acl", soc_name=CHIP)
    advice = refused(tiny_model, tmp_path / "cache", "Ascend999")
    assert advice.startswith("--soc_version=Ascend999 is not a chip this toolkit can convert "
                             "for (it knows the names of the .ini files in ")
    assert (f"Ascend device 0 is {CHIP}, which this toolkit cannot convert for either (it has "
            f"no {CHIP}.ini). Converting for {CHIP} needs a CANN toolkit") in advice
    assert advice.endswith(f"Then pass --soc-version={CHIP}, or leave --soc-version out to use "
                           "the chip the device reports.")
    newer_toolkit(tmp_path / "cann-8.5")
    apply_advice(advice, tmp_path / "cann-8.5", monkeypatch)
    for soc in (CHIP, None):  # both ways the advice gives, with the newer toolkit
        be = AscendBackend(Cache(tmp_path / "cache"), soc_version=soc, progress=None)
        assert be.convert(tiny_model).info["soc_version"] == CHIP


def test_a_toolkit_that_has_the_chips_ini_is_not_said_to_lack_it(tmp_path):
    """ATC refusing the device's chip while the toolkit read has its .ini (the atc that ran is
    another toolkit's): "it has no Ascend950PR.ini in <folder>" was false (a review)."""
    from pytest_ascend_accuracy.backends.ascend.soc_names import refused_soc_advice

    folder = tmp_path / "x86_64-linux" / "data" / "platform_config"
    folder.mkdir(parents=True)
    for chip in ("Ascend310P3", "Ascend950PR"):
        (folder / f"{chip}.ini").write_text("[version]\n")
    text = refused_soc_advice("Ascend950PR", tmp_path, (0, "Ascend950PR"), given=False,
                              toolkit="CANN 8.0 at x")
    assert "has no Ascend950PR.ini" not in text
    assert f"the toolkit at {folder} has Ascend950PR.ini, yet the atc that ran refused it" in text
    assert "source <its install dir>/set_env.sh" in text
    (folder / "Ascend950PR.ini").unlink()
    assert "it has no Ascend950PR.ini" in refused_soc_advice("Ascend950PR", tmp_path,
                                                             (0, "Ascend950PR"), given=False)


def test_the_refusal_is_found_past_a_long_traceback(fake_atc_on_path, tiny_model, tmp_path,
                                                    monkeypatch):
    """The chip refusal was looked for in the output's last 20 lines only: followed by a longer
    TraceBack (real ATC prints a line per call level or failing op), its advice was lost."""
    fake_runtime.install(monkeypatch, flavor="acl", soc_name=CHIP)
    monkeypatch.setenv("FAKE_ATC_TRACEBACK", "30")
    advice = refused(tiny_model, tmp_path / "cache", "Ascend999")
    assert advice.startswith("--soc_version=Ascend999 is not a chip this toolkit can convert "
                             "for (it knows the names of the .ini files in ")
