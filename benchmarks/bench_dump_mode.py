"""What the emulator's ``dump_mode`` saves: run+dump with ``all`` (every op's inputs and outputs,
the emulator's default) against ``output`` (ACL's default: what a check compares), issue 17.

    python benchmarks/bench_dump_mode.py                 # PP-OCR cls and det 736, 3 rounds
    python benchmarks/bench_dump_mode.py --which det --det-size 320 --rounds 5

Needs the ``ocr`` extra (as ``bench_check``). One process per model: the model is converted
once, then the two modes run alternately (``all``, ``output``, ``all``, ...) into fresh dump
directories that are removed after each run, so both see the same machine load; the medians
and their ratio are printed, with the bytes and files each mode writes. Timings on a shared
machine are noisy (the dump is mostly page-cache writes): read the ratio, not the seconds.
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

MODES = ("all", "output")


def bench(short: str, size: int, rounds: int) -> dict:
    import onnx  # noqa: F401  (imports before the clock, as in bench_check)
    import onnxruntime  # noqa: F401

    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.core.modes import resolve_mode

    model = str(ocr_model(short))
    shape = MODELS[short][1].format(size=size)
    feeds = random_inputs(model, shape)
    work = Path(tempfile.mkdtemp(prefix="bench-dump-mode-"))
    try:
        backend = EmulatorBackend(Cache(work / "cache"))
        converted = backend.convert(model, resolve_mode("default"), input_shape=shape)
        backend.run(converted, feeds, dump=False)  # sessions built before the first timed run
        times = {m: [] for m in MODES}
        written = {}
        for _ in range(rounds):
            for mode in MODES:
                dump_dir = Path(tempfile.mkdtemp(prefix="dump-", dir=work))
                t = time.perf_counter()
                backend.run(converted, feeds, dump_dir=dump_dir, dump_mode=mode)
                times[mode].append(time.perf_counter() - t)
                written[mode] = files_and_bytes(dump_dir)
                shutil.rmtree(dump_dir, ignore_errors=True)
        backend.cache.release()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"model": short, "shape": shape, "times": times, "written": written}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--which", choices=("cls", "det", "both"), default="both")
    ap.add_argument("--det-size", type=int, default=736)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    for short in (("cls", "det") if args.which == "both" else (args.which,)):
        r = bench(short, args.det_size, args.rounds)
        med = {m: statistics.median(v) for m, v in r["times"].items()}
        print(f"\n== {short} ({r['shape']}), emulator run+dump, median of {args.rounds}")
        for m in MODES:
            files, size = r["written"][m]
            runs = " ".join(f"{t:.2f}" for t in r["times"][m])
            print(f"   dump_mode={m:6s} {med[m]:6.2f} s  [{runs}]  {size / 1e6:6.0f} MB in {files} files")
        print(f"   output / all: time {med['output'] / med['all']:.2f}, bytes "
              f"{r['written']['output'][1] / max(1, r['written']['all'][1]):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
