"""Scale benchmark: comparing dumps of a 5,000-operator model at 1, 2 and 4 GiB of tensors.

Not a test; run by hand. For each size it generates, in a temporary directory on disk, a dump
pair of a model with ``--ops`` operators -- the NPU side as Ascend binary dump files (float16,
one file per op, written by ``AscendDumpWriter``) and the golden side as an ONNX-golden ``.npy``
directory (float32, ``NpyDumpWriter``) -- then measures, in a fresh child process per size so
the peak RSS belongs to that size alone:

* ``load``: ``load_dump`` of both sides (5,000 headers each; no tensor bytes read);
* ``compare``: ``compare_dumps`` (every metric, KL included, one thread);
* ``baseline``: writing the 5,000-line accuracy baseline and checking the result against it.

"Size" is the tensor bytes of both dumps together (fp16 + fp32 = 6 bytes per element). Four
operators have a fixed 4M elements at every size (the largest pair, 24 MiB); the other 4,996
are log-uniform and scale with the size. Memory should therefore stay flat (it depends on the
largest tensor pair, not on the total) while time grows linearly; the last lines print both
growth ratios against the smallest size.

The page cache is warm by default (the data was just written); ``--cold`` drops each file's
cached pages first (``fsync`` + ``posix_fadvise(DONTNEED)``, this benchmark's files only), so
reads come from the disk.

    python benchmarks/bench_scale.py                       # 1, 2 and 4 GiB
    python benchmarks/bench_scale.py --sizes 0.05,0.1 --ops 500     # quick look
    python benchmarks/bench_scale.py --sizes 1,2 --cold
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rss import peak_rss_bytes  # noqa: E402

GIB = 1 << 30
MIB = 1 << 20
BIG_OPS = 4
BIG_ELEMENTS = 4 << 20
BYTES_PER_ELEMENT = 6  # float16 actual + float32 golden
OP_TYPES = ("Conv2D", "MatMul", "Add", "Relu", "Mul", "Softmax", "LayerNorm", "Transpose")


def element_counts(size_bytes: float, ops: int, seed: int = 0):
    """Per-op element counts: ``BIG_OPS`` fixed-size ops spread through the graph, the rest
    log-uniform (1x..200x) scaled so that all ops together hold ``size_bytes``."""
    big = min(BIG_OPS, ops)
    rest_bytes = size_bytes - big * BIG_ELEMENTS * BYTES_PER_ELEMENT
    if rest_bytes <= 0:
        raise SystemExit(f"size {size_bytes / GIB:.2f} GiB is smaller than the {big} fixed big ops")
    rng = np.random.default_rng(seed)
    weights = np.exp(rng.uniform(0.0, np.log(200.0), ops - big))
    counts = np.maximum(1, np.round(weights / weights.sum() * rest_bytes / BYTES_PER_ELEMENT))
    out = [int(c) for c in counts]
    for k in range(big):  # positions 10%, 35%, 60%, 85% of the graph
        out.insert(int(ops * (0.1 + 0.25 * k)), BIG_ELEMENTS)
    return out


def generate(directory: str, size_bytes: float, ops: int) -> dict:
    """Write the dump pair; returns where it is and what it holds."""
    from pytest_ascend_accuracy.dump.layout import AscendDumpWriter, run_dir
    from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter

    counts = element_counts(size_bytes, ops)
    leaf = run_dir(os.path.join(directory, "npu"), model_name="scale")
    golden = os.path.join(directory, "golden")
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    with AscendDumpWriter(leaf) as npu, NpyDumpWriter(golden) as gold:
        for i, n in enumerate(counts):
            g = rng.standard_normal(n, dtype=np.float32)
            name = f"block{i // 8}/op_{i:04d}"
            gold.write_op(name, [], [g], timestamp_us=1_000_000_000_000_000 + i)
            npu.write_op(OP_TYPES[i % len(OP_TYPES)], name, [], [g.astype(np.float16)],
                         task_id=i, timestamp_us=1_700_000_000_000_000 + i)
    return {"npu": str(leaf), "golden": golden, "ops": len(counts),
            "elements": int(sum(counts)), "bytes": int(sum(counts)) * BYTES_PER_ELEMENT,
            "largest_pair": max(counts) * BYTES_PER_ELEMENT,
            "generate_s": time.perf_counter() - start}


def drop_page_cache(*roots: str) -> None:
    """Flush and drop the cached pages of every file under ``roots`` (these files only)."""
    for root in roots:
        for dirpath, _, files in os.walk(root):
            for name in files:
                fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
                try:
                    os.fsync(fd)
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                finally:
                    os.close(fd)


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def measure(info: dict) -> dict:
    """Child process: load both sides, compare, write and check a baseline."""
    from pytest_ascend_accuracy.baseline import check_baseline
    from pytest_ascend_accuracy.baseline.file import InputSpec
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.dump.loader import load_dump

    rss_start = peak_rss_bytes()
    c0, t0 = _cpu(), time.perf_counter()
    actual, golden = load_dump(info["npu"]), load_dump(info["golden"])
    t1 = time.perf_counter()
    result = compare_dumps(actual, golden)
    c2, t2 = _cpu(), time.perf_counter()
    path = os.path.join(tempfile.mkdtemp(dir=os.path.dirname(info["golden"])), "scale.yaml")
    header = {"backend": "emulator", "toolkit_version": "bench", "soc_version": "bench",
              "atc_args": []}
    spec = InputSpec(seed=0, tensors=())
    written = check_baseline(result, path, header=header, inputs=spec)
    checked = check_baseline(result, path, header=header, inputs=spec)
    t3 = time.perf_counter()
    rows = [r for r in result.rows if r.metrics is not None]
    return {"load_s": t1 - t0, "compare_s": t2 - t1, "baseline_s": t3 - t2, "cpu_s": c2 - c0,
            "rows": len(rows), "min_cosine": min(r.metrics.cosine for r in rows),
            "baseline_ok": (written.status, checked.status) == ("missing", "passed"),
            "baseline_bytes": os.path.getsize(path),
            "peak_rss": peak_rss_bytes(), "rss_after_import": rss_start}


def run_child(info: dict, repeat: int = 1, cold: bool = False) -> dict:
    """Measure ``repeat`` times, each in a fresh process; times are the fastest run's (the
    machine is shared, so the minimum is the least disturbed), peak RSS the largest."""
    runs = []
    for _ in range(repeat):
        if cold:
            drop_page_cache(info["npu"], info["golden"])
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--measure",
                              json.dumps(info)], capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise SystemExit(f"measuring child failed:\n{out.stdout}\n{out.stderr}")
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    best = dict(runs[0])
    for key in ("load_s", "compare_s", "baseline_s", "cpu_s"):
        best[key] = min(r[key] for r in runs)
    best["peak_rss"] = max(r["peak_rss"] for r in runs)
    best["baseline_ok"] = all(r["baseline_ok"] for r in runs)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,2,4", help="GiB of tensors (both dumps), comma-separated")
    ap.add_argument("--ops", type=int, default=5000)
    ap.add_argument("--workdir", default=None, help="where to generate (default: system temp)")
    ap.add_argument("--cold", action="store_true", help="drop these files' page cache first")
    ap.add_argument("--keep", action="store_true", help="keep the generated dumps")
    ap.add_argument("--repeat", type=int, default=3, help="measurements per size (fastest kept)")
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(json.loads(args.measure))))
        return 0

    sizes = [float(s) for s in args.sizes.split(",")]
    base = args.workdir or tempfile.gettempdir()
    os.makedirs(base, exist_ok=True)
    import pytest_ascend_accuracy

    print(f"bench_scale: {args.ops:,} operators, fp16 Ascend binary dump vs fp32 npy golden, "
          f"page cache {'cold' if args.cold else 'warm'}; python {sys.version.split()[0]}, "
          f"numpy {np.__version__}, pytest-ascend-accuracy {pytest_ascend_accuracy.__version__}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"{'size':>8} {'files':>6} {'largest':>8} {'gen s':>6} {'load s':>7} {'compare s':>9} "
          f"{'CPU s':>6} {'GiB/s':>6} {'baseline s':>10} {'peak RSS':>9} {'min cos':>9}")
    results = []
    for size in sizes:
        need = size * GIB * 1.1 + 512 * MIB
        free = shutil.disk_usage(base).free
        if free < need:
            print(f"{size:>6.2f}GiB skipped: {free / GIB:.1f} GiB free in {base}, "
                  f"{need / GIB:.1f} GiB needed")
            continue
        work = tempfile.mkdtemp(prefix=f"bench-scale-{size:g}g-", dir=base)
        try:
            info = generate(work, size * GIB, args.ops)
            m = run_child(info, args.repeat, args.cold)
        finally:
            if not args.keep:
                shutil.rmtree(work, ignore_errors=True)
        results.append((size, info, m))
        print(f"{size:>5.2f}GiB {info['ops'] * 2:>6} {info['largest_pair'] / MIB:>6.0f}MB "
              f"{info['generate_s']:>6.1f} {m['load_s']:>7.2f} {m['compare_s']:>9.2f} "
              f"{m['cpu_s']:>6.2f} "
              f"{info['bytes'] / GIB / m['compare_s']:>6.2f} {m['baseline_s']:>10.2f} "
              f"{m['peak_rss'] / MIB:>7.0f}MB {m['min_cosine']:>9.6f}"
              + ("" if m["baseline_ok"] else "  (baseline check FAILED)"))
        sys.stdout.flush()
    if len(results) > 1:
        s0, i0, m0 = results[0]
        for s, i, m in results[1:]:
            data = i["bytes"] / i0["bytes"]
            print(f"growth {s0:g} -> {s:g} GiB (data x{data:.2f}): compare time "
                  f"x{m['compare_s'] / m0['compare_s']:.2f} (proportional: x{data:.2f}), load "
                  f"time x{m['load_s'] / m0['load_s']:.2f} (same file count: x1.00), peak RSS "
                  f"x{m['peak_rss'] / m0['peak_rss']:.2f} (flat: x1.00)")
        x = np.array([i["bytes"] / GIB for _, i, _ in results])
        y = np.array([m["compare_s"] for _, _, m in results])
        slope, intercept = np.polyfit(x, y, 1)
        worst = float(np.max(np.abs(intercept + slope * x - y) / y))
        print(f"compare time fit: {intercept:.2f} s + {slope:.2f} s/GiB (fixed part: per-operator "
              f"work on {results[0][1]['ops']:,} pairs); largest deviation from the line "
              f"{worst:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
