"""A run compared against its golden while it runs (``EmulatorBackend.run_compared``).

The comparison it makes must be the one ``compare_dumps`` makes of the dump the same run
writes, row for row (a row's ``source``, the file that held the tensor, aside: no file was
written), whatever the model, mode, device format, dtype or fault; it writes nothing; and
anything it cannot plan (an output whose shape depends on values, another dump mode) is run
and written as ``run`` does.
"""
import dataclasses

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp, random_rgb  # noqa: E402
from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend  # noqa: E402
from pytest_ascend_accuracy.backends.emulator.compared_run import ComparedRun  # noqa: E402
from pytest_ascend_accuracy.backends.emulator.faults import Fault  # noqa: E402
from pytest_ascend_accuracy.compare.engine import compare_dumps  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402


def _rows(result):
    return [repr(dataclasses.replace(r, source=None)) for r in result.rows]


def _same(written, compared):
    assert _rows(compared) == _rows(written)
    assert compared.coverage == written.coverage


def _converted(cache, model, mode="default"):
    """(inputs, their golden, an ``output``-mode backend, the model converted in ``mode``)."""
    feeds = _inputs(model)
    backend = EmulatorBackend(cache, dump_mode="output")
    return feeds, golden_dump(model, feeds, cache=cache), backend, backend.convert(model, mode)


def _inputs(model, seed=0):
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    return make_inputs(model, seed=seed)


