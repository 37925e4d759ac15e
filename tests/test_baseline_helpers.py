"""Shared helpers of the test_baseline_* modules (no tests here): CompareResults built from
in-memory arrays, so most baseline tests need no onnx."""
import numpy as np

from pytest_ascend_accuracy.baseline.file import InputSpec, TensorSpec
from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet

GOLDEN = {name: np.random.default_rng(k).standard_normal(64).astype(np.float32)
          for k, name in enumerate(["conv1", "relu1", "fc/MatMul", "softmax"])}


def make_result(noise=None, nan=None, drop=(), extra=()):
    """A CompareResult of GOLDEN against a copy: ``noise`` {op: relative noise amount} lowers
    that op's cosine, ``nan`` {op: count} puts NaNs in it, ``drop`` leaves ops out of the
    actual run, ``extra`` adds actual-and-golden ops the baseline may not know."""
    noise, nan = noise or {}, nan or {}
    golden, actual = {}, {}
    for name, g in list(GOLDEN.items()) + [(n, np.linspace(-1, 1, 32, dtype=np.float32)) for n in extra]:
        golden[name] = [g]
        if name in drop:
            continue
        a = g.copy()
        if name in noise:
            pattern = np.random.default_rng(99).standard_normal(a.size).astype(np.float32)
            a = a + noise[name] * np.sqrt(np.mean(g * g)) * pattern
        if name in nan:
            a[:nan[name]] = np.nan
        actual[name] = [a]
    return compare_dumps(DumpSet.from_arrays(actual), DumpSet.from_arrays(golden), kl=False)


SPEC = InputSpec(seed=0, tensors=(TensorSpec("x", "float32", (1, 16), "ab" * 32),))
HEADER = {"backend": "emulator", "toolkit_version": "8.0.RC1", "soc_version": "Ascend310P3",
          "atc_args": ["--precision_mode=force_fp16"]}
