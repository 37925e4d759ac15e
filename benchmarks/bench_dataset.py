"""Dataset check time and memory benchmark (not a test; run by hand).

1,000 small samples (``conv_bn_relu`` at 1x3x16x16, one ``.npz`` file each) are checked with
``check_dataset`` (top1, labels by file stem) on the emulator, against the two bare loops it
stands for, measured in the same run, each phase in a fresh child process:

* bare: read each sample's ``.npz``, run it through onnxruntime fp32 (the reference) and through
  the emulated model's plain outputs (``backend.outputs``), nothing else;
* cold: ``check_dataset`` with no reference outputs in the cache (it runs and caches them);
* warm: ``check_dataset`` again (reference outputs from the cache: only the device side runs).

The phases alternate ``--repeat`` times; the ratios are each check run over the bare run just
before it (median and range), in wall time and in CPU time (less sensitive to other load on a
shared machine). Goal: check <= 1.5 x bare. Then peak RSS of a warm check over
``--samples`` and over 4x as many samples, to show memory does not grow with the sample count.

    python benchmarks/bench_dataset.py                 # 1,000 samples, 3 repeats
    python benchmarks/bench_dataset.py --samples 200 --repeat 1   # quick run
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
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rss import peak_rss_bytes, run_phase  # noqa: E402

MB = 1 << 20
SHAPE = (1, 3, 16, 16)


def generate(directory: Path, samples: int, seed: int = 0) -> None:
    """``model.onnx``, ``samples-N/NNNNN.npz`` and ``labels-N.json`` (reference top-1 of each
    sample, a tenth of them moved to another class so the reference scores about 0.9)."""
    import onnx
    import onnxruntime as ort

    from pytest_ascend_accuracy.testing.models import conv_bn_relu

    directory.mkdir(parents=True, exist_ok=True)
    model_path = directory / "model.onnx"
    if not model_path.exists():
        onnx.save(conv_bn_relu(), str(model_path))
    folder = directory / f"samples-{samples}"
    labels_path = directory / f"labels-{samples}.json"
    if labels_path.exists():
        return
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    sess = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(seed)
    labels = {}
    for i in range(samples):
        x = rng.random(SHAPE, dtype=np.float32)
        np.savez(folder / f"{i:05d}.npz", x=x)
        logits = sess.run(None, {"x": x})[0]
        label = int(logits.argmax())
        if rng.random() < 0.1:
            label = (label + 1) % logits.shape[-1]
        labels[f"{i:05d}"] = label
    labels_path.write_text(json.dumps(labels), encoding="utf-8")


def _setup(directory: Path, cache_dir: Path):
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.dataset import load_device_model

    cache = Cache(cache_dir)
    om = load_device_model(EmulatorBackend(cache), directory / "model.onnx", "default")
    return cache, om


def _phase(directory: Path, cache_dir: Path, phase: str, samples: int) -> dict:
    folder = directory / f"samples-{samples}"
    cache, om = _setup(directory, cache_dir)
    files = sorted(folder.glob("*.npz"))
    if phase == "bare":
        import onnxruntime as ort

        sess = ort.InferenceSession(str(directory / "model.onnx"),
                                    providers=["CPUExecutionProvider"])
        om.outputs(dict(np.load(files[0])))  # load the emulated model, as the check does first
        c0 = time.process_time()
        t0 = time.perf_counter()
        for f in files:
            with np.load(f) as data:
                x = {k: data[k] for k in data.files}
            sess.run(None, x)
        t1 = time.perf_counter()
        for f in files:
            with np.load(f) as data:
                x = {k: data[k] for k in data.files}
            om.outputs(x)
        t2 = time.perf_counter()
        return {"seconds": t2 - t0, "reference": t1 - t0, "device": t2 - t1,
                "cpu": time.process_time() - c0, "peak_rss": peak_rss_bytes()}
    from pytest_ascend_accuracy.dataset import run_dataset_check

    if phase == "cold":
        for ns in cache_dir.glob("dataset-reference-*"):
            shutil.rmtree(ns)
    labels = json.loads((directory / f"labels-{samples}.json").read_text(encoding="utf-8"))
    om.outputs(dict(np.load(files[0])))
    c0 = time.process_time()
    t0 = time.perf_counter()
    result, _, _ = run_dataset_check(om, folder, labels=labels, cache=cache, trace=False)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "cpu": time.process_time() - c0, "peak_rss": peak_rss_bytes(),
            "reference": result.reference,
            "device": result.device, "runs": result.reference_runs,
            "cached": result.reference_cached, "flipped": len(result.flipped)}


def _child(args: list) -> dict:
    return run_phase(os.path.abspath(__file__), args)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", help="work directory (default: a temporary one, removed after)")
    ap.add_argument("--phase", help=argparse.SUPPRESS)
    ap.add_argument("--cache", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.phase:
        print(json.dumps(_phase(Path(args.dir), Path(args.cache), args.phase, args.samples)))
        return 0
    work = Path(args.dir or tempfile.mkdtemp(prefix="bench-dataset-"))
    try:
        cache = work / "cache"
        for n in (args.samples, 4 * args.samples):
            generate(work, n)
        common = ["--dir", str(work), "--cache", str(cache)]
        _child(common + ["--phase", "bare", "--samples", str(args.samples)])  # converts once
        bare, cold, warm = [], [], []
        for _ in range(args.repeat):
            bare.append(_child(common + ["--phase", "bare", "--samples", str(args.samples)]))
            cold.append(_child(common + ["--phase", "cold", "--samples", str(args.samples)]))
            bare.append(_child(common + ["--phase", "bare", "--samples", str(args.samples)]))
            warm.append(_child(common + ["--phase", "warm", "--samples", str(args.samples)]))
        n = args.samples
        b = bare[0]
        shape = "x".join(map(str, SHAPE))
        print(f"{n} samples ({shape} float32, conv_bn_relu, emulator default mode)")
        print(f"bare loops: reference {b['reference']:.3f} s + emulated {b['device']:.3f} s "
              f"(first pair; {1e6 * b['seconds'] / n:.0f} us/sample)")
        c0 = cold[0]
        print(f"check figures: top1 {c0['device']:.4f} device vs {c0['reference']:.4f} reference, "
              f"{c0['flipped']} flipped")
        for name, runs, before in (("cold", cold, bare[0::2]), ("warm", warm, bare[1::2])):
            ratios = [r["seconds"] / p["seconds"] for r, p in zip(runs, before)]
            cpu = [r["cpu"] / p["cpu"] for r, p in zip(runs, before)]
            med = statistics.median(ratios)
            print(f"check {name} ({runs[0]['runs']} reference runs, {runs[0]['cached']} cached): "
                  f"{statistics.median(r['seconds'] for r in runs):.3f} s; ratio to bare loops "
                  f"median {med:.2f} (range {min(ratios):.2f}-{max(ratios):.2f}; goal <= 1.5: "
                  f"{'met' if med <= 1.5 else 'NOT met'}); CPU-time ratio median "
                  f"{statistics.median(cpu):.2f}")
        small = _child(common + ["--phase", "warm", "--samples", str(n)])
        _child(common + ["--phase", "cold", "--samples", str(4 * n)])
        big = _child(common + ["--phase", "warm", "--samples", str(4 * n)])
        print(f"peak RSS of a warm check: {small['peak_rss'] / MB:.0f} MB at {n} samples, "
              f"{big['peak_rss'] / MB:.0f} MB at {4 * n} samples "
              f"(x{big['peak_rss'] / small['peak_rss']:.2f} for x4 samples)")
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