def topk_ties():
    """A TopK over values with ties (float16 on the device makes more of them)."""
    nodes = [helper.make_node("Mul", ["x", "s"], ["m"], name="scale"),
             helper.make_node("TopK", ["m", "k"], ["v", "i"], name="top", axis=-1)]
    graph = helper.make_graph(
        nodes, "topk", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("v", TensorProto.FLOAT, [1, 8]),
         helper.make_tensor_value_info("i", TensorProto.INT64, [1, 8])],
        [helper.make_tensor("s", TensorProto.FLOAT, [1], [1.0]),
         helper.make_tensor("k", TensorProto.INT64, [1], [8])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def nonzero():
    """An output whose shape depends on the values (NonZero): not known before the run."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("NonZero", ["r"], ["n"], name="nz"),
             helper.make_node("Cast", ["n"], ["y"], name="cast", to=TensorProto.FLOAT)]
    graph = helper.make_graph(
        nodes, "nz", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


CASES = [
    ("conv_bn_relu", "default", ()), ("conv_bn_relu", "fusion_off", ()),
    ("conv_bn_relu", "high_precision", ()), ("transformer_block", "default", ()),
    ("transformer_block", "fusion_off", ()), ("overflow", "default", ()),
    ("passing_mlp", "default", ()), ("conv_bn_relu", "default", (Fault("op", "conv1"),)),
    ("transformer_block", "default", (Fault("op", "/ln1/Div", effect="scale", amount=1.5),)),
]


@pytest.mark.parametrize("name,mode,faults", CASES,
                         ids=[f"{n}-{m}-{len(f)}" for n, m, f in CASES])
def test_the_comparison_made_while_running_is_the_one_of_the_written_dump(
        cache, tmp_path, name, mode, faults):
    model = models.MODELS[name]()
    feeds = _inputs(model)
    golden = golden_dump(model, feeds, cache=cache)
    backend = EmulatorBackend(cache, dump_mode="output", faults=faults)
    converted = backend.convert(model, mode)
    written = compare_dumps(backend.run(converted, feeds, dump_dir=tmp_path / "w"), golden)
    run = backend.run_compared(converted, feeds, golden, dump_dir=tmp_path / "c")
    assert isinstance(run, ComparedRun) and not run.written
    _same(written, compare_dumps(run, golden))
    assert not (tmp_path / "c").exists()  # nothing written
    assert run.meta["compared_while_running"] is True and run.root is None


def test_topk_ties_and_bfloat16_compare_alike(cache, tmp_path):
    from .test_bfloat16_runs import bf16_model

    row = np.full(64, 0.1, np.float32)  # a tie inside the top 8: four values 2.0 in float16
    row[:10] = [3, 2, 2.0001, 2.0002, 2.0003, 1, 0.9, 0.8, 0.7, 0.6]
    cases = ((topk_ties(), {"x": row[None]}),
             (bf16_model(bf16_output=True), {"x": np.array([1.3, -2.7, 3.1], np.float32)}))
    for model, feeds in cases:
        golden = golden_dump(model, feeds, cache=cache)
        backend = EmulatorBackend(cache, dump_mode="output")
        converted = backend.convert(model, "default")
        written = compare_dumps(backend.run(converted, feeds, dump_dir=tmp_path / "w"), golden)
        run = backend.run_compared(converted, feeds, golden)
        assert isinstance(run, ComparedRun)
        _same(written, compare_dumps(run, golden))
        if "top" in run:  # the case the tie pass is for, measured while running
            assert "ties_reordered" in written.row("top", "output:1").flags


def test_an_aipp_model_compares_alike(cache, tmp_path):
    cfg = tmp_path / "camera.cfg"
    cfg.write_text(imagenet_aipp(src_hw=(16, 16)))
    model = models.conv_bn_relu()
    backend = EmulatorBackend(cache, dump_mode="output")
    converted = backend.convert(model, "default", atc_options={"insert_op_conf": str(cfg)})
    frames = {"x": random_rgb(1, 16, 16)}
    golden = golden_dump(model, _inputs(model), cache=cache)
    written = compare_dumps(backend.run(converted, frames, dump_dir=tmp_path / "w"), golden)
    run = backend.run_compared(converted, frames, golden)
    assert isinstance(run, ComparedRun)
    assert run.ops[0].op_type == "Aipp"
    _same(written, compare_dumps(run, golden))


def test_an_output_shaped_by_its_values_is_run_and_written(cache, tmp_path):
    model = nonzero()
    # 1e-9 is 0 in float16: the device finds fewer values than the golden's shape says
    feeds = {"x": np.array([[1e-9] * 8 + [0.5] * 8], np.float32)}
    golden = golden_dump(model, feeds, cache=cache)
    backend = EmulatorBackend(cache, dump_mode="output")
    converted = backend.convert(model, "default")
    run = backend.run_compared(converted, feeds, golden, dump_dir=tmp_path / "c")
    assert not isinstance(run, ComparedRun)
    assert run.root is not None and (tmp_path / "c").is_dir()
    written = compare_dumps(backend.run(converted, feeds, dump_dir=tmp_path / "w"), golden)
    _same(written, compare_dumps(run, golden))


def test_another_dump_mode_is_run_and_written(cache, tmp_path):
    model = models.conv_bn_relu()
    feeds = _inputs(model)
    golden = golden_dump(model, feeds, cache=cache)
    backend = EmulatorBackend(cache, dump_mode="all")
    run = backend.run_compared(backend.convert(model, "default"), feeds, golden,
                               dump_dir=tmp_path / "c")
    assert not isinstance(run, ComparedRun) and any(op.inputs for op in run.ops)


def test_reading_a_tensor_runs_again_with_the_dump_written(cache, tmp_path):
    model = models.conv_bn_relu()
    feeds, golden, backend, converted = _converted(cache, model)
    reference = backend.run(converted, feeds, dump_dir=tmp_path / "w")
    run = backend.run_compared(converted, feeds, golden, dump_dir=tmp_path / "c")
    name = run.ops[0].name
    values = run[name].output(0).load()
    assert run.written and (tmp_path / "c").is_dir() and run.root is not None
    np.testing.assert_array_equal(values, reference[name].output(0).load())
    assert run.meta["compared_while_running"] is False
    # from now on a DumpSet of files: compared as any other, sources named
    result = compare_dumps(run, golden)
    assert all(r.source for r in result.rows if r.metrics is not None)


def test_another_golden_writes_the_dump_and_compares_it(cache, tmp_path):
    model = models.conv_bn_relu()
    feeds, golden, backend, converted = _converted(cache, model)
    other = golden_dump(model, _inputs(model, seed=1), cache=cache)
    run = backend.run_compared(converted, feeds, golden, dump_dir=tmp_path / "c")
    result = compare_dumps(run, other)
    assert run.written
    written = compare_dumps(backend.run(converted, feeds, dump_dir=tmp_path / "w"), other)
    assert _rows(result) == _rows(written)
    # KL asked of a run compared without it, or not asked of one compared with it: written
    # and compared again, as the written dump compares
    for made, asked in ((False, True), (True, False)):
        run = backend.run_compared(converted, feeds, golden, kl=made)
        assert compare_dumps(run, golden, kl=made) is run.compared_with(golden, kl=made)
        assert not run.written
        result = compare_dumps(run, golden, kl=asked)
        assert run.written and result.meta["kl"] is asked
        assert _rows(result) == _rows(compare_dumps(
            backend.run(converted, feeds, dump_dir=tmp_path / f"w{made}"), golden, kl=asked))


def test_a_failing_check_reports_from_the_written_dump(cache, tmp_path):
    model = models.overflow_model()
    feeds, golden, backend, converted = _converted(cache, model)
    with pytest.raises(AccuracyFailure) as written:
        assert_accuracy(backend.run(converted, feeds, dump_dir=tmp_path / "w"), golden, 0.95)
    run = backend.run_compared(converted, feeds, golden, kl=False, dump_dir=tmp_path / "c")
    with pytest.raises(AccuracyFailure) as compared:
        assert_accuracy(run, golden, 0.95)
    assert run.written and (tmp_path / "c").is_dir()
    assert compared.value.verdict.first.row.op_name == written.value.verdict.first.row.op_name
    assert all(r.source and str(tmp_path / "c") in r.source
               for r in compared.value.result.rows if r.metrics is not None)
    assert str(compared.value).replace(str(tmp_path / "c"), "D").split("\n")[:3] == \
        str(written.value).replace(str(tmp_path / "w"), "D").split("\n")[:3]


def test_a_passing_check_judges_the_comparison_made(cache, tmp_path):
    model = models.passing_mlp()
    feeds = _inputs(model)
    golden = golden_dump(model, feeds, cache=cache)
    backend = EmulatorBackend(cache, dump_mode="output")
    run = backend.run_compared(backend.convert(model, "default"), feeds, golden, kl=False,
                               dump_dir=tmp_path / "c")  # (no KL: assert_accuracy's own choice)
    result = assert_accuracy(run, golden, 0.95)
    assert result is run.compared_with(golden, kl=False)
    assert not run.written and not (tmp_path / "c").exists()


def test_materialize_gives_a_dump_to_read_by_path(cache, tmp_path):
    from pytest_ascend_accuracy.dump.loader import load_dump

    model = models.conv_bn_relu()
    feeds, golden, backend, converted = _converted(cache, model)
    run = backend.run_compared(converted, feeds, golden, dump_dir=tmp_path / "c")
    assert run.root is None and run.meta["dump_dir"] is None
    assert run.materialize() is run and run.meta["dump_dir"] == str(tmp_path / "c")
    again = load_dump(run.meta["dump_dir"])  # as README says a test reads it by path
    assert [op.name for op in again.ops] == [op.name for op in run.ops]


def test_a_written_dump_materializes_as_itself(cache, tmp_path):
    model = models.conv_bn_relu()
    feeds, golden, backend, converted = _converted(cache, model)
    written = backend.run(converted, feeds, dump_dir=tmp_path / "w")
    assert written.materialize() is written  # README's call works on any run's DumpSet


def test_progress_is_called_after_each_pair_as_compare_dumps_calls_it(cache, tmp_path):
    model = models.transformer_block()
    feeds, golden, backend, converted = _converted(cache, model)
    seen, written = [], []
    compare_dumps(backend.run(converted, feeds, dump_dir=tmp_path / "w"), golden,
                  progress=written.append)
    backend.run_compared(converted, feeds, golden, progress=seen.append)
    assert [(p.done, p.total, p.op_name) for p in seen] == \
        [(p.done, p.total, p.op_name) for p in written]
    assert seen[-1].bytes_done == seen[-1].bytes_total == written[-1].bytes_total


def _counting_pairs(monkeypatch):
    """The number of pairs ``compare_dumps`` measures from now on."""
    from pytest_ascend_accuracy.compare import engine

    calls = [0]
    measure = engine.compare_pair

    def counted(*args, **kwargs):
        calls[0] += 1
        return measure(*args, **kwargs)

    monkeypatch.setattr(engine, "compare_pair", counted)
    return calls


@pytest.mark.parametrize("name,mode", [("overflow", "default"), ("overflow", "fusion_off"),
                                       ("conv_bn_relu", "default")])
def test_a_failing_check_names_the_written_files_without_comparing_again(
        cache, tmp_path, monkeypatch, name, mode):
    """The run is made again to write the failing ops' files; the comparison made while it
    ran is the one of those files (the same values), so it is not made again: the rows are
    those of a compare of the written dump, files included, and no pair is measured."""
    from pytest_ascend_accuracy.dump.model import DumpSet

    model = models.MODELS[name]()
    feeds = _inputs(model)
    golden = golden_dump(model, feeds, cache=cache)
    faults = (Fault("op", "conv1"),) if name == "conv_bn_relu" else ()
    backend = EmulatorBackend(cache, dump_mode="output", faults=faults)
    converted = backend.convert(model, mode)
    run = backend.run_compared(converted, feeds, golden, kl=False, dump_dir=tmp_path / "c")
    calls = _counting_pairs(monkeypatch)
    with pytest.raises(AccuracyFailure) as failed:
        assert_accuracy(run, golden, 0.95)
    assert calls[0] == 0 and run.written
    result = failed.value.result
    written = DumpSet(run.ops, kind=run.kind, root=run.root, model_name=run.model_name,
                      meta=dict(run.meta))  # (the written dump, as any other DumpSet)
    from_files = compare_dumps(written, golden, kl=False)
    assert calls[0] == len([r for r in from_files.rows if r.golden_name])
    assert [repr(r) for r in result.rows] == [repr(r) for r in from_files.rows]
    assert result.actual_root == from_files.actual_root
    assert result.meta["actual"]["dump_dir"] == str(tmp_path / "c")
    assert result.meta["actual"]["compared_while_running"] is False


def test_a_written_dump_unlike_the_one_compared_is_compared_again(cache, tmp_path, monkeypatch):
    model = models.overflow_model()
    feeds, golden, backend, converted = _converted(cache, model)
    run = backend.run_compared(converted, feeds, golden, kl=False, dump_dir=tmp_path / "c")
    run.materialize()
    run._written.ops = run._written.ops[:-1]  # (an op the written dump lacks)
    calls = _counting_pairs(monkeypatch)
    result = compare_dumps(run, golden, kl=False)
    assert calls[0] > 0 and all(r.source for r in result.rows if r.metrics is not None)
