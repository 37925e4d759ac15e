"""``ort_arena.reserve_shared_arena``: a streamed run of several segments first grows the shared
arena by one touched region of its largest segment's bytes, which goes back with the rest."""
from __future__ import annotations

import gc
import sys

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from pytest_ascend_accuracy.graph import ort_arena, stream  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")


def _chain(n: int, width: int):
    """x -> (Add 1, Relu) * n/2, every tensor ``width`` float32s."""
    nodes, prev = [], "x"
    for k in range(n):
        nodes.append(helper.make_node("Add" if k % 2 == 0 else "Relu",
                                      [prev, "one"] if k % 2 == 0 else [prev], [f"t{k}"]))
        prev = f"t{k}"
    graph = helper.make_graph(nodes, "chain",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, width])],
                              [helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def _segmented(n=8, width=1 << 20, segment_bytes=12 << 20):
    model = _chain(n, width)
    names = [o for node in model.graph.node for o in node.output]
    assert stream.SegmentedModel(model, names).reserve is False  # only where asked (the emulator)
    return model, stream.SegmentedModel(model, names, segment_bytes=segment_bytes, threads=1,
                                        reserve=True)


def test_a_run_of_several_segments_reserves_its_largest_segment_once(monkeypatch):
    """A segment's bytes are what its nodes' outputs add up to; the run reserves the largest
    segment's, once, before its runner computes; a run of one segment reserves nothing (its
    tensors come out of the arena once: nothing to split up), nor does a model without the
    shared arena."""
    asked = []
    monkeypatch.setattr(ort_arena, "reserve_shared_arena", asked.append)
    model, segmented = _segmented()
    assert len(segmented.segments) > 1 and segmented.use_arena
    assert [seg.nbytes for seg in segmented.segments] == [
        len(seg.nodes) * (4 << 20) for seg in segmented.segments]
    x = make_inputs(model)
    for _ in range(2):
        run = segmented.run(x, ahead=2)
        run.run_all()
        run.values.clear()
        run.close()
    assert asked == [max(seg.nbytes for seg in segmented.segments)] * 2
    asked.clear()
    _, whole = _segmented(segment_bytes=1 << 30)
    assert len(whole.segments) == 1
    whole.run(x).close()
    _, heavy = _segmented()
    heavy.use_arena = False
    heavy.run(x).close()
    assert asked == []


@linux
def test_a_reserved_region_is_touched_and_goes_back_at_the_release():
    """The reservation's pages are resident once it returns (the run then finds them faulted
    in), and ``release_shared_arena`` gives the region back with the rest of the arena."""
    from pytest_ascend_accuracy.graph.streamed_run import trim_heap

    assert ort_arena.shared_arena()
    ort_arena.reserve_shared_arena(ort_arena.MIN_RESERVE)  # the session is built, not measured
    ort_arena.release_shared_arena()
    trim_heap()
    gc.collect()
    before = _rss()
    ort_arena.reserve_shared_arena(64 << 20)
    reserved = _rss()
    ort_arena.release_shared_arena()
    trim_heap()
    after = _rss()
    assert reserved - before > 60 << 20, (before >> 20, reserved >> 20)
    assert reserved - after > 60 << 20, (reserved >> 20, after >> 20)


def test_a_small_reservation_or_none_without_a_shared_arena_does_nothing(monkeypatch):
    made = []
    monkeypatch.setattr(ort_arena, "_RESERVER", made)  # a session would be appended here
    ort_arena.reserve_shared_arena(ort_arena.MIN_RESERVE - 1)
    assert made == []
    monkeypatch.setattr(ort_arena, "_REGISTERED", [False])
    ort_arena.reserve_shared_arena(64 << 20)
    assert made == []


def test_a_run_after_a_reservation_gives_one_run_s_values(monkeypatch):
    reserved = []
    real = ort_arena.reserve_shared_arena
    monkeypatch.setattr(ort_arena, "reserve_shared_arena", lambda n: reserved.append(n) or real(n))
    model, segmented = _segmented(n=6)
    x = make_inputs(model)
    run = segmented.run(x, ahead=2)
    run.run_all()
    assert reserved == [12 << 20]  # three 4 MB tensors a segment
    expected = np.asarray(x["x"], np.float32)
    for k in range(6):
        expected = expected + 1 if k % 2 == 0 else np.maximum(expected, 0)
        np.testing.assert_array_equal(run.values[f"t{k}"], expected)
    run.values.clear()
    run.close()


def test_the_emulator_s_runs_reserve_and_goldens_do_not(tmp_path, monkeypatch):
    """The golden run is a cold check's memory peak: it reserves nothing; the emulated run of
    a model of several segments reserves its largest segment."""
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.core.modes import DEFAULT
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump

    asked = []
    monkeypatch.setattr(ort_arena, "reserve_shared_arena", asked.append)
    monkeypatch.setattr(stream, "SEGMENT_BYTES", 12 << 20)
    model = _chain(8, 1 << 20)
    x = make_inputs(model)
    cache = Cache(tmp_path / "cache")
    golden_dump(model, x, cache=cache)
    assert asked == []
    backend = EmulatorBackend(cache)
    backend.run(backend.convert(model, DEFAULT), x, dump_dir=tmp_path / "dump")
    assert len(asked) == 1 and asked[0] >= 8 << 20


def test_a_process_s_first_run_reserves_before_any_session_registered_the_arena(tmp_path):
    """A warm check's run is often the process's first onnxruntime work (its golden and
    conversion come from the cache): its sessions are built after the reservation, which then
    found no registered arena and reserved nothing. It registers the arena itself now."""
    import subprocess
    import textwrap

    import onnx

    onnx.save(_chain(8, 1 << 20), str(tmp_path / "chain.onnx"))  # the model _segmented cuts
    script = textwrap.dedent("""
        import onnx
        from pytest_ascend_accuracy.graph import ort_arena, stream
        from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
        model = onnx.load("chain.onnx")
        names = [o for node in model.graph.node for o in node.output]
        segmented = stream.SegmentedModel(model, names, segment_bytes=12 << 20, threads=1,
                                          reserve=True)
        assert ort_arena._REGISTERED == [] and ort_arena._RESERVER == []
        run = segmented.run(make_inputs(model), ahead=2)
        run.run_all()
        run.close()
        print("registered", ort_arena._REGISTERED, "reserved", len(ort_arena._RESERVER))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "registered [True] reserved 1" in done.stdout
