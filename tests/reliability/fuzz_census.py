"""A seeded census of the dump readers on hostile input: how many inputs of each kind were
tried and what became of them. ``test_fuzz_census.py`` runs a small one in CI (fixed seed);
``python tests/reliability/fuzz_census.py [N] [SEED]`` prints the table docs/reliability.md
quotes. The only acceptable failure is ``DumpFormatError``; anything else counts as
``other exception`` and must stay 0.
"""
from __future__ import annotations

import random
import struct
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import numpy as np

from pytest_ascend_accuracy.dump.ascend_bin import DumpTensor, read_dump_file, write_dump_file
from pytest_ascend_accuracy.dump.layout import read_mapping
from pytest_ascend_accuracy.dump.nano import encode_nano
from pytest_ascend_accuracy.dump.npy_dir import read_npy_dir
from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter
from pytest_ascend_accuracy.dump.proto import DumpData, OpInput, OpOutput, OriginalOp, Shape
from pytest_ascend_accuracy.errors import DumpFormatError

#: (keyword in the problem, outcome class), first match wins
_CLASSES = [
    ("cannot be decoded", "tensor of an undecodable dtype (refused on load)"),
    ("no numpy equivalent", "whole file refused for one tensor's dtype"),
    ("unknown dtype enum", "whole file refused for one tensor's dtype"),
    ("more than", "bounded count exceeded (tensors, dims)"),
    ("numpy", "shape numpy cannot hold"),
    ("nano dump header", "malformed nano TLV header"),
    ("truncated", "truncated file / sizes past the end"),
    ("runs past", "truncated file / sizes past the end"),
    ("size mismatch", "sizes do not add up"),
    ("after the last tensor", "sizes do not add up"),
    ("does not match shape", "sizes do not add up"),
    ("garbage header", "header not a DumpData protobuf"),
    ("legacy", "header not a DumpData protobuf"),
    ("does not fit", "device layout inconsistent with shape"),
    ("NC1HWC0", "device layout inconsistent with shape"),
    ("FRACTAL", "device layout inconsistent with shape"),
    ("CSV", "mapping/op-names CSV not parseable"),
    ("UTF-8", "not UTF-8"),
    ("expected", "mapping/op-names CSV not parseable"),
    (".npy", "not a valid .npy file"),
    ("dtype", "npy dtype refused"),
    ("empty", "empty file or directory"),
]


def _classify(exc: DumpFormatError) -> str:
    for key, label in _CLASSES:
        if key in exc.problem:
            return "DumpFormatError: " + label
    return "DumpFormatError: other (" + exc.problem[:40] + ")"


def _load_all(path) -> str:
    op = read_dump_file(path)
    refused = 0
    for t in op.inputs + op.outputs:
        try:
            arr = np.asarray(t.load())
        except DumpFormatError as exc:
            if "cannot be decoded" not in exc.problem:
                raise
            refused += 1
            continue
        assert arr.shape == tuple(t.shape) and arr.size == t.size, (path, t.slot)
    if refused:
        return "parsed, undecodable tensors reported per tensor"
    return "parsed, every tensor loaded"


