"""The Python API's and ``hint_for``'s "no float16 overflow seen" probe where the run was the
emulator's, which does not emulate buffer reuse (``report.emulated_probes``): the API's text
offers mode="fusion_off" alone and says why (mode="buffer_off" repeats the verdict there), and
the plugin's hint for a fusion-off run offers no probe; an Ascend device's run, or the emulator
with a buffer fault injected, keeps the probe as it was (T1: the pasted probes repeated the
verdict, with nothing said)."""
import pytest

from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy

pytest.importorskip("onnxruntime")

THRESHOLD = 0.9999999  # plain float16 rounding fails passing_mlp's MatMuls
API_NOTE = ('compare with mode="fusion_off" to see whether a fusion pass causes the first '
            'failure (mode="buffer_off" is not offered: the emulator backend does not emulate '
            "buffer reuse, so it repeats this verdict; on an Ascend device compare with it too); "
            "where it does not pass (float16 rounding alone), diagnose(")


def _run(tmp_path, mode=None, faults=()):
    """(the emulator's dump of passing_mlp under ``mode`` with ``faults``, as its run returns it:
    its meta names the backend; the golden)."""
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
    from pytest_ascend_accuracy.testing import models

    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache, faults=list(faults))
    model = models.passing_mlp()
    inputs = make_inputs(model)
    actual = backend.run(backend.convert(model, mode), inputs, dump=True,
                         dump_dir=tmp_path / f"dump-{len(faults)}")
    return actual, golden_dump(model, inputs, cache=cache)


def _text(run):
    with pytest.raises(AccuracyFailure) as exc:
        assert_accuracy(*run, THRESHOLD)
    return str(exc.value).splitlines()[-1]


def test_the_api_offers_fusion_off_alone_on_the_emulator(tmp_path):
    from pytest_ascend_accuracy.backends.emulator.faults import Fault

    assert API_NOTE in _text(_run(tmp_path))
    faulted = _text(_run(tmp_path, faults=[Fault.on_buffer("relu1")]))
    assert "emulator" not in faulted and 'mode="buffer_off" to see whether' in faulted, faulted


def test_which_runs_buffer_reuse_cannot_change():
    from pytest_ascend_accuracy.report.emulated_probes import buffer_off_neutral

    assert buffer_off_neutral({"backend": "emulator", "faults_active": {}})
    assert buffer_off_neutral({"backend": "emulator"})
    assert not buffer_off_neutral({"backend": "emulator", "faults_active": {
        "buffer fault on 'relu1': noise (1)": ["relu1"]}})
    assert not buffer_off_neutral({"backend": "ascend", "device_id": 0})
    assert not buffer_off_neutral({}) and not buffer_off_neutral(None)


def test_hint_for_a_fusion_off_run_offers_the_probe_on_a_device_only(tmp_path):
    """The same fusion-off failure: read back as the emulator's, no probe; with the run's meta
    saying an Ascend device ran it, ``[BUFFER_OFF | FUSION_OFF]`` as before."""
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.core.modes import BUFFER_OFF, FUSION_OFF
    from pytest_ascend_accuracy.report.hints import DIAGNOSE_ADVICE, hint_for

    actual, golden = _run(tmp_path, FUSION_OFF)
    verdict = compare_dumps(actual, golden).judge(THRESHOLD)
    assert actual.meta["backend"] == "emulator"
    hint = hint_for(verdict, golden, FUSION_OFF, actual=actual)
    assert not hint.modes and hint.advice == DIAGNOSE_ADVICE, hint.text()
    assert "buffer reuse off changes nothing on this backend, the emulator" in hint.reason
    actual.meta.update(backend="ascend", faults_active={})
    hint = hint_for(verdict, golden, FUSION_OFF, actual=actual)
    assert hint.modes == (BUFFER_OFF | FUSION_OFF,) and "emulator" not in hint.text()
