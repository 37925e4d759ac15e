"""Compare throughput and memory benchmark (not a test; run by hand).

Generates a dump pair -- an Ascend binary dump of float16 outputs (the real file format, one
file per op) and an ONNX-golden ``.npy`` directory of float32 outputs -- then measures, each in
a fresh child process so the peak RSS belongs to that phase alone:

* baseline: a plain numpy pass over the same bytes (``np.fromfile`` at each tensor's offset /
  ``np.load``, then ``.sum()``): the practical limit of reading the data once;
* compare: ``load_dump`` of both directories + ``compare_dumps`` (all metrics, KL included).

It prints both throughputs (bytes of both dumps per second), their ratio -- best run against
best run, and the median and range of the ratios of each compare run to the baseline run just
before it (the phases alternate, so a change in machine load hits both) -- and each phase's
peak RSS. Goals: ratio >= 0.5 (judged on the median); compare peak RSS < 300 MB + 3 x the
largest tensor.

It then times ``compute_metrics`` on one pair masked as an attention mask is (the golden's
-3.4e38, ``compare/mask_stand_in.py``, against the device's -inf at every 7th position, at one
position, or its saturated -65504 at every 7th) against the same pair unmasked, in one child
process, and prints each ratio (``--mask-elements 0`` skips this).

    python benchmarks/bench_compare.py                      # 1,000 tensors, 1 GB
    python benchmarks/bench_compare.py --size-gb 0.05 --tensors 100   # quick run
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rss import peak_rss_bytes, run_phase  # noqa: E402

MB = 1 << 20


def tensor_sizes(total_bytes: float, tensors: int):
    """Element counts, varying 1x..7x, scaled so fp16 + fp32 copies total ``total_bytes``."""
    weights = np.array([1 + (i * 5) % 7 for i in range(tensors)], dtype=np.float64)
    counts = np.maximum(1, np.round(weights / weights.sum() * total_bytes / 6)).astype(np.int64)
    return [int(c) for c in counts]


def generate(directory: str, size_gb: float, tensors: int, seed: int = 0) -> dict:
    from pytest_ascend_accuracy.dump.layout import AscendDumpWriter
    from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter

    rng = np.random.default_rng(seed)
    actual_dir = os.path.join(directory, "npu")
    golden_dir = os.path.join(directory, "golden")
    for d in (actual_dir, golden_dir):  # a reused --dir must not accumulate repeated dumps
        shutil.rmtree(d, ignore_errors=True)
    counts = tensor_sizes(size_gb * 1e9, tensors)
    with AscendDumpWriter(actual_dir) as aw, NpyDumpWriter(golden_dir) as gw:
        for i, n in enumerate(counts):
            golden = rng.standard_normal(n, dtype=np.float32)
            golden[::9] = 0  # some ReLU-like zeros
            actual = (golden * np.float32(1.001) + np.float32(1e-3)).astype(np.float16)
            name = f"block{i // 10}/op{i}/Conv"
            gw.write_op(name, [], [golden])
            aw.write_op("Conv2D", name, [], [actual])
    return {"actual": actual_dir, "golden": golden_dir, "counts": counts}


def _phase_baseline(actual_dir: str, golden_dir: str) -> dict:
    from pytest_ascend_accuracy.dump.ascend_bin import parse_dump_file

    start, cpu = time.perf_counter(), time.process_time()
    files = []  # a plain reader needs each tensor's offset too: parse the headers
    for name in sorted(os.listdir(actual_dir)):
        path = os.path.join(actual_dir, name)
        if name.endswith(".csv"):
            continue
        s = parse_dump_file(path).outputs[0]
        files.append((path, s.offset, s.count))
    goldens = [os.path.join(golden_dir, n) for n in sorted(os.listdir(golden_dir))
               if n.endswith(".npy")]
    total = 0.0
    nbytes = 0
    for path, offset, count in files:
        arr = np.fromfile(path, dtype=np.float16, count=count, offset=offset)
        total += float(arr.sum(dtype=np.float64))  # the fastest numpy sum of float16
        nbytes += arr.nbytes
    for path in goldens:
        arr = np.load(path, allow_pickle=False)
        total += float(arr.sum())
        nbytes += arr.nbytes
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "cpu_seconds": time.process_time() - cpu, "bytes": nbytes,
            "peak_rss": peak_rss_bytes(), "check": total}


def _phase_compare(actual_dir: str, golden_dir: str, kl: bool, chunk_size: int,
                   workers: int) -> dict:
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.dump.loader import load_dump

    wall0, cpu0 = time.perf_counter(), time.process_time()
    actual = load_dump(actual_dir)
    golden = load_dump(golden_dir)
    wall1, cpu1 = time.perf_counter(), time.process_time()
    result = compare_dumps(actual, golden, kl=kl, chunk_size=chunk_size, workers=workers)
    wall2, cpu2 = time.perf_counter(), time.process_time()
    return {"seconds": wall2 - wall0, "cpu_seconds": cpu2 - cpu0,
            "load_seconds": wall1 - wall0, "load_cpu_seconds": cpu1 - cpu0,
            "bytes": actual.nbytes + golden.nbytes, "peak_rss": peak_rss_bytes(),
            "rows": len(result.rows), "passed": result.judge(0.99).passed,
            "min_cosine": min(r.metrics.cosine for r in result.rows if r.metrics)}


def mask_pairs(n: int, seed: int = 1) -> dict:
    """A float16 device close to a float32 golden, unmasked and masked three ways."""
    rng = np.random.default_rng(seed)
    golden = rng.standard_normal(n, dtype=np.float32)
    device = (golden + np.float32(1e-3) * rng.standard_normal(n, dtype=np.float32)).astype(
        np.float16)
    stand_in = np.finfo(np.float32).min
    pairs = {"unmasked": (device, golden)}
    for name, at, value in (("every 7th position -inf", slice(None, None, 7), -np.inf),
                            ("one position -inf", slice(5, 6), -np.inf),
                            ("every 7th position saturated -65504", slice(None, None, 7),
                             -65504.0)):
        d, g = device.copy(), golden.copy()
        d[at], g[at] = value, stand_in
        pairs[name] = (d, g)
    return pairs


def _phase_mask(n: int, repeat: int) -> dict:
    from pytest_ascend_accuracy.compare.metrics import compute_metrics

    pairs = mask_pairs(n)
    best = {name: float("inf") for name in pairs}
    for _ in range(repeat):  # alternate, so a change in machine load hits every case
        for name, (d, g) in pairs.items():
            start = time.perf_counter()
            compute_metrics(d, g)
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def _print_mask(n: int, best: dict) -> None:
    base = best["unmasked"]
    print(f"mask stand-in, compute_metrics of one {n:,}-element pair (device float16, golden "
          f"float32, KL included), best of the runs: unmasked {base:.3f} s")
    for name, seconds in best.items():
        if name != "unmasked":
            print(f"  golden -3.4e38, device {name}: {seconds:.3f} s, {seconds / base:.1f}x "
                  "the unmasked pair")


def _run_child(args: list) -> dict:
    return run_phase(os.path.abspath(__file__), args)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size-gb", type=float, default=1.0, help="total size of both dumps (GB)")
    p.add_argument("--tensors", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=5,
                   help="timed runs per phase, alternating (best and median are reported)")
    p.add_argument("--chunk-size", type=int, default=1 << 16)
    p.add_argument("--no-kl", action="store_true", help="skip KL in the compare phase")
    p.add_argument("--workers", type=int, default=1,
                   help="compare_dumps(workers=N) threads (default 1, like the baseline)")
    p.add_argument("--dir", help="work directory (default: a temporary one, removed after)")
    p.add_argument("--mask-elements", type=int, default=10_000_000,
                   help="elements of the masked pair timed against itself unmasked (0: skip)")
    p.add_argument("--_phase", help=argparse.SUPPRESS)
    p.add_argument("--_actual", help=argparse.SUPPRESS)
    p.add_argument("--_golden", help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args._phase == "baseline":
        print(json.dumps(_phase_baseline(args._actual, args._golden)))
        return 0
    if args._phase == "mask":
        print(json.dumps(_phase_mask(args.mask_elements, args.repeat)))
        return 0
    if args._phase == "compare":
        print(json.dumps(_phase_compare(args._actual, args._golden, not args.no_kl,
                                        args.chunk_size, args.workers)))
        return 0

    work = args.dir or tempfile.mkdtemp(prefix="bench_compare_")
    try:
        t0 = time.perf_counter()
        info = generate(work, args.size_gb, args.tensors)
        gen = time.perf_counter() - t0
        counts = info["counts"]
        largest = max(counts) * 4
        a_bytes, g_bytes = sum(counts) * 2, sum(counts) * 4
        print(f"dump pair: {len(counts)} tensors, {(a_bytes + g_bytes) / 1e9:.3f} GB "
              f"(actual: float16 Ascend binary dump, {a_bytes / 1e9:.3f} GB; golden: float32 npy, "
              f"{g_bytes / 1e9:.3f} GB); largest tensor {largest / MB:.2f} MB as float32; "
              f"generated in {gen:.1f} s")
        paths = ["--_actual", info["actual"], "--_golden", info["golden"]]
        _run_child(["--_phase", "baseline"] + paths)  # warm the page cache for both phases
        extra = (["--chunk-size", str(args.chunk_size), "--workers", str(args.workers)]
                 + (["--no-kl"] if args.no_kl else []))
        bases, comps = [], []
        for _ in range(args.repeat):  # alternate, so a change in machine load hits both
            bases.append(_run_child(["--_phase", "baseline"] + paths))
            comps.append(_run_child(["--_phase", "compare"] + paths + extra))
        base = min(bases, key=lambda r: r["seconds"])
        comp = min(comps, key=lambda r: r["seconds"])
        gb = comp["bytes"] / 1e9
        base_gbs = base["bytes"] / base["seconds"] / 1e9
        comp_gbs = gb / comp["seconds"]
        only_gbs = gb / (comp["seconds"] - comp["load_seconds"])
        ratio = comp_gbs / base_gbs
        # each compare run against the baseline run just before it: the machine's load moves
        # both, so the median of these paired ratios is the steadier figure on a shared machine
        paired = sorted((c["bytes"] / c["seconds"]) / (b["bytes"] / b["seconds"])
                        for b, c in zip(bases, comps))
        median = statistics.median(paired)
        cpu_ratio = (base["cpu_seconds"] / base["bytes"]) / (comp["cpu_seconds"] / comp["bytes"])
        rss_goal = 300 * MB + 3 * largest
        print(f"baseline (parse headers, np.fromfile/np.load, sum): {base['seconds']:.3f} s, "
              f"{base_gbs:.2f} GB/s, peak RSS {base['peak_rss'] / MB:.0f} MB")
        print(f"compare (load_dump + compare_dumps, {'no KL' if args.no_kl else 'all metrics'}, "
              f"{args.workers} thread{'s' if args.workers > 1 else ''}): {comp['seconds']:.3f} s, "
              f"{comp_gbs:.2f} GB/s; load_dump {comp['load_seconds']:.3f} s, compare_dumps alone "
              f"{only_gbs:.2f} GB/s; {comp['rows']} rows, min cosine {comp['min_cosine']:.6f}")
        print(f"ratio compare/baseline: {ratio:.2f} best vs best; paired runs: median "
              f"{median:.2f}, range {paired[0]:.2f}-{paired[-1]:.2f} (goal >= 0.5: "
              f"{'met' if median >= 0.5 else 'NOT met'} by the median, "
              f"{'met' if paired[0] >= 0.5 else 'NOT met'} by the worst run); "
              f"by CPU time {cpu_ratio:.2f} (baseline {base['cpu_seconds']:.3f} s, compare "
              f"{comp['cpu_seconds']:.3f} s of which load_dump {comp['load_cpu_seconds']:.3f} s)")
        peak = max(c["peak_rss"] for c in comps)
        print(f"compare peak RSS: {peak / MB:.0f} MB, the highest of the runs (goal < 300 MB + 3 x "
              f"{largest / MB:.2f} MB = {rss_goal / MB:.0f} MB: "
              f"{'met' if peak < rss_goal else 'NOT met'})")
        print(f"best and median of {args.repeat} alternating runs per phase, each in a fresh process; "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
        if args.mask_elements:
            _print_mask(args.mask_elements, _run_child(
                ["--_phase", "mask", "--mask-elements", str(args.mask_elements),
                 "--repeat", str(args.repeat)]))
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
