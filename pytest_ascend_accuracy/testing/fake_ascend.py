"""One call to put the FAKE Ascend toolchain in place for a test (plugin and backend tests).

``use_fake_ascend(monkeypatch, directory)`` installs the fake toolkit (``fake_atc``) into
``directory``, puts its ``bin`` first on ``PATH`` (clearing ``ASCEND_TOOLKIT_HOME`` /
``ASCEND_HOME_PATH`` so no real installation is picked up), and installs the fake runtime
modules (``fake_runtime``) into ``sys.modules``. With that, ``ascend_runtime_available()`` is
true and ``pytest --ascend-device=0`` runs the whole Ascend backend path against the fakes.
Everything is undone by ``monkeypatch`` at the end of the test.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .fake_toolkit import FakeToolkit, install_fake_toolkit
from .fake_runtime import FakeNpu, install


@dataclass
class FakeAscend:
    """The installed fakes: the toolkit tree and the fake NPU state (calls, dumps written)."""

    toolkit: FakeToolkit
    npu: FakeNpu
    atc_calls: Path  # JSON lines, one per fake atc invocation


def use_fake_ascend(monkeypatch, directory: "str | os.PathLike[str]", *, flavor: str = "acl",
                    device_count: int = 1, soc_name: str = "Ascend310P3",
                    toolkit_version: str = "8.0.RC2") -> FakeAscend:
    directory = Path(directory)
    toolkit = install_fake_toolkit(directory / "fake-cann", version=toolkit_version)
    monkeypatch.setenv("PATH", f"{toolkit.home / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    for var in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH", "FAKE_ATC_FAIL", "FAKE_ATC_HANG",
                "FAKE_ATC_REJECT", "FAKE_ATC_SERVER", "ASCEND_ACCURACY_RUNTIME"):
        monkeypatch.delenv(var, raising=False)
    calls = directory / "fake-atc-calls.jsonl"
    monkeypatch.setenv("FAKE_ATC_CALLS", str(calls))
    npu = install(monkeypatch, flavor=flavor, device_count=device_count, soc_name=soc_name)
    return FakeAscend(toolkit=toolkit, npu=npu, atc_calls=calls)
