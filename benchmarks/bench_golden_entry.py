"""What a cached golden entry costs to publish and to read back, each way measured alternately in
one process (issue 17):

* **write**: the golden's tensors written as one pack (``NpyDumpWriter(pack=...)``, GOLDEN_FORMAT
  5) against a ``.npy`` file each (before), the same arrays in memory on both sides;
* **read**: those op outputs as a DumpSet, from the pack's index (how ``golden_dump`` reads
  its entry) against ``load_dump`` of the directory of files (listing it, parsing every header);
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
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ocr_models import MODELS, ocr_model, random_inputs  # noqa: E402


def _alternate(rounds: int, a, b, before=None):
    """Medians of ``a()`` and ``b()`` timed alternately; ``before(fn)`` runs off the clock."""
    ta, tb = [], []
    for _ in range(rounds):
        for fn, out in ((a, ta), (b, tb)):
            if before is not None:
                before(fn)
            t = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t)
    return statistics.median(ta), statistics.median(tb)


def bench(short: str, size: int, rounds: int) -> None:
    import shutil

    import numpy as np

    from pytest_ascend_accuracy.core import cache as cache_mod
    from pytest_ascend_accuracy.core.cache import MANIFEST, Cache, Vouched, file_digest, new_hasher
    from pytest_ascend_accuracy.dump.loader import load_dump
    from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter
    from pytest_ascend_accuracy.dump.npy_index import read_indexed_dir, write_index
    from pytest_ascend_accuracy.golden.onnxruntime_golden import PACK_FILE, golden_dump

    model = str(ocr_model(short))
    shape = MODELS[short][1].format(size=size)
    with tempfile.TemporaryDirectory(prefix="bench-golden-entry-") as tmp:
        dump = golden_dump(model, random_inputs(model, shape), cache=Cache(Path(tmp)), input_shape=shape)
        entry = Path(dump.meta["cache_entry"])
        files = [p for p in sorted(entry.rglob("*")) if p.is_file() and p.name != MANIFEST]
        total = sum(p.stat().st_size for p in files)
        print(f"== {short} ({shape}): entry of {len(files)} files, {total / 2**20:.0f} MB, "
              f"{len(dump)} ops; medians of {rounds} alternating rounds")
        ops = [(op.name, [np.array(t.load()) for t in op.outputs]) for op in dump.ops]

        dirs = {PACK_FILE: Path(tmp) / "packed", None: Path(tmp) / "files"}

        def write(pack):
            with NpyDumpWriter(dirs[pack], private=True, hasher=new_hasher, pack=pack) as w:
                for k, (name, outs) in enumerate(ops):
                    w.write_op(name, [], outs, timestamp_us=k + 1)
            return w

        def pack_side():
            write_index(dirs[PACK_FILE].parent / "index.json", write(PACK_FILE).index())

        def clear(_):  # the previous round's files go off the clock, dirty pages written back
            for d in dirs.values():
                shutil.rmtree(d, ignore_errors=True)
            os.sync()

        packed, separate = _alternate(rounds, pack_side, lambda: write(None), before=clear)
        print(f"   write:    one pack + index {packed:.3f} s, a file each {separate:.3f} s   "
              f"ratio {packed / separate:.2f}  ({len(ops)} ops' outputs)")
        pack_side()
        write(None)
        read_pack = lambda: read_indexed_dir(dirs[PACK_FILE], dirs[PACK_FILE].parent / "index.json")  # noqa: E731
        assert [o.name for o in read_pack().ops] == [o.name for o in load_dump(dirs[None]).ops]
        idx, listed = _alternate(rounds, read_pack, lambda: load_dump(dirs[None]))
        print(f"   read:     pack's index {idx:.3f} s, load_dump of the files {listed:.3f} s   "
              f"ratio {idx / listed:.2f}")
        clear(None)
        xxh, sha = _alternate(rounds, lambda: [file_digest(p, "xxh3_128") for p in files],
                              lambda: [file_digest(p, "sha256") for p in files])
        print(f"   verify:   xxh3_128 {xxh:.3f} s, sha256 {sha:.3f} s   ratio {xxh / sha:.2f}")
        manifest = json.loads((entry / MANIFEST).read_text())
        vouched = Vouched(manifest["hash"], {rel: tuple(v) for rel, v in manifest["files"].items()
                                             if rel.endswith(PACK_FILE)})
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
