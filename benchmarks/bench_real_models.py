"""Golden + emulated run + compare on real ONNX models shipped inside PyPI wheels.

    python benchmarks/bench_real_models.py                       # rapidocr det + cls
    python benchmarks/bench_real_models.py --det-size 320 --modes default,fusion_off
    python benchmarks/bench_real_models.py --model path/to/m.onnx --input-shape x:1,3,64,64
    python benchmarks/bench_real_models.py --wheel path/to/rapidocr_onnxruntime-*.whl

Without ``--model`` the script takes the PaddleOCR detector and classifier out of the
``rapidocr-onnxruntime`` wheel: a path given with ``--wheel``, else one found in ``--wheel-dir``,
else ``pip download --no-deps rapidocr-onnxruntime==1.4.4`` into that directory (tests never
download; this benchmark is not part of the test suite). Each model runs in its own process so
the reported peak RSS is that model's. Printed per model and mode: op counts (golden nodes,
dumped emulator ops, fused groups, folded nodes), seconds per phase (golden, convert, run,
compare), dump sizes on disk, peak RSS, the verdict at cosine 0.95 and the worst operators.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

WHEEL = "rapidocr-onnxruntime==1.4.4"
MODELS = {  # name in the wheel -> (short name, input shape template)
    "ch_PP-OCRv4_det_infer.onnx": ("det", "x:1,3,{size},{size}"),
    "ch_ppocr_mobile_v2.0_cls_infer.onnx": ("cls", "x:1,3,48,192"),
    "ch_PP-OCRv4_rec_infer.onnx": ("rec", "x:1,3,48,320"),
}


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _dir_size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file()) / 1e6


def bench_one(model: str, input_shape: str, modes, workdir: Path, top: int) -> dict:
    """Run golden, then convert + run + compare per mode; returns the figures as a dict."""
    import onnx

    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.core.modes import resolve_mode
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    proto = onnx.load(model)
    result = {"model": Path(model).name, "input_shape": input_shape,
              "nodes": len(proto.graph.node),
              "unnamed": sum(1 for n in proto.graph.node if not n.name),
              "duplicates": len(proto.graph.node) - len({n.name for n in proto.graph.node}),
              "rss_start_mb": round(_peak_rss_mb(), 1), "modes": []}
    del proto
    cache = Cache(workdir / "cache")
    inputs = make_inputs(model, input_shape=input_shape)
    t0 = time.perf_counter()
    golden = golden_dump(model, inputs, cache=cache, input_shape=input_shape)
    result["golden_s"] = round(time.perf_counter() - t0, 2)
    result["golden_ops"] = len(golden)
    result["golden_mb"] = round(_dir_size_mb(golden.root), 1)
    result["rss_after_golden_mb"] = round(_peak_rss_mb(), 1)
    from pytest_ascend_accuracy.graph.onnx_graph import ort_session
    from pytest_ascend_accuracy.graph.prepare import prepare_model

    plain = ort_session(prepare_model(model, input_shape=input_shape).model.SerializeToString())
    plain.run(None, inputs)
    t0 = time.perf_counter()
    plain.run(None, inputs)
    result["fp32_run_s"] = round(time.perf_counter() - t0, 3)  # no dumps, optimisations off
    del plain
    backend = EmulatorBackend(cache)
    for name in modes:
        mode = resolve_mode(name)
        row = {"mode": mode.name}
        t0 = time.perf_counter()
        converted = backend.convert(model, mode, input_shape=input_shape)
        row["convert_s"] = round(time.perf_counter() - t0, 2)
        info = converted.info["emulator"]
        row["fused_groups"] = len(info["fused"])
        row["folded"] = len(info["folded"])
        backend.run(converted, inputs, dump=False)  # warm-up (session creation)
        t0 = time.perf_counter()
        backend.run(converted, inputs, dump=False)
        row["run_nodump_s"] = round(time.perf_counter() - t0, 3)
        dump_dir = workdir / "dumps" / mode.name
        t0 = time.perf_counter()
        dump = backend.run(converted, inputs, dump_dir=dump_dir)
        row["run_s"] = round(time.perf_counter() - t0, 2)
        row["dumped_ops"] = len(dump)
        row["dump_mb"] = round(_dir_size_mb(dump_dir), 1)
        t0 = time.perf_counter()
        compared = compare_dumps(dump, golden)
        row["compare_s"] = round(time.perf_counter() - t0, 2)
        verdict = compared.judge(threshold=0.95)
        first = verdict.first_failure
        row["passed"] = bool(verdict.passed)
        row["first_failure"] = None if first is None else [first.op_name, first.op_type,
                                                           _num(first.metrics.cosine if first.metrics else None)]
        rows = [r for r in compared.rows if r.metrics is not None]
        rows.sort(key=lambda r: (r.metrics.cosine if r.metrics.cosine == r.metrics.cosine else -2.0))
        row["worst"] = [[r.op_name, r.op_type, len(r.original_names), _num(r.metrics.cosine),
                         _num(r.metrics.max_abs)] for r in rows[:top]]
        row["coverage"] = compared.coverage.describe(limit=3)
        row["rss_mb"] = round(_peak_rss_mb(), 1)
        result["modes"].append(row)
        shutil.rmtree(dump_dir, ignore_errors=True)
    result["peak_rss_mb"] = round(_peak_rss_mb(), 1)
    return result


def _num(v):
    return None if v is None else float(f"{v:.6g}")


def find_models(args) -> list:
    if args.model:
        return [(Path(m), args.input_shape) for m in args.model]
    wheel = Path(args.wheel) if args.wheel else None
    wheel_dir = Path(args.wheel_dir)
    if wheel is None:
        found = sorted(wheel_dir.glob("rapidocr_onnxruntime-*.whl"))
        if not found:
            wheel_dir.mkdir(parents=True, exist_ok=True)
            print(f"downloading {WHEEL} into {wheel_dir} ...", flush=True)
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", WHEEL,
                            "-d", str(wheel_dir)], check=True)
            found = sorted(wheel_dir.glob("rapidocr_onnxruntime-*.whl"))
        wheel = found[-1]
    out = wheel_dir / "models"
    out.mkdir(parents=True, exist_ok=True)
    picked = []
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            base = Path(info.filename).name
            if base in MODELS and MODELS[base][0] in args.which:
                target = out / base
                if not target.exists():
                    target.write_bytes(z.read(info))
                picked.append((target, MODELS[base][1].format(size=args.det_size)))
    order = {short: k for k, short in enumerate(args.which)}
    picked.sort(key=lambda p: order[MODELS[p[0].name][0]])
    return picked


def print_result(r: dict) -> None:
    print(f"\n== {r['model']}  input {r['input_shape']}")
    print(f"   nodes {r['nodes']} ({r['unnamed']} unnamed, {r['duplicates']} duplicate names); "
          f"golden ops dumped {r['golden_ops']} in {r['golden_s']} s, {r['golden_mb']} MB on disk")
    for m in r["modes"]:
        verdict = "PASSED" if m["passed"] else f"FAILED first at {m['first_failure'][0]} " \
                                                  f"({m['first_failure'][1]}, cosine {m['first_failure'][2]})"
        print(f"   [{m['mode']}] convert {m['convert_s']} s, run without dump {m['run_nodump_s']} s "
              f"(plain fp32 onnxruntime {r['fp32_run_s']} s), run+dump {m['run_s']} s "
              f"({m['dumped_ops']} ops, {m['fused_groups']} fused groups, {m['folded']} folded, "
              f"{m['dump_mb']} MB), compare {m['compare_s']} s -> {verdict}")
        print(f"      coverage: {m['coverage']}")
        for name, typ, members, cos, mabs in m["worst"]:
            print(f"      worst: {name} ({typ}, {members} orig ops) cosine {cos} max|err| {mabs}")
    print(f"   peak RSS {r['peak_rss_mb']} MB (after golden {r['rss_after_golden_mb']} MB)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", help="an ONNX file (repeatable); default: rapidocr")
    ap.add_argument("--input-shape", help="ATC-style input shape for --model, e.g. x:1,3,64,64")
    ap.add_argument("--wheel", help="a rapidocr-onnxruntime wheel file")
    ap.add_argument("--wheel-dir", default=os.path.join(tempfile.gettempdir(), "ascend-accuracy-wheels"))
    ap.add_argument("--which", default="det,cls", help="rapidocr models: det,cls,rec")
    ap.add_argument("--det-size", type=int, default=160, help="detector input height=width")
    ap.add_argument("--modes", default="default,fusion_off,high_precision")
    ap.add_argument("--top", type=int, default=5, help="worst operators to show")
    ap.add_argument("--workdir", help="keep caches here (default: a temp dir, removed)")
    ap.add_argument("--json", help="also write all figures to this JSON file")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # child process: one model
    args = ap.parse_args(argv)
    args.which = [w for w in args.which.split(",") if w]
    modes = [m for m in args.modes.split(",") if m]
    if args.one:
        work = Path(args.workdir)
        print(json.dumps(bench_one(args.one, args.input_shape, modes, work, args.top)))
        return 0
    results = []
    keep = args.workdir is not None
    root = Path(args.workdir) if keep else Path(tempfile.mkdtemp(prefix="bench-real-models-"))
    try:
        for path, shape in find_models(args):
            work = root / path.stem
            cmd = [sys.executable, __file__, "--one", str(path), "--input-shape", shape,
                   "--modes", ",".join(modes), "--workdir", str(work), "--top", str(args.top)]
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"\n== {path.name}: FAILED\n{proc.stderr[-3000:]}")
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            r["total_s"] = round(time.perf_counter() - t0, 1)
            results.append(r)
            print_result(r)
            print(f"   total {r['total_s']} s (own process)")
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())
