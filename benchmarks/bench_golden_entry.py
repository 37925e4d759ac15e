"""What a cached golden entry costs to publish and to read back, each way measured alternately in
one process (issue 17):

* **read**: the entry's DumpSet from its index (``golden_dump`` since GOLDEN_FORMAT 4) against
  ``load_dump`` of its ``npy`` directory (listing it, parsing every ``.npy`` header);
* **verify**: hashing every file of the entry for its manifest with xxh3_128 (manifests now)
  against sha256 (manifests before);
* **manifest**: writing the manifest of a built entry from the digests the writer computed
  while writing (``Vouched``) against reading every file back to hash it.

    python benchmarks/bench_golden_entry.py                   # PP-OCR cls and det 736, 5 rounds
    python benchmarks/bench_golden_entry.py --which cls --rounds 9

Needs the ``ocr`` extra (as ``bench_check``). The entry is built once per model; the two ways
of each step then run alternately, so both see the same machine load, and the medians and their
ratio are printed (the files are in the page cache for both: the ratio is CPU and system calls,
not disk). Read the ratio, not the seconds.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_check import MODELS, _inputs, ocr_model  # noqa: E402


def _alternate(rounds: int, a, b):
    ta, tb = [], []
    for _ in range(rounds):
        for fn, out in ((a, ta), (b, tb)):
            t = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t)
    return statistics.median(ta), statistics.median(tb)


def bench(short: str, size: int, rounds: int) -> None:
    from pytest_ascend_accuracy.core import cache as cache_mod
    from pytest_ascend_accuracy.core.cache import MANIFEST, Cache, Vouched, file_digest
    from pytest_ascend_accuracy.dump.loader import load_dump
    from pytest_ascend_accuracy.golden.onnxruntime_golden import (DUMP_DIR, golden_dump,
                                                                  read_entry_dump)

    model = str(ocr_model(short))
    shape = MODELS[short][1].format(size=size)
    with tempfile.TemporaryDirectory(prefix="bench-golden-entry-") as tmp:
        dump = golden_dump(model, _inputs(model, shape), cache=Cache(Path(tmp)), input_shape=shape)
        entry = Path(dump.meta["cache_entry"])
        files = [p for p in sorted(entry.rglob("*")) if p.is_file() and p.name != MANIFEST]
        total = sum(p.stat().st_size for p in files)
        print(f"== {short} ({shape}): entry of {len(files)} files, {total / 2**20:.0f} MB, "
              f"{len(dump)} ops; medians of {rounds} alternating rounds")
        assert read_entry_dump(entry) == load_dump(entry / DUMP_DIR)
        idx, listed = _alternate(rounds, lambda: read_entry_dump(entry),
                                 lambda: load_dump(entry / DUMP_DIR))
        print(f"   read:     index {idx:.3f} s, load_dump {listed:.3f} s   ratio {idx / listed:.2f}")
        xxh, sha = _alternate(rounds, lambda: [file_digest(p, "xxh3_128") for p in files],
                              lambda: [file_digest(p, "sha256") for p in files])
        print(f"   verify:   xxh3_128 {xxh:.3f} s, sha256 {sha:.3f} s   ratio {xxh / sha:.2f}")
        manifest = json.loads((entry / MANIFEST).read_text())
        vouched = Vouched(manifest["hash"], {rel: tuple(v) for rel, v in manifest["files"].items()
                                             if rel.endswith(".npy")})
        given, read = _alternate(rounds, lambda: cache_mod._write_manifest(entry, vouched),
                                 lambda: cache_mod._write_manifest(entry, None))
        print(f"   manifest: vouched {given:.3f} s, read back {read:.3f} s   ratio {given / read:.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--which", choices=["cls", "det", "both"], default="both")
    ap.add_argument("--det-size", type=int, default=736)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    import onnx  # noqa: F401  (imports before the clock, as a pytest session pays them once)
    import onnxruntime  # noqa: F401

    for short in (["cls", "det"] if args.which == "both" else [args.which]):
        bench(short, args.det_size, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
