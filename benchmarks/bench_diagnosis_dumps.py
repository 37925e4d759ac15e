"""What a diagnosis (``--accuracy-diagnose``, ``ascend-accuracy diagnose``) writes, holds on disk
and takes when only its first run dumps op inputs (step 5 reads them), the later runs their
outputs, and a search's runs lose their dumps once judged (run again where a step reads one),
against every run dumping ``all`` and keeping it to the end as before
(``triage.runner.LATER_DUMP_MODE``, ``KEEP_SEARCH_DUMPS``), issue 17.

    python benchmarks/bench_diagnosis_dumps.py                     # PP-OCRv4 det 320, 3 rounds
    python benchmarks/bench_diagnosis_dumps.py --det-size 736 --rounds 2

Needs the ``ocr`` extra. One untimed diagnosis first fills the cache (golden, conversions), and
each timed one, alternating (``all``, ``output``, ...), starts from a copy of that cache (a
diagnosis whose budget ran out converts further from a fuller cache), so they walk the same
modes and time the runs, their dumps and compares; each run's dump directory is measured as it
is written, and the dumps on disk after each run (before, a diagnosis kept every one until it
ended). Read the ratios, not the seconds (a shared
VM's page-cache writes).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ocr_models import MODELS, files_and_bytes, ocr_model, random_inputs  # noqa: E402

#: (LATER_DUMP_MODE, KEEP_SEARCH_DUMPS): the baseline (before), then this version's
VARIANTS = {"before": ("all", True), "now": ("output", False)}


def bench(size: int, rounds: int, threshold: float, budget: int) -> dict:
    import onnx  # noqa: F401  (imports before the clock, as in bench_check)
    import onnxruntime  # noqa: F401

    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.triage import runner
    from pytest_ascend_accuracy.triage.flow import diagnose

    model = str(ocr_model("det"))
    shape = MODELS["det"][1].format(size=size)
    feeds = random_inputs(model, shape)
    work = Path(tempfile.mkdtemp(prefix="bench-diagnosis-dumps-"))
    written = []

    peak = [0]

    class Measured(EmulatorBackend):
        def run(self, converted, inputs, **kw):
            dump = super().run(converted, inputs, **kw)
            if kw.get("dump_dir") is not None:
                written.append(files_and_bytes(Path(kw["dump_dir"])))
                peak[0] = max(peak[0], files_and_bytes(Path(kw["dump_dir"]).parent)[1])
            return dump

    try:
        def one(variant: str):
            runner.LATER_DUMP_MODE, runner.KEEP_SEARCH_DUMPS = VARIANTS[variant]
            written.clear()
            peak[0] = 0
            cache = Cache(work / "cache")
            t = time.perf_counter()
            d = diagnose(model, feeds, Measured(cache), threshold, budget=budget, cache=cache,
                         input_shape=shape)
            t = time.perf_counter() - t
            cache.release()
            return t, [list(w) for w in written], peak[0], d.verdict

        one("now")  # untimed: golden and conversions into the cache, then kept as they are:
        shutil.copytree(work / "cache", work / "filled")  # a diagnosis whose budget ran out
        times = {v: [] for v in VARIANTS}  # converts further from a fuller cache each time
        dumps, peaks, verdicts = {}, {}, {}
        for _ in range(rounds):
            for v in VARIANTS:
                shutil.rmtree(work / "cache")
                shutil.copytree(work / "filled", work / "cache")
                t, dumps[v], peaks[v], verdicts[v] = one(v)
                times[v].append(t)
    finally:
        runner.LATER_DUMP_MODE, runner.KEEP_SEARCH_DUMPS = VARIANTS["now"]
        shutil.rmtree(work, ignore_errors=True)
    return {"shape": shape, "times": times, "dumps": dumps, "peaks": peaks, "verdicts": verdicts}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--det-size", type=int, default=320)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threshold", type=float, default=0.99999,
                    help="a threshold the default conversion fails, so the flow walks its steps")
    ap.add_argument("--budget", type=int, default=16, help="as the plugin's default; the untimed "
                    "first diagnosis must finish within it (a later one would go further)")
    args = ap.parse_args(argv)
    r = bench(args.det_size, args.rounds, args.threshold, args.budget)
    med = {v: statistics.median(t) for v, t in r["times"].items()}
    print(f"== PP-OCRv4 det ({r['shape']}), diagnosis at threshold {args.threshold}, "
          f"budget {args.budget}, median of {args.rounds} (conversions cached)")
    total = {}
    for v in VARIANTS:
        runs = r["dumps"][v]
        total[v] = sum(b for _, b in runs)
        each = " ".join(f"{t:.2f}" for t in r["times"][v])
        print(f"   {v:6s} {VARIANTS[v]}: {med[v]:6.2f} s  [{each}]  {len(runs)} runs, "
              f"{total[v] / 1e6:5.0f} MB written in {sum(f for f, _ in runs)} files, "
              f"{r['peaks'][v] / 1e6:5.0f} MB on disk at most")
    same = r["verdicts"]["before"] == r["verdicts"]["now"]
    print(f"   now / before: time {med['now'] / med['before']:.2f}, bytes written "
          f"{total['now'] / max(1, total['before']):.2f}, on disk at most "
          f"{r['peaks']['now'] / max(1, r['peaks']['before']):.2f}; the same verdict: {same}")
    for v in VARIANTS:
        print(f"   verdict ({v}): {r['verdicts'][v][:300]}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
