"""The NC1HWC0 transpose (``dump.channel_blocks``): the compiled loops against numpy's strided
copy, on the activation shapes of PP-OCRv4 det 736x736, both directions, in one run.

    python benchmarks/bench_channel_blocks.py [--repeat 20]

The shapes are those of det's 4-D node outputs (onnx shape inference at 1x3x736x736, the
``ocr`` extra's model), each distinct one timed once and counted as often as it occurs. Prints
for each shape and dtype the ns per value of ``to_device`` (what an emulated run's writer does
for every 4-D output it dumps) and ``to_logical`` (what a compare does to read one back), numpy
(``ASCEND_ACCURACY_NUMPY_LAYOUT=1``) then compiled, with the ratio; then the totals over all of
det's 4-D outputs. Needs the optional extension built (``pip install -e .`` with a C compiler).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def det_shapes(size: int = 736) -> list:
    """[(shape, how many node outputs of det have it)] for det's 4-D float node outputs."""
    from collections import Counter

    import onnx

    from ocr_models import ocr_model

    model = onnx.load(str(ocr_model("det")))
    dims = model.graph.input[0].type.tensor_type.shape.dim
    for d, v in zip(dims, (1, 3, size, size)):
        d.ClearField("dim_param")
        d.dim_value = v
    inferred = onnx.shape_inference.infer_shapes(model)
    produced = {o for n in inferred.graph.node if n.op_type != "Constant" for o in n.output}
    shapes = Counter()
    for vi in inferred.graph.value_info:
        t = vi.type.tensor_type
        if vi.name in produced and t.elem_type == onnx.TensorProto.FLOAT and len(t.shape.dim) == 4:
            shape = tuple(d.dim_value for d in t.shape.dim)
            if all(shape):
                shapes[shape] += 1
    return sorted(shapes.items(), key=lambda kv: -kv[1] * int(np.prod(kv[0])))


def _time(fn, repeat: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def measure(shape, dtype, repeat: int, numpy_path: bool) -> tuple:
    from pytest_ascend_accuracy.dump import channel_blocks, device_formats as df

    if numpy_path:
        os.environ[channel_blocks.NUMPY_LAYOUT_ENV] = "1"
    try:
        a = np.random.default_rng(0).standard_normal(shape).astype(dtype)
        dev = df.to_device(a, "NC1HWC0")
        to = _time(lambda: df.to_device(a, "NC1HWC0"), repeat)
        back = _time(lambda: df.to_logical(dev, "NC1HWC0", shape), repeat)
        assert df.to_logical(dev, "NC1HWC0", shape).tobytes() == a.tobytes()
    finally:
        os.environ.pop(channel_blocks.NUMPY_LAYOUT_ENV, None)
    return to, back


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    from pytest_ascend_accuracy.dump import channel_blocks

    if channel_blocks.channel_blocks_extension() is None:
        print("the _channel_blocks extension is not built here: "
              "pip install -e . (needs a C compiler)")
        return 1
    totals = {np.float16: [0.0, 0.0, 0.0, 0.0], np.float32: [0.0, 0.0, 0.0, 0.0]}
    print(f"{'shape':>20} {'dtype':>8} {'to_device ns/value':>28} {'to_logical ns/value':>28}")
    shapes = det_shapes()
    for shape, count in shapes:
        size = int(np.prod(shape))
        for dtype in (np.float16, np.float32):
            n_to, n_back = measure(shape, dtype, args.repeat, True)
            c_to, c_back = measure(shape, dtype, args.repeat, False)
            t = totals[dtype]
            t[0] += count * n_to
            t[1] += count * c_to
            t[2] += count * n_back
            t[3] += count * c_back
            ns = [v / size * 1e9 for v in (n_to, c_to, n_back, c_back)]
            print(f"{str(shape):>20} {np.dtype(dtype).name:>8} "
                  f"{ns[0]:8.3f} -> {ns[1]:6.3f} ({n_to / c_to:4.1f}x) "
                  f"{ns[2]:11.3f} -> {ns[3]:6.3f} ({n_back / c_back:4.1f}x)")
    for dtype, (n_to, c_to, n_back, c_back) in totals.items():
        print(f"det 736's {sum(c for _, c in shapes)} 4-D outputs, {np.dtype(dtype).name}: "
              f"to_device {n_to:.3f} s -> {c_to:.3f} s ({n_to / c_to:.1f}x), "
              f"to_logical {n_back:.3f} s -> {c_back:.3f} s ({n_back / c_back:.1f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