# --------------------------------------------------------------------------- inputs
def seed_dumps(tmp: Path) -> List[bytes]:
    """Valid dump files to mutate, one per reader path: v2 with device formats and padding,
    fractal layouts and bf16, legacy v1, scalars and empty tensors, fp8/hifloat8/float4, nano.
    Shared by this census and the hypothesis fuzz tests (``test_dump_fuzz.py``)."""
    f32 = np.arange(12, dtype=np.float32).reshape(3, 4)
    files = [
        write_dump_file(tmp / "v2", "Conv_1", [DumpTensor(np.ones((1, 3, 4, 4), np.float16),
                                                          "NC1HWC0")],
                        [DumpTensor(f32, origin=("conv", 0), padding=4)]),
        write_dump_file(tmp / "nz", "MatMul_2", [DumpTensor(np.ones((20, 20), np.float16),
                                                            "FRACTAL_NZ"),
                                                 DumpTensor(np.ones((2, 3, 3, 3), np.float16),
                                                            "FRACTAL_Z")],
                        [DumpTensor(np.ones((5,), np.float32), dtype="bfloat16")]),
        write_dump_file(tmp / "v1", "Legacy_3", [DumpTensor(np.ones((4,), np.int32))],
                        [DumpTensor(f32)], version=1),
        write_dump_file(tmp / "tiny", "Scalar_4", [DumpTensor(np.array(1.5, np.float16))],
                        [DumpTensor(np.zeros((0, 3), np.int64)), DumpTensor(np.ones(3, bool))]),
        write_dump_file(tmp / "low", "Quant_5",
                        [DumpTensor(np.arange(8, dtype=np.uint8), dtype="float8_e5m2"),
                         DumpTensor(np.arange(8, dtype=np.uint8), dtype="float8_e4m3fn")],
                        [DumpTensor(np.arange(8, dtype=np.uint8), dtype="hifloat8"),
                         DumpTensor(np.zeros(4, np.uint8), dtype="float4_e2m1")]),
    ]
    a, b = np.ones((1, 6), np.float16), np.zeros((1, 2), np.float16)
    nano = encode_nano([dict(ge_dtype=1, format=1, shape=(1, 6), data=a.tobytes()),
                        dict(ge_dtype=1, format=1, shape=(1, 2), data=b.tobytes())],
                       [dict(ge_dtype=1, format=1, shape=(1, 8), origin=("concat", 0),
                             data=np.concatenate([a, b], 1).tobytes())])
    return [p.read_bytes() for p in files] + [nano]


def _mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["truncate", "flip", "header_len", "insert", "delete", "overwrite",
                           "word"])
        at = rng.randrange(max(len(b), 1))
        if kind == "truncate":
            del b[at:]
        elif kind == "flip" and b:
            b[at] ^= 1 << rng.randrange(8)
        elif kind == "header_len" and len(b) >= 8:
            b[:8] = struct.pack("<Q", rng.choice([rng.randrange(2 ** 64),
                                                  max(0, struct.unpack("<Q", bytes(b[:8]))[0]
                                                      + rng.randint(-40, 40))]))
        elif kind == "insert":
            b[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif kind == "delete" and b:
            del b[at:at + rng.randint(1, 16)]
        elif kind == "overwrite" and b:
            b[at:at + 8] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif kind == "word" and len(b) >= 4:
            at = min(at, len(b) - 4)
            b[at:at + 4] = struct.pack("<I", rng.choice([0, 1, 64, 65, 2 ** 31, 2 ** 32 - 1,
                                                         rng.randrange(2 ** 32)]))
    return bytes(b)


_DIMS = [0, 1, 2, 3, 16, 17, 2 ** 40, 2 ** 62, 2 ** 63, 2 ** 64 - 1]


def _random_header(rng: random.Random) -> bytes:
    def shape():
        if rng.random() < 0.2:
            return None
        n = rng.choice([0, 1, 2, 4, 5] * 6 + [64, 65, 100])
        return Shape(tuple(rng.choice(_DIMS) for _ in range(n)))

    def tensor(cls):
        kw = dict(data_type=rng.randint(-2, 45), format=rng.choice([0, 1, 2, 3, 4, 29, 255, 999]),
                  shape=shape(), original_shape=shape(), size=rng.choice([0, 4, 64, 5000]))
        if cls is OpOutput and rng.random() < 0.5:
            kw["original_op"] = OriginalOp(name="x", output_index=rng.randint(0, 3))
        return cls(**kw)
    count = rng.choice([0, 1, 2, 3] * 5 + [10_001])
    ins = tuple(tensor(OpInput) for _ in range(min(count, 3)))
    if count > 3:
        ins = (OpInput(data_type=1, shape=Shape((0,))),) * count
    outs = tuple(tensor(OpOutput) for _ in range(rng.randint(0, 3)))
    raw = DumpData(version=rng.choice(["2.0", "", "1.0"]), input=ins, output=outs).encode()
    payload = max(0, sum(t.size for t in ins + outs) + rng.randint(-3, 3))
    return struct.pack("<Q", len(raw)) + raw + bytes([rng.randrange(256)]) * min(payload, 1 << 16)


def _mapping_csv(rng: random.Random) -> bytes:
    kind = rng.choice(["bytes", "long", "quote"])
    if kind == "bytes":
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 200)))
    if kind == "long":
        length = rng.choice([131_071, 131_072, 131_073, 300_000])
        return b'17000000000000001,"' + b"a" * length + b'"\n'
    return b'17000000000000001,"' + bytes(rng.randrange(32, 127) for _ in range(20))


