"""Peak memory of a model check on a model whose weights live in ONNX external data (issue 17).

    python benchmarks/bench_big_model.py              # 2.25 GB of weights (over protobuf's 2 GB)
    python benchmarks/bench_big_model.py --gb 0.5     # the same model, scaled down: same goal
    python benchmarks/bench_big_model.py --gb 1.5 --inline   # weights inside the .onnx (< 2 GB)

A synthetic model built with ``onnx.helper``: a chain of ``MatMul`` (a ``--width`` x ``--width``
float32 weight each) and ``Add`` (a bias), small activations ([1, width]); its weights are
written straight to ``big.onnx.data`` (never all in memory) and referenced as external data.
First, in this process, ``digest``: ``model_digest`` (the model part of every cache key) against
sha256 over the same files, as a time ratio. Every other phase runs in a fresh process
(``rss.run_phase``), so its peak RSS (VmHWM) is its own:

* ``plain``    -- a plain onnxruntime inference from the file (defaults): the memory baseline;
* ``golden``   -- ``golden_dump`` on an empty cache (prepare, run in segments, write the dump);
* ``convert``  -- ``EmulatorBackend.convert`` on an empty cache (the emulator's "ATC");
* ``run+dump`` -- the emulated run of the converted model, writing the device dump;
* ``compare``  -- both dumps read back and compared (golden from the cache);
* ``check``    -- a whole check in one process on a fresh cache, as the plugin runs it: seeded
                  inputs (``make_inputs``), golden, conversion, emulated run + dump, compare.

Each phase's peak RSS is printed against the issue's budget, max(300 MB + 3 x the largest
tensor, 1.25 x plain), with "met" or "NOT MET"; the largest tensor is the biggest weight.
Needs about 4 x the weights in free disk (model, golden, converted model, dump).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PHASES = ["digest", "plain", "golden", "convert", "run+dump", "compare", "check"]


def build_model(folder: Path, gb: float, width: int, inline: bool = False) -> dict:
    """Write ``folder/big.onnx`` + ``big.onnx.data``; returns its facts (weights streamed).
    ``inline``: then move the weights into ``big.onnx`` (protobuf: under 2 GB)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    weight = width * width * 4
    n = max(1, int(round(gb * (1 << 30) / weight)))
    data = folder / "big.onnx.data"
    nodes, inits = [], []
    offset = 0
    prev = "x"

    def external(name, dims, nbytes):
        t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", data.name), ("offset", str(offset)), ("length", str(nbytes))):
            t.external_data.add(key=k, value=v)
        return t

    with open(data, "wb") as fh:
        for k in range(n):
            rng = np.random.default_rng([7, k])
            w = (rng.standard_normal((width, width), dtype=np.float32) / np.float32(np.sqrt(width)))
            b = rng.standard_normal(width, dtype=np.float32) * np.float32(0.1)
            for name, arr in ((f"w{k}", w), (f"b{k}", b)):
                fh.write(arr.tobytes())
                inits.append(external(name, list(arr.shape), arr.nbytes))
                offset += arr.nbytes
            del w
            nodes.append(helper.make_node("MatMul", [prev, f"w{k}"], [f"m{k}"], name=f"matmul{k}"))
            nodes.append(helper.make_node("Add", [f"m{k}", f"b{k}"], [f"a{k}"], name=f"add{k}"))
            prev = f"a{k}"
    graph = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, width])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save_model(model, str(folder / "big.onnx"))  # weights already external: small file
    if inline:
        full = onnx.load(str(folder / "big.onnx"))
        data.unlink()
        onnx.save_model(full, str(folder / "big.onnx"))
        del full
    return {"path": str(folder / "big.onnx"), "weights": offset, "largest_tensor": weight,
            "nodes": len(nodes), "width": width}


def _feeds(width: int):
    import numpy as np

    return {"x": np.random.default_rng([0, 0]).random((1, width), dtype=np.float64).astype(np.float32)}


# -- children: one phase each, in its own process -------------------------------------------------
def child(phase: str, model: str, width: int, work: Path) -> dict:
    import onnx  # noqa: F401  (imports before the clock, as a pytest session pays them once)
    import onnxruntime as ort

    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.core.modes import resolve_mode
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump

    feeds = _feeds(width)
    cache = Cache(work / "cache")
    out = {}
    t0 = time.perf_counter()
    if phase == "plain":
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        sess.run(None, feeds)
    elif phase == "golden":
        golden_dump(model, feeds, cache=cache)
    elif phase == "convert":
        EmulatorBackend(cache).convert(model, resolve_mode("default"))
    elif phase == "run+dump":
        backend = EmulatorBackend(cache)
        converted = backend.convert(model, resolve_mode("default"))  # a cache hit
        dump = backend.run(converted, feeds, dump_dir=work / "dump")
        out["dump"] = [dump.root, str(converted.om_json)]
        out["ops"] = len(dump)
    elif phase == "compare":
        from pytest_ascend_accuracy.compare.engine import compare_dumps
        from pytest_ascend_accuracy.dump.loader import load_dump

        root, om_json = json.loads((work / "dump.json").read_text())
        actual = load_dump(root, om_json=om_json, model_name="big")
        golden = golden_dump(model, feeds, cache=cache)  # a cache hit
        result = compare_dumps(actual, golden)
        out["pairs"] = len(result.rows)
    elif phase == "check":
        from pytest_ascend_accuracy.compare.engine import compare_dumps
        from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

        cache = Cache(work / "cache-check")
        feeds = make_inputs(model, seed=0)
        golden = golden_dump(model, feeds, cache=cache)
        backend = EmulatorBackend(cache)
        actual = backend.run(backend.convert(model, resolve_mode("default")), feeds,
                             dump_dir=work / "dump-check")
        out["passed"] = bool(compare_dumps(actual, golden).judge(threshold=0.95).passed)
    out["wall_s"] = time.perf_counter() - t0
    cache.release()
    return out


