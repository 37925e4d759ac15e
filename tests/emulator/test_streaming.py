"""Golden and emulated runs in segments (graph.stream): the same values as one run, a bounded
number of tensors held at once, dumps that do not depend on where the model is cut, and models
whose weights live in ONNX external data."""
import gc
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.core.modes import DEFAULT, Mode  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.graph import stream  # noqa: E402
from pytest_ascend_accuracy.graph.content_digests import model_digest  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402

from .streaming_helpers import chain as _chain  # noqa: E402
from .streaming_helpers import one_run as _one_run  # noqa: E402
from .streaming_helpers import runner_fills_its_window as _runner_fills_its_window  # noqa: E402


def test_segments_give_the_values_of_one_run():
    model = models.transformer_block()
    x = make_inputs(model)
    names = [o for n in model.graph.node for o in n.output if o]
    segmented = stream.SegmentedModel(model, names, segment_bytes=3000)
    assert len(segmented.segments) > 10  # cut nearly everywhere
    run = segmented.run(x)
    run.run_all()
    expected = _one_run(model, x)
    assert sorted(run.values) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(run.values[name], value, err_msg=name)


@pytest.mark.parametrize("ahead", [1, 2])
def test_a_run_holds_a_bounded_window_of_tensors(ahead):
    """With ``ahead`` segments computed beyond the one being written: the caller's segment and
    those computed ahead (two tensors each here; what crosses into the next is one of them),
    never the whole model. ``peak_bytes`` counts them at each hand-over."""
    bound = (ahead + 1) * 2

    model = _chain()
    x = make_inputs(model)
    one = 64 * 1024 * 4
    names = [n.output[0] for n in model.graph.node]
    run = stream.SegmentedModel(model, names, segment_bytes=2 * one).run(x, ahead=ahead)
    for name in names:  # a consumer that writes each tensor (slowly) and lets it go
        run.ensure([name])
        _runner_fills_its_window(run)  # meanwhile (a 2 ms sleep was a bet on the machine)
        run.values.pop(name)
    assert run.done and len(run.model.segments) == len(names) // 2
    assert 2 * ahead * one <= run.peak_bytes <= bound * one < len(names) * one
    run.close()
    whole = stream.SegmentedModel(model, names, segment_bytes=1 << 40).run(x)
    whole.run_all()
    assert whole.peak_bytes == len(names) * one  # the old way: everything at once
    whole.close()


def test_a_failing_segment_raises_where_the_caller_reaches_it(monkeypatch):
    """The runner's exception comes out of the ``ensure`` that needs that segment (the ones
    before it are handed over first), and the runner thread is gone afterwards."""
    model = _chain(n=12, width=1024)
    x = make_inputs(model)
    names = [n.output[0] for n in model.graph.node]
    segmented = stream.SegmentedModel(model, names, segment_bytes=2 * 4096)
    real_run = stream.SegmentedModel._run_segment

    def failing(self, s, feeds):
        if s == 3:
            raise RuntimeError("segment 3 broke")
        return real_run(self, s, feeds)

    monkeypatch.setattr(stream.SegmentedModel, "_run_segment", failing)
    run = segmented.run(x, ahead=2)
    runner = run._runner
    for name in names:
        if segmented.segment_of[name] == 3:
            with pytest.raises(RuntimeError, match="segment 3 broke"):
                run.ensure([name])
            break
        run.ensure([name])
        assert name in run.values
    assert run._runner is None and not runner.thread.is_alive()
    run.close()


@pytest.mark.parametrize("how", ["closed", "dropped"])
def test_a_run_left_halfway_stops_its_runner(how):
    model = _chain(n=12, width=1024)
    x = make_inputs(model)
    names = [n.output[0] for n in model.graph.node]
    run = stream.SegmentedModel(model, names, segment_bytes=2 * 4096).run(x, ahead=2)
    run.ensure(names[:3])
    thread = run._runner.thread
    if how == "closed":
        run.close()
    else:  # nothing refers to the run from its thread: collecting it closes it
        del run
        gc.collect()
    thread.join(timeout=10)
    assert not thread.is_alive()


def _tensors(dump):
    return {op.name: [t.load() for t in op.inputs + op.outputs] for op in dump.ops}


@pytest.mark.parametrize("mode", [DEFAULT, Mode(precision_mode="allow_fp32_to_bf16", fusion=False)],
                         ids=["default", "bf16"])