_NAME_CHARS = "ab_x.-/\\ \n\r\t,\"'%:;0\x00ü" + "input_"


def _names(rng: random.Random) -> List[str]:
    out: List[str] = []
    for _ in range(rng.randint(1, 8)):
        name = "".join(rng.choice(_NAME_CHARS) for _ in range(rng.randint(0, 8)))
        if rng.random() < 0.3 and out:
            name = "input_" + rng.choice(out)
        if name not in out:
            out.append(name)
    return out


# --------------------------------------------------------------------------- runs
def _run_file(tmp: Path, data: bytes, name: str = "Conv.op.1.0.1700000000000000") -> str:
    p = tmp / name
    p.write_bytes(data)
    try:
        return _load_all(p)
    except DumpFormatError as exc:
        assert exc.path == str(p), (exc.path, p)
        return _classify(exc)


def _run_mapping(tmp: Path, data: bytes) -> str:
    (tmp / "mapping.csv").write_bytes(data)
    try:
        read_mapping(tmp)
        return "parsed"
    except DumpFormatError as exc:
        assert exc.path == str(tmp / "mapping.csv")
        return _classify(exc)


def _run_names(tmp: Path, names: List[str], k: int) -> str:
    d = tmp / f"g{k}"
    with NpyDumpWriter(d) as w:
        for i, n in enumerate(names):
            w.write_op(n, [np.full(1, -i - 1.0)], [np.full(2, float(i))], timestamp_us=1 + i)
    dump = read_npy_dir(d)
    from pytest_ascend_accuracy.dump.layout import sanitize
    for i, n in enumerate(names):
        op = dump.get(n) or dump.get(sanitize(n))
        assert op is not None and op.outputs[0].load().tolist() == [float(i)] * 2, (names, n)
        assert op.inputs[0].load().tolist() == [-i - 1.0], (names, n)
    assert len(dump) == len(names), (names, dump.names)
    return "every op read back under its own name with its own tensors"


def census(n: int = 300, seed: int = 1313) -> Dict[str, Counter]:
    """{input kind: Counter(outcome class)} for ``n`` inputs of each kind."""
    rng = random.Random(seed)
    out: Dict[str, Counter] = {}
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        seeds = seed_dumps(tmp)
        kinds: List[Tuple[str, Callable[[int], str]]] = [
            ("mutated valid files (v2 + device formats, bf16, v1, scalars, fp8/hifloat8/"
             "float4, nano)",
             lambda k: _run_file(tmp, _mutate(rng, seeds[k % len(seeds)]))),
            ("random bytes", lambda k: _run_file(
                tmp, bytes(rng.randrange(256) for _ in range(rng.randint(0, 600))))),
            ("well-formed headers, hostile fields (dims past 2**63, 65+ dims, 10,001 tensors)",
             lambda k: _run_file(tmp, _random_header(rng))),
            ("mapping.csv (random bytes, fields around the 131,072 limit, open quotes)",
             lambda k: _run_mapping(tmp, _mapping_csv(rng))),
            ("golden dirs of hostile op names (input_<op>, newlines, ./ collisions, %)",
             lambda k: _run_names(tmp, _names(rng), k)),
        ]
        for label, run in kinds:
            counts: Counter = Counter()
            for k in range(n):
                try:
                    counts[run(k)] += 1
                except AssertionError:
                    raise
                except Exception as exc:  # noqa: BLE001 - the census counts what escapes
                    counts[f"other exception: {type(exc).__name__}: {exc}"[:120]] += 1
            out[label] = counts
    return out


def render(result: Dict[str, Counter]) -> str:
    lines = ["| inputs | tried | outcome classes | other exceptions |", "|---|---|---|---|"]
    for label, counts in result.items():
        other = sum(v for k, v in counts.items() if k.startswith("other exception"))
        classes = "; ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
        lines.append(f"| {label} | {sum(counts.values())} | {classes} | {other} |")
    return "\n".join(lines)


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    print(render(census(*args)))
