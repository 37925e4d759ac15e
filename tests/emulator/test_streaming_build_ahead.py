"""Segment sessions built ahead while a streamed run waits (graph.stream): by the caller or the
runner, with the signature each segment gets, never from a wrong prediction, never twice for a
segment run once (split from test_streaming.py)."""
import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.graph import stream  # noqa: E402
from pytest_ascend_accuracy.graph import streamed_run  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402

from .streaming_helpers import chain as _chain  # noqa: E402
from .streaming_helpers import one_run as _one_run  # noqa: E402
from .streaming_helpers import runner_fills_its_window as _runner_fills_its_window  # noqa: E402


def test_a_waiting_caller_builds_the_next_segments_session_with_the_signature_it_gets():
    """While the background thread computes, the caller builds the next session from the
    tensor info; the run then uses it (no second build) and gives one run's values."""
    import threading

    model = models.transformer_block()
    x = make_inputs(model)
    names = [o for n in model.graph.node for o in n.output if o]
    segmented = stream.SegmentedModel(model, names, segment_bytes=3000)
    builds, build, caller = [], segmented._build, threading.current_thread()

    def counted(s, signature):
        builds.append((s, threading.current_thread() is caller))
        build(s, signature)

    segmented._build = counted
    run = segmented.run(x)
    for s in range(1, len(segmented.segments)):  # before any ran: every one can be built
        run._build_ahead(s - 1)  # the runner computes s - 1
    run.run_all()
    # (the runner may build one itself first when it gets there before the caller: a busy
    # machine; the caller then leaves it, and the check once read that as a second build)
    assert sum(by_caller for _, by_caller in builds) >= len(segmented.segments) // 2
    assert len({s for s, _ in builds}) == len(builds)  # the signature matched: none built twice
    for name, value in _one_run(model, x).items():
        np.testing.assert_array_equal(run.values[name], value, err_msg=name)
    run.values.clear()
    run.close()


@pytest.mark.parametrize("ahead", [1, 2])
def test_a_take_builds_as_far_ahead_as_the_runner_may_compute(ahead, monkeypatch):
    """While the runner computes segment c, a take builds the sessions of the ``ahead``
    segments after it (the runner may reach them all before the next take): with one built
    ahead and two computed ahead, the runner built every other one itself (det 736: 8-12 ms of
    its clock, 4 ms since). (The runner's own builds while it waits for room are off here.)"""
    monkeypatch.setattr(streamed_run._Runner, "_idle_build", lambda self, s: None)
    model = _chain(n=12, width=1024)
    x = make_inputs(model)
    names = [o for n in model.graph.node for o in n.output if o]
    segmented = stream.SegmentedModel(model, names, segment_bytes=4096)
    assert len(segmented.segments) >= 6 and all(seg.outputs for seg in segmented.segments)
    run = segmented.run(x, ahead=ahead)
    run._build_ahead(2)
    assert [s for s, seg in enumerate(segmented.segments)
            if s > 2 and seg.session is not None] == list(range(3, 3 + ahead))
    last = len(segmented.segments) - 1
    run._build_ahead(last - 1)  # past the last one: only the last (the runner never gets to
    assert [s for s, seg in enumerate(segmented.segments)  # these before a take)
            if s > 2 and seg.session is not None] == list(range(3, 3 + ahead)) + [last]
    run.run_all()
    for name, value in _one_run(model, x).items():
        np.testing.assert_array_equal(run.values[name], value, err_msg=name)
    run.values.clear()
    run.close()


def test_nothing_is_built_ahead_when_the_segment_is_done_unknown_or_heavy(monkeypatch):
    monkeypatch.setattr(streamed_run._Runner, "_idle_build", lambda self, s: None)
    model = _chain(n=8, width=1024)
    x = make_inputs(model)
    names = [o for n in model.graph.node for o in n.output if o]

    segmented = stream.SegmentedModel(model, names, segment_bytes=3 * 4096)
    run = segmented.run(x)
    run._build_ahead(None)  # the runner computes nothing: it builds its own
    assert segmented.segments[1].session is None
    segmented.info = {}  # shapes unknown: no signature to build for
    run._build_ahead(0)
    assert segmented.segments[1].session is None
    heavy = stream.SegmentedModel(model, names, segment_bytes=3 * 4096, weight_bytes=1)
    assert not heavy.use_arena  # weights over one segment's budget: never two sessions' weights
    heavy_run = heavy.run(x)
    heavy_run._build_ahead(0)
    assert heavy.segments[1].session is None
    run.close()
    heavy_run.close()


def _slow_segments(monkeypatch, delay=0.03):
    """Segments that compute slowly, so the caller always finds one still running; returns
    the threads that built sessions."""
    import time

    real_run = stream.SegmentedModel._run_segment

    def slow(self, s, feeds):
        time.sleep(delay)
        return real_run(self, s, feeds)

    monkeypatch.setattr(stream.SegmentedModel, "_run_segment", slow)
    return _record_builders(monkeypatch)


def _record_builders(monkeypatch) -> list:
    """Session builds recorded as they happen: True for one the caller (main thread) made."""
    import threading

    builders = []
    real_build = stream._build_session

    def build(*a, **k):
        builders.append(threading.current_thread() is threading.main_thread())
        return real_build(*a, **k)

    monkeypatch.setattr(stream, "_build_session", build)
    return builders


def _run_and_check(segmented, model, x) -> int:
    """Run ``segmented`` on ``x``, check one run's values, close; the segments with outputs."""
    run = segmented.run(x)
    run.run_all()
    for name, value in _one_run(model, x).items():
        np.testing.assert_array_equal(run.values[name], value, err_msg=name)
    run.values.clear()
    run.close()
    return sum(1 for seg in segmented.segments if seg.outputs)