def run_child(phase: str, model: str, width: int, work: Path) -> dict:
    sys.path.insert(0, str(HERE))
    from rss import run_phase

    return run_phase(str(Path(__file__).resolve()),
                     ["--child", phase, "--model", model, "--width", width, "--workdir", work])


def bench_digest(path) -> None:
    """``model_digest`` (every cache key's model part: a check computes it for the golden and
    for the conversion) against sha256 over the same files, what it was before: best of two,
    alternating, page cache warm for both."""
    import hashlib
    import os

    from pytest_ascend_accuracy.graph.content_digests import forget_digests, model_digest
    from pytest_ascend_accuracy.graph.onnx_graph import external_data_files

    def hashed():  # a remembered digest (content_digests) would time a lookup, not the hash
        forget_digests()
        return model_digest(path)

    def sha256_digest():
        h = hashlib.sha256()
        for part in [os.fspath(path)] + external_data_files(path):
            with open(part, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        return h.hexdigest()

    best = {"ours": float("inf"), "sha256": float("inf")}
    for _ in range(2):
        for label, digest in (("ours", hashed), ("sha256", sha256_digest)):
            t = time.perf_counter()
            digest()
            best[label] = min(best[label], time.perf_counter() - t)
    ours = model_digest(path).split(":")[0]
    print(f"   model digest ({ours}) {best['ours']:.2f} s against sha256 {best['sha256']:.2f} s over "
          f"the same files: {best['ours'] / best['sha256']:.2f}; a check digests its model twice "
          f"(golden and conversion keys)")


def _mb(b) -> str:
    return f"{b / 1e6:,.0f} MB"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=2.25, help="weights in GiB (default 2.25: over 2 GB)")
    ap.add_argument("--width", type=int, default=4096, help="weights are width x width float32")
    ap.add_argument("--inline", action="store_true", help="weights inside the .onnx file (--gb < 2)")
    ap.add_argument("--phases", default=",".join(PHASES))
    ap.add_argument("--workdir", help="keep the model and cache here (default: a temp dir, removed)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        sys.path.insert(0, str(HERE))
        from rss import report_phase

        return report_phase(lambda: child(args.child, args.model, args.width, Path(args.workdir)))
    root = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="bench-big-"))
    root.mkdir(parents=True, exist_ok=True)
    ok = True
    try:
        t = time.perf_counter()
        facts = build_model(root, args.gb, args.width, args.inline)
        where = "inside the model file" if args.inline else "in external data"
        print(f"model: {facts['nodes']} nodes, {_mb(facts['weights'])} of float32 weights {where} "
              f"(built in {time.perf_counter() - t:.1f} s), largest tensor {_mb(facts['largest_tensor'])}")
        if "digest" in args.phases.split(","):
            bench_digest(facts["path"])
        results = {}
        for phase in [p for p in args.phases.split(",") if p and p != "digest"]:
            r = run_child(phase, facts["path"], args.width, root)
            if "dump" in r:
                (root / "dump.json").write_text(json.dumps(r["dump"]))
            results[phase] = r
        plain = results.get("plain", {}).get("peak_rss", 0)
        largest = facts["largest_tensor"]
        budget = max(300e6 + 3 * largest, 1.25 * plain)
        print(f"memory budget = max(300 MB + 3 x largest tensor {_mb(largest)}, 1.25 x plain {_mb(plain)})"
              f" = {_mb(budget)}")
        for phase, r in results.items():
            ratio = r["peak_rss"] / budget
            met = phase == "plain" or ratio <= 1.0
            ok &= met
            print(f"   {phase:9s} {r['wall_s']:7.1f} s  peak RSS {_mb(r['peak_rss']):>9s}  "
                  f"/ budget {ratio:5.2f}  {'' if phase == 'plain' else 'met' if met else 'NOT MET'}")
    finally:
        if not args.workdir:
            shutil.rmtree(root, ignore_errors=True)
    print(f"\nall memory goals met: {ok}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
