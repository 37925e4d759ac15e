"""The sums of a float16/float32 tensor pair in compiled passes (the optional C extension
``_pair_sums``): one pass for every metric but KL, a second for KL when it is wanted.

The numpy kernel (``kernel``) makes ~30 array passes a chunk, ~2.7 ns a value on the
development machine (4.2 ns with KL); the compiled pass takes ~1 ns (~1.7 ns with KL), with
every sum of products in double (its cosine agrees with float64 to ~1e-14, the numpy
kernel's to ~1e-7) and |x-y| and the relative-error terms in float32 exactly as the numpy
kernel's float32 path computes them, so max_abs and max_rel are the same bits (where values
past ~1.8e19 overflow the numpy kernel's float32 squares, its float64 fallback computes
|x/y - 1| instead and differs in the last digits). KL follows the numpy kernel's form (float32
terms, a guess k of Σu/Σv, the exact correction in ``PairAccumulator.kl``), k taken as
there from the first 65,536 values. ``_pair_sums.c`` says what is summed how.

The extension is built by ``pip install`` where a C compiler is there (``setup.py``: an
optional extension, so an install without a compiler succeeds) and is used only for the cases
it covers: both sides float16 or float32 in native byte order, contiguous, every value finite.
Everything else -- NaN/Inf present (it returns None and the numpy kernel counts them), a
float32 sum overflowing, KL terms leaving float32 (a subnormal range), other dtypes, or no
extension -- goes through the numpy kernel as before. ``ASCEND_ACCURACY_NUMPY_KERNEL=1``
turns the extension off (to compare the two, or to rule it out).
"""
from __future__ import annotations


import numpy as np

from ..core.compiled_modules import load_once

from .kernel import PairAccumulator

#: set to "1": never use the compiled passes
NUMPY_KERNEL_ENV = "ASCEND_ACCURACY_NUMPY_KERNEL"
#: the ``_pair_sums.ABI`` this module calls (``sums(x, x_half, y, y_half, n, kl)``)
ABI = 2
_HALF, _SINGLE = np.dtype(np.float16), np.dtype(np.float32)
_MODULE: list = []  # [module or None], once looked up


def pair_sums_extension():
    """The compiled module, or None when it was not built here (or is turned off)."""
    # the first _pair_sums.c had no ABI constant and took 5 arguments
    return load_once(_MODULE, f"{__package__}._pair_sums", ABI, NUMPY_KERNEL_ENV)


def accumulate(acc: PairAccumulator, x: np.ndarray, y: np.ndarray) -> bool:
    """Fill ``acc`` (fresh) with the sums of the flat arrays ``x`` and ``y`` in one compiled
    pass, and the KL terms in a second one when ``acc`` wants KL; False (``acc`` untouched)
    when the pair is not one the passes cover."""
    if x.size == 0 or x.size != y.size:
        return False
    if x.dtype not in (_HALF, _SINGLE) or y.dtype not in (_HALF, _SINGLE):
        return False
    if not (x.flags.c_contiguous and y.flags.c_contiguous):
        return False
    module = pair_sums_extension()
    if module is None:
        return False
    n = int(x.size)
    sums = module.sums(x, x.dtype == _HALF, y, y.dtype == _HALF, n, acc.kl_wanted)
    if sums is None:  # NaN/Inf on a side, a float32 sum overflowed, or KL left float32
        return False
    (sxx, syy, sxy, sdd, sum_abs, max_abs, sum_rel, max_rel,
     xmin, xmax, ymin, ymax, sx, sy, m2x, m2y) = sums[:16]
    if acc.kl_wanted:  # KL = Σe/Σu + ln r + 1 - r, r = k Σv/Σu (PairAccumulator.kl)
        acc.kl_su, acc.kl_sv, acc.kl_e, acc._k = sums[16:]
        acc._fused = True
    acc.size = acc.finite = n
    acc.sxx, acc.syy, acc.sxy, acc.sdd = sxx, syy, sxy, sdd
    acc.sum_abs, acc.max_abs, acc.sum_rel, acc.max_rel = sum_abs, max_abs, sum_rel, max_rel
    acc.xmin, acc.xmax, acc.ymin, acc.ymax = xmin, xmax, ymin, ymax
    acc.mx.merge(n, sx / n, m2x)
    acc.my.merge(n, sy / n, m2y)
    return True


def kernel_name() -> str:
    """Which kernel computes finite float16/float32 metrics here (for benchmarks and reports)."""
    return "compiled (_pair_sums)" if pair_sums_extension() is not None else "numpy"


__all__ = ["NUMPY_KERNEL_ENV", "accumulate", "kernel_name", "pair_sums_extension"]
