"""A FAKE CANN toolkit tree for tests: ``<dir>/bin/atc`` (a shim for the fake ATC,
``fake_atc``) and the install record ``<dir>/<arch>-linux/ascend_toolkit_install.info``, so
toolkit discovery (``backends.ascend.toolkit``) works exactly as on a real installation.

The shim runs ``fake_atc_server.py`` as a stdlib-only client of a persistent interpreter (one
per installing process, started here in the background) that runs the fake ATC in a forked
child per call; see ``fake_atc_server`` for how a call stays a real process to its caller.
"""
from __future__ import annotations

import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Tuple

#: chip names the fake toolkit knows: written as ``<arch>-linux/data/platform_config/<name>.ini``,
#: where a real toolkit keeps one .ini per chip its ATC can convert for (the ATC samples' and
#: CANN docs' advice for ``--soc_version``: "the name of the .ini file is the version of the
#: Ascend AI processor"). Real names (``npu-smi info`` Name with ``Ascend`` before it).
SOC_VERSIONS: Tuple[str, ...] = (
    "Ascend310", "Ascend310P1", "Ascend310P3", "Ascend310B1", "Ascend310B4", "Ascend910A",
    "Ascend910B", "Ascend910ProA", "Ascend910ProB", "Ascend910PremiumA", "Ascend910B1",
    "Ascend910B2", "Ascend910B3", "Ascend910B4", "Ascend910_9391", "Ascend910_9392",
    "Ascend910_9381", "Ascend910_9382", "Ascend910_9372", "Ascend910_9362")
PLATFORM_CONFIG = os.path.join("data", "platform_config")


@dataclass
class FakeToolkit:
    """A fake CANN toolkit tree: ``home/bin/atc`` (shim) and the version file."""

    home: Path
    atc: Path
    version: str


def install_fake_toolkit(directory: "str | os.PathLike[str]", *, version: str = "8.0.RC2",
                         python: Optional[str] = None) -> FakeToolkit:
    """Write a fake toolkit into ``directory``: ``bin/atc`` (a shell shim running the
    ``fake_atc_server`` client with the current interpreter) and
    ``<arch>-linux/ascend_toolkit_install.info``. Put ``<directory>/bin`` on PATH or
    ``ASCEND_TOOLKIT_HOME=<directory>`` to use it. The persistent interpreter behind the shim
    (one per installing process, shared by its toolkits) lives as long as this process, and at
    most ``fake_atc_server.IDLE_SECONDS`` idle."""
    import hashlib
    import shlex
    import tempfile

    server = Path(__file__).with_name("fake_atc_server.py")  # run as a script: no import cycle
    home = Path(directory)
    (home / "bin").mkdir(parents=True, exist_ok=True)
    atc = home / "bin" / "atc"
    interpreter = python or sys.executable
    # one persistent interpreter per installing process: what differs between toolkits (the
    # version, the knobs) travels with each call's environment
    tag = hashlib.sha256(f"{os.getpid()}:{interpreter}:{server}".encode()).hexdigest()[:16]
    socket_path = os.path.join(tempfile.gettempdir(), f"fake-atc-{tag}.sock")
    settings = {"FAKE_ATC_VERSION": version, "FAKE_ATC_HOME": str(home),
                "FAKE_ATC_SOCKET": socket_path,
                "FAKE_ATC_OWNER": str(os.getpid()), "FAKE_ATC_PYTHON": interpreter}
    lines = ["#!/bin/sh", "# FAKE atc for pytest-ascend-accuracy tests, not the CANN ATC"]
    lines += [f"{k}={shlex.quote(v)}" for k, v in settings.items()]
    lines += [f"export {' '.join(settings)}",
              f"exec {shlex.quote(interpreter)} -S {shlex.quote(str(server))} \"$@\"", ""]
    atc.write_text("\n".join(lines))
    atc.chmod(0o755)
    starting_or_up = os.path.exists(socket_path) or os.path.exists(socket_path + ".lock")
    if not starting_or_up and os.environ.get("FAKE_ATC_SERVER", "1") != "0":
        _start_server_early(interpreter, socket_path)
    arch = platform.machine() or "x86_64"
    info = home / f"{arch}-linux" / "ascend_toolkit_install.info"
    info.parent.mkdir(parents=True, exist_ok=True)
    info.write_text(f"package_name=Ascend-cann-toolkit-FAKE\nversion={version}\narch={arch}\n"
                    f"os=linux\npath={home}\n")
    platform_config = info.parent / PLATFORM_CONFIG
    platform_config.mkdir(parents=True, exist_ok=True)
    for soc in SOC_VERSIONS:
        text = f"# FAKE platform config\n[version]\nSoC_version={soc}\n"
        (platform_config / f"{soc}.ini").write_text(text)
    return FakeToolkit(home=home, atc=atc, version=version)


def _start_server_early(interpreter: str, socket_path: str) -> None:
    """Start the persistent interpreter now, in the background, so its imports overlap with the
    caller's work; the first ``atc`` call would start it otherwise (``fake_atc_server``)."""
    import subprocess

    try:
        subprocess.Popen([interpreter, "-m", "pytest_ascend_accuracy.testing.fake_atc_server",
                          "--fake-atc-serve", socket_path, str(os.getpid())],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, close_fds=True)
    except OSError:
        pass  # the first call starts it, or runs the fake ATC directly
