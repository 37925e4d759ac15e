"""``assert_accuracy``'s hint for a failure by plain float16 rounding (no overflow, a MatMul in
float16 under a tight threshold) offered only mode="fusion_off" and mode="buffer_off", which both
fail there; it names the flow that keeps ops in float32, as the plugin's hint does, and that call
(imported as printed) names a set whose mode passes."""
import re

import pytest

from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy

pytest.importorskip("onnxruntime")

THRESHOLD = 0.9999999


def test_the_library_hint_names_diagnose_whose_fix_passes(tmp_path):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
    from pytest_ascend_accuracy.testing import models
    from pytest_ascend_accuracy.testing.emulated_pair import emulated_pair

    pair = emulated_pair(tmp_path, models.passing_mlp(), name="mlp")
    with pytest.raises(AccuracyFailure) as exc:
        assert_accuracy(pair.dump, pair.golden, THRESHOLD)
    hint = str(exc.value).splitlines()[-1]
    assert "no float16 overflow" in hint and 'mode="fusion_off"' in hint
    call, where = re.search(r"where neither passes \(float16 rounding alone\), (diagnose\(model, "
                            r"inputs, threshold=\.\.\.\)) names the ops to keep in float32 \((from "
                            r"[\w.]+ import diagnose)\)$", hint).groups()
    space = {}
    exec(where, space)  # the import as printed
    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache)
    inputs = make_inputs(str(pair.model))
    d = space["diagnose"](str(pair.model), inputs, threshold=THRESHOLD, backend=backend,
                          cache=cache)
    assert d.fix_mode is not None and d.keep_dtype
    fixed = backend.run(backend.convert(str(pair.model), d.fix_mode), inputs, dump=True,
                        dump_dir=tmp_path / "fixed")
    assert_accuracy(fixed, pair.golden, THRESHOLD)