def test_dumps_do_not_depend_on_the_cuts(tmp_path, monkeypatch, mode):
    model = models.transformer_block()
    x = make_inputs(model)
    dumps = []
    for budget, sub in ((stream.SEGMENT_BYTES, "whole"), (6000, "cut")):  # cut: ~8 segments
        monkeypatch.setattr(stream, "SEGMENT_BYTES", budget)
        cache = Cache(tmp_path / sub / "cache")
        backend = EmulatorBackend(cache)
        converted = backend.convert(model, mode)
        segments = len(stream.SegmentedModel(model, [o for n in model.graph.node for o in n.output]).segments)
        assert segments == 1 if sub == "whole" else segments > 4
        dumps.append((_tensors(golden_dump(model, x, cache=cache)),
                      _tensors(backend.run(converted, x, dump_dir=tmp_path / sub / "dump")),
                      backend.outputs(converted, x)))
    for (g1, e1, o1), (g2, e2, o2) in [dumps]:
        for a, b in ((g1, g2), (e1, e2)):
            assert list(a) == list(b)
            for name in a:
                for u, v in zip(a[name], b[name]):
                    np.testing.assert_array_equal(u, v, err_msg=name)
        assert list(o1) == list(o2)
        for name in o1:
            np.testing.assert_array_equal(o1[name], o2[name])


def test_a_model_with_external_data(tmp_path):
    model = models.transformer_block()
    x = make_inputs(model)
    path = tmp_path / "ext" / "block.onnx"
    path.parent.mkdir()
    saved = onnx.ModelProto()
    saved.CopyFrom(model)  # save_model moves the weights out of the proto it is given
    onnx.save_model(saved, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="block.onnx.data", size_threshold=0)
    assert (path.parent / "block.onnx.data").stat().st_size > path.stat().st_size
    cache = Cache(tmp_path / "cache")
    from_file = golden_dump(path, x, cache=cache)
    in_memory = golden_dump(model, x, cache=Cache(tmp_path / "cache2"))
    assert [op.name for op in from_file.ops] == [op.name for op in in_memory.ops]
    for a, b in zip(from_file.ops, in_memory.ops):
        np.testing.assert_array_equal(a.output(0).load(), b.output(0).load())
    backend = EmulatorBackend(cache)
    dump = backend.run(backend.convert(path, DEFAULT), x, dump_dir=tmp_path / "dump")
    assert len(dump) > 10
    # the weights are part of the model's identity: new weights, new cache key
    before = model_digest(path)
    data = path.parent / "block.onnx.data"
    raw = bytearray(data.read_bytes())
    raw[-1] ^= 1
    data.write_bytes(bytes(raw))
    assert model_digest(path) != before


def test_shapes_of_a_model_with_big_weights_come_from_a_light_copy(monkeypatch):
    """Shape inference serialises the model (2 GB limit): big weights are declared, not copied,
    and the shapes, hence where a model may be cut, stay the same."""
    from pytest_ascend_accuracy.graph import onnx_graph, shape_inference_copy as copy

    model = models.transformer_block()
    names = [o for n in model.graph.node for o in n.output]
    full = onnx_graph.tensor_info(model)
    cuts = [s.nodes for s in stream.SegmentedModel(model, names, segment_bytes=6000).segments]
    monkeypatch.setattr(copy, "LIGHT_ABOVE", 0)
    # the weight matrices, not shape constants
    monkeypatch.setattr(copy, "FLOAT_DECLARED_ABOVE", 256)
    monkeypatch.setattr(copy, "ANY_DECLARED_ABOVE", 256)
    light = copy.shape_inference_model(model)
    moved = {i.name for i in light.graph.input} - {i.name for i in model.graph.input}
    assert "/attn/q.weight" in moved and len(model.graph.initializer) == 26  # the model is untouched
    assert len(light.graph.initializer) == 26 - len(moved)
    assert onnx_graph.tensor_info(model) == full
    assert [s.nodes for s in stream.SegmentedModel(model, names, segment_bytes=6000).segments] == cuts


def test_segment_sessions_never_spin_wait():
    """The caller writes one segment's tensors while the next runs: idle onnxruntime threads
    spinning between kernels would take those cores (bench_check: 2.1 s against 1.1 s)."""
    model = _chain(n=4, width=16)
    segmented = stream.SegmentedModel(model, ["t3"])
    segmented.run(make_inputs(model)).run_all()
    sessions = [seg.session for seg in segmented.segments if seg.session is not None]
    assert sessions
    for sess in sessions:
        entries = sess.get_session_options().get_session_config_entry
        assert entries("session.intra_op.allow_spinning") == "0"


@pytest.mark.parametrize("keep_sessions, weight_bytes, arena", [(True, None, True), (False, None, True),
                                                                (True, 1, False)])
