"""A baseline compared across backends lists the backend's change, not one more per field only
one backend records: a CI trial moving a baseline from the emulator to a (fake) device read
"(6 changes)", two of them the emulator's own fields, ``faults: [] -> None`` and ``overflow:
'inf' -> None``. The backend itself changing is a change, listed first; between two runs of one
backend those fields still count."""
import pytest

from pytest_ascend_accuracy.baseline.check import REBASELINE, check_baseline
from test_baseline_helpers import SPEC, make_result

EMULATOR = {"backend": "emulator", "toolkit_version": "emulator-7/onnxruntime-1.32.0",
            "soc_version": "emulator", "atc_args": ["--precision_mode=force_fp16"],
            "faults": [], "mode": ["precision_mode=force_fp16"], "overflow": "inf"}
ASCEND = {"backend": "ascend", "toolkit_version": "8.0.RC2", "soc_version": "Ascend310P3",
          "atc_args": ["--precision_mode_v2=fp16"], "mode": ["precision_mode=force_fp16"]}


@pytest.mark.parametrize("first, then", [(EMULATOR, ASCEND), (ASCEND, EMULATOR)])
def test_moving_between_backends_lists_no_field_only_one_backend_has(tmp_path, first, then):
    path = tmp_path / "default.yaml"
    check_baseline(make_result(), path, header=first, inputs=SPEC)
    out = check_baseline(make_result(), path, header=then, inputs=SPEC)
    assert out.status == REBASELINE
    assert [what for what, _, _ in out.changes] == [
        "backend", "atc_args", "soc_version", "toolkit_version"]
    lines = out.message.splitlines()
    assert lines[0].endswith("was recorded under another setup (4 changes)")
    assert lines[1] == f"  backend: {first['backend']!r} -> {then['backend']!r}"
    assert not any(word in out.message for word in ("faults", "overflow"))


def test_on_one_backend_its_own_fields_still_count(tmp_path):
    path = tmp_path / "default.yaml"
    check_baseline(make_result(), path, header=EMULATOR, inputs=SPEC)
    faulted = dict(EMULATOR, faults=["op:relu1:nan"])
    out = check_baseline(make_result(), path, header=faulted, inputs=SPEC)
    assert out.changes == (("faults", [], ["op:relu1:nan"]),)


def test_an_emulator_cache_format_bump_alone_changes_no_baseline(tmp_path, monkeypatch):
    """The baseline recorded the emulator's cache format: every format bump, numbers changed
    or not, made every emulator baseline "rebaseline required" on upgrade, and machines on two
    releases rewrote each other's files (a trial). It records the numerics version (9: format
    9 changed what OpType::Resize keeps, a review; 10, an If's branch ops in their precision,
    only for a model with such an If: tests/emulator/test_numerics_version.py), which a cache
    format bump leaves alone."""
    import onnx

    from pytest_ascend_accuracy.backends.emulator import backend as emulator
    from pytest_ascend_accuracy.baseline.env import environment_for
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.graph.onnx_graph import ort_version
    from pytest_ascend_accuracy.testing import models

    onnx.save(models.passing_mlp(), str(tmp_path / "m.onnx"))
    converted = emulator.EmulatorBackend(Cache(tmp_path / "cache")).convert(tmp_path / "m.onnx")
    env = environment_for(converted)
    assert env["toolkit_version"] == f"emulator-9/onnxruntime-{ort_version()}"
    monkeypatch.setattr(emulator, "EMULATOR_FORMAT", emulator.EMULATOR_FORMAT + 1)
    again = emulator.EmulatorBackend(Cache(tmp_path / "cache2")).convert(tmp_path / "m.onnx")
    assert environment_for(again) == env
