"""The baseline cycle end to end on the CPU emulator: record, pass, catch a drop that the fixed
threshold misses, say "rebaseline required" when the conversion changes, regenerate."""
import pytest

from pytest_ascend_accuracy.core import modes
from pytest_ascend_accuracy.baseline import (MISSING, PASSED, REBASELINE, REGRESSED,
                                             baseline_path, check_baseline, environment_for,
                                             inputs_for_baseline, read_baseline)
from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
from pytest_ascend_accuracy.backends.emulator.faults import Fault
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
from pytest_ascend_accuracy.testing import models


@pytest.fixture
def env(tmp_path):
    cache = Cache(tmp_path / "cache")
    model = models.transformer_block()
    path = baseline_path(tmp_path / "baselines", "transformer_block", modes.DEFAULT)

    def run(mode=modes.DEFAULT, faults=()):
        backend = EmulatorBackend(cache, faults=faults)
        inputs = inputs_for_baseline(model, path, seed=0)
        converted = backend.convert(model, mode)
        result = compare_dumps(backend.run(converted, inputs, dump_dir=tmp_path / "dumps"),
                               golden_dump(model, inputs, cache=cache))
        return result, converted, inputs
    return run, path


def test_full_cycle_on_the_emulator(env):
    run, path = env
    result, converted, inputs = run()
    header = environment_for(converted)
    assert header["backend"] == "emulator" and header["atc_args"] == ["--precision_mode=force_fp16"]
    first = check_baseline(result, path, header=header, inputs=inputs, info={"model": "transformer_block"})
    assert first.status == MISSING and path.exists()
    assert check_baseline(result, path, header=header, inputs=inputs).status == PASSED

    # the "driver got worse" story: same toolkit, same arguments, one op now noisier
    worse, _, _ = run(faults=[Fault.on_op("/attn/q/MatMul", amount=0.1)])
    assert worse.judge(0.95).passed  # the fixed threshold still passes
    out = check_baseline(worse, path, header=header, inputs=inputs)
    assert out.status == REGRESSED and not out.passed
    assert out.regressions[0].label == "/attn/q/MatMul"
    assert out.message.splitlines()[1].startswith("  /attn/q/MatMul: cosine 1.000000 -> 0.99")

    # another conversion: rebaseline required, nothing judged op by op
    hp, hp_converted, _ = run(mode=modes.HIGH_PRECISION)
    out = check_baseline(hp, path, header=environment_for(hp_converted), inputs=inputs)
    assert out.status == REBASELINE
    assert "  atc_args: ['--precision_mode=force_fp16'] -> ['--precision_mode=allow_fp32_to_fp16']" \
        in out.message.splitlines()

    assert check_baseline(result, path, header=header, inputs=inputs, regen="all").passed
    before = path.read_bytes()
    again, _, _ = run()
    assert check_baseline(again, path, header=header, inputs=inputs, regen="all").passed
    assert path.read_bytes() == before  # a second run writes byte-identical values
    assert read_baseline(path).info == {}