def test_segment_sessions_share_one_arena(keep_sessions, weight_bytes, arena, monkeypatch):
    """Segment sessions allocate from the process's shared arena (one segment reuses the pages
    the last one freed: no page faults per tensor), and closing a run gives its unused memory
    back. A model whose weights exceed one segment's budget uses no arena."""
    from pytest_ascend_accuracy.graph import ort_arena

    model = _chain(n=8, width=1024)
    x = make_inputs(model)
    names = [o for n in model.graph.node for o in n.output if o]
    segmented = stream.SegmentedModel(model, names, segment_bytes=3 * 4096, keep_sessions=keep_sessions,
                                      weight_bytes=weight_bytes)
    assert len(segmented.segments) >= 3 and segmented.use_arena is arena
    releases, sessions = [], []
    real = ort_arena.release_shared_arena
    monkeypatch.setattr(ort_arena, "release_shared_arena", lambda: releases.append(1) or real())
    real_build = stream._build_session
    monkeypatch.setattr(stream, "_build_session", lambda *a, **k: sessions.append(real_build(*a, **k))
                        or sessions[-1])
    for _ in range(2):  # kept sessions: the second run reuses them (and the arena)
        run = segmented.run(x)
        run.run_all()
        expected = _one_run(model, x)
        for name, value in expected.items():
            np.testing.assert_array_equal(run.values[name], value, err_msg=name)
        assert releases == []  # the caller still holds the values: nothing to give back yet
        run.values.clear()
        run.close()
        run.close()  # once
        assert releases == ([1] if arena else [])
        releases.clear()
    assert ort_arena.shared_arena()  # this onnxruntime has one
    assert sessions and {s.get_session_options().get_session_config_entry("session.use_env_allocators")
                         if arena else s.get_session_options().enable_cpu_mem_arena
                         for s in sessions} == ({"1"} if arena else {False})


_ARENA_RELEASE = """
import gc
import onnx
from pytest_ascend_accuracy.graph import ort_arena, stream
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

model = onnx.load("chain.onnx")
x = make_inputs(model)
names = [o for n in model.graph.node for o in n.output if o]
segmented = stream.SegmentedModel(model, names, segment_bytes=40 << 20, threads=1)
assert segmented.use_arena and ort_arena.shared_arena() and len(segmented.segments) >= 3
run = segmented.run(x)  # sessions built and the arena warmed up, then dropped
run.run_all()
run.values.clear()
run.close()
gc.collect()
before = rss()
run = segmented.run(x)
run.run_all()
held = rss()
run.values.clear()
run.close()
print(before >> 20, held >> 20, rss() >> 20)  # MB
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_a_closed_run_gives_its_arena_memory_back(tmp_path):
    """A run's outputs are arrays over arena memory (onnxruntime does not copy them): once the
    caller drops them and closes the run, the memory goes back to the system, not only to the
    arena (8 tensors of 16 MB held, 115-131 MB of growth: without the release, none of it goes).
    What may stay is glibc's, not the arena's: the runner thread's malloc arena keeps its top
    chunk while it is below glibc's trim threshold (twice the largest mmapped block freed so
    far, up to 64 MB; no ``malloc_trim`` shrinks another thread's top). How much that is
    depends on every allocation the process made before: 0, 15 or 32 MB after freeing one
    block of 2, 16 or 32 MB first, and 48 MB once in CI, in an xdist worker after other tests.
    So the run is measured in a fresh process: 33 MB stayed in 15 of 20 runs there, 16 MB in
    the other 5 (which thread arena the runner gets), 7 MB under the bound at most. One
    onnxruntime thread: what the pool's threads keep of their own (48 MB in a thread's malloc
    arena in about half the runs of this file with the default pool, untouched by a second
    release or trim; never with one thread) is not the shared arena's to give back either."""
    import subprocess

    onnx.save(_chain(n=8, width=4 << 20), str(tmp_path / "chain.onnx"))
    done = subprocess.run([sys.executable, "-c", _ARENA_RELEASE], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    before, held, after = map(int, done.stdout.split())
    assert held - before > 80  # the 8 outputs held
    assert after - before <= 40, (before, held, after)


def test_without_a_shared_arena_segments_run_with_none(monkeypatch):
    """An onnxruntime that cannot register the shared arena (its errors are plain Exceptions):
    segment sessions use no arena, and no run asks to shrink one (which would be an error)."""
    import onnxruntime as ort
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail

    from pytest_ascend_accuracy.graph import ort_arena

    def refuse(*args, **kwargs):
        raise Fail("no shared allocators here")
    monkeypatch.setattr(ort_arena, "_REGISTERED", [])
    monkeypatch.setattr(ort, "create_and_register_allocator", refuse)
    model = _chain(n=8, width=1024)
    x = make_inputs(model)
    names = [o for n in model.graph.node for o in n.output if o]
    segmented = stream.SegmentedModel(model, names, segment_bytes=3 * 4096)
    run = segmented.run(x)
    run.run_all()
    assert ort_arena.shared_arena() is False
    for name, value in _one_run(model, x).items():
        np.testing.assert_array_equal(run.values[name], value, err_msg=name)
    assert all(not seg.session.get_session_options().enable_cpu_mem_arena
               for seg in segmented.segments if seg.session is not None)