@pytest.mark.parametrize("keep_sessions", [True, False])
def test_a_run_builds_sessions_ahead_while_it_waits(keep_sessions, monkeypatch):
    model = models.transformer_block()
    x = make_inputs(model)
    names = [o for n in model.graph.node for o in n.output if o]
    segmented = stream.SegmentedModel(model, names, segment_bytes=3000, keep_sessions=keep_sessions)
    builders = _slow_segments(monkeypatch)
    with_outputs = _run_and_check(segmented, model, x)
    assert len(builders) == with_outputs  # each built once, by one side or the other
    assert sum(builders) >= with_outputs - 2  # all but the first two: by the waiting caller
    if not keep_sessions:  # run once: every session goes after its segment ran
        assert all(seg.session is None for seg in segmented.segments)


@pytest.mark.parametrize("ahead", [1, 2])
def test_a_runner_waiting_for_a_slow_writer_builds_the_sessions(ahead, monkeypatch):
    """The caller writes slowly (an emulated run's dump writer is the slower side): the runner,
    waiting for room, builds the sessions it will need, so the caller builds none after its
    first wait (it used to build one after every take, on its own clock)."""

    model = models.transformer_block()
    x = make_inputs(model)
    names = [o for n in model.graph.node for o in n.output if o]
    segmented = stream.SegmentedModel(model, names, segment_bytes=3000)
    builders = _record_builders(monkeypatch)
    run = segmented.run(x, ahead=ahead)
    for seg in segmented.segments:
        run.ensure(seg.outputs)
        _runner_fills_its_window(run)  # the writer, slower than the runner on any machine
    expected = _one_run(model, x)
    for name in names:
        np.testing.assert_array_equal(run.values[name], expected[name], err_msg=name)
    run.values.clear()
    run.close()
    with_outputs = sum(1 for seg in segmented.segments if seg.outputs)
    assert with_outputs > 4
    assert len(builders) == with_outputs  # each built once
    assert sum(builders) <= ahead  # the caller: only in its first wait, for the first segment


def test_a_run_once_model_stopped_halfway_keeps_no_session(monkeypatch):
    """keep_sessions=False: a run closed after its first segment leaves no session alive, none
    of those the runner built while it waited for room either."""
    import time

    model = models.transformer_block()
    x = make_inputs(model)
    names = [o for n in model.graph.node for o in n.output if o]
    segmented = stream.SegmentedModel(model, names, segment_bytes=3000, keep_sessions=False)
    run = segmented.run(x, ahead=2)
    run.ensure(segmented.segments[0].outputs)
    time.sleep(0.2)  # the runner: two segments ahead, then sessions built while it waits
    run.values.clear()
    run.close()
    assert all(seg.session is None for seg in segmented.segments)


def test_a_wrong_prediction_is_never_used(monkeypatch):
    """Tensor info that disagrees with what a segment really gets: the session built ahead
    for it does not fit the real signature and is built again; the values stay right."""
    model = models.transformer_block()
    x = make_inputs(model)
    names = [o for n in model.graph.node for o in n.output if o]
    segmented = stream.SegmentedModel(model, names, segment_bytes=3000)
    crossing = [n for seg in segmented.segments[1:] for n in seg.inputs
                if n in segmented.segment_of]
    assert crossing
    for name in crossing:  # a shape no tensor here has
        elem, shape = segmented.info[name]
        segmented.info[name] = (elem, tuple(shape) + (1,))
    builders = _slow_segments(monkeypatch)
    with_outputs = _run_and_check(segmented, model, x)
    assert len(builders) > with_outputs  # the mispredicted ones twice


def test_sessions_run_once_are_never_built_ahead_again(monkeypatch):
    """keep_sessions=False, two ahead, a slow prediction: a build ahead that comes after its
    segment ran (and dropped its session) builds nothing, so no session outlives the run."""
    import time

    model = models.transformer_block()
    x = make_inputs(model)
    names = [o for n in model.graph.node for o in n.output if o]
    segmented = stream.SegmentedModel(model, names, segment_bytes=3000, keep_sessions=False)
    real_predict = stream.SegmentedModel.predicted_signature

    def slow_predict(self, s, feeds):
        time.sleep(0.02)
        return real_predict(self, s, feeds)

    monkeypatch.setattr(stream.SegmentedModel, "predicted_signature", slow_predict)
    run = segmented.run(x, ahead=2)
    run.run_all()
    for name, value in _one_run(model, x).items():
        np.testing.assert_array_equal(run.values[name], value, err_msg=name)
    run.values.clear()
    run.close()
    assert [s for s, seg in enumerate(segmented.segments) if seg.session is not None] == []


def test_a_runner_error_is_the_callers_and_a_failed_run_is_not_run_on():
    """A segment fed a name nobody gives (here: a model input left out) fails in the runner:
    the caller gets that error, and a later ensure says the run failed instead of computing
    on with what the runner held."""
    model = _chain(n=12, width=1024)
    names = [n.output[0] for n in model.graph.node]
    run = stream.SegmentedModel(model, names, segment_bytes=2 * 4096).run({})  # no "x"
    with pytest.raises(KeyError, match="'x'"):
        run.ensure(names[:1])
    with pytest.raises(RuntimeError, match="already failed") as info:
        run.ensure(names[-1:])
    assert isinstance(info.value.__cause__, KeyError)
    run.close()
