"""``ascend-accuracy compare DUMP GOLDEN`` with a golden made from other inputs (an audit: a
kept dump of ddddocr's OCR model at 64x200 against the cache's golden of seeded 64x256 inputs
was compared, every tensor "cannot compare", and the next step blamed float16 rounding or a
fault with a diagnose command at the golden's shape). Where the dump tells its input shapes
the compare is refused as the plugin refuses a stored golden of other inputs; where it does
not (a dump of op outputs), the next step says so, naming both shapes and how to find the
right golden. ``cache --entries`` shows each golden's model and input shapes."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
from pytest_ascend_accuracy.cli.app import main
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump


def _model(path):
    """``x [1, 2, W] -> Mul 'scale' -> Relu 'relu' -> y``: an input of dynamic width."""
    nodes = [h.make_node("Mul", ["x", "k"], ["m"], name="scale"),
             h.make_node("Relu", ["m"], ["y"], name="relu")]
    graph = h.make_graph(nodes, "wide", [h.make_tensor_value_info("x", TP.FLOAT, [1, 2, "W"])],
                         [h.make_tensor_value_info("y", TP.FLOAT, [1, 2, "W"])],
                         [nh.from_array(np.array(2.0, np.float32), "k")])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), str(path))
    return path


@pytest.fixture
def made(tmp_path, monkeypatch):
    """(the dump of a run at width 6, in dump mode ``mode``; the cache entry of the golden at
    width 8), in tmp_path as the working directory."""
    monkeypatch.chdir(tmp_path)
    model = _model(tmp_path / "wide.onnx")
    cache = Cache(tmp_path / ".ascend-accuracy")
    golden = golden_dump(model, {"x": np.ones((1, 2, 8), np.float32)}, cache=cache)

    def run(mode="output"):
        backend = EmulatorBackend(cache, dump_mode=mode)
        converted = backend.convert(model, input_shape={"x": [1, 2, 6]})
        backend.run(converted, {"x": np.ones((1, 2, 6), np.float32)},
                    dump_dir=tmp_path / f"dump-{mode}")
        return f"dump-{mode}", golden.meta["cache_entry"]
    return run


def test_a_dump_of_op_outputs_is_told_the_golden_was_made_from_other_inputs(made, capsys):
    dump, entry = made("output")
    assert main(["compare", dump, entry, "--threshold", "0.99"]) == 1
    out = capsys.readouterr().out
    step = next(line for line in out.splitlines() if line.startswith("next step: "))
    assert step == (
        "next step: the golden was made from other inputs: its golden.json records inputs x: "
        "[1, 2, 8], and scale output:0, fed by them, has shape (1, 2, 6) in the dump against "
        "(1, 2, 8) in the golden (no conversion mode changes a shape): compare against the "
        "golden of the dump's inputs: ascend-accuracy cache --entries --cache-dir "
        ".ascend-accuracy lists each golden with its model and input shapes")
    assert "float16" not in step


def test_a_dump_holding_its_inputs_is_refused(made, capsys):
    dump, entry = made("all")
    assert main(["compare", dump, entry, "--threshold", "0.99"]) == 2
    err = capsys.readouterr().err
    assert ("this golden was written from another model or other inputs than the dump (its "
            "golden.json says so), so comparing against it would blame operators for that "
            "difference:\n  input shapes: written from inputs x: [1, 2, 8], the dump's inputs "
            "are x: [1, 2, 6]\nFix: compare against the golden of the dump's inputs: "
            "ascend-accuracy cache --entries --cache-dir .ascend-accuracy lists each golden "
            "with its model and input shapes") in err


def test_the_advised_listing_shows_each_golden_s_model_and_input_shapes(made, capsys):
    _, entry = made("output")
    assert main(["cache", "--entries", "--cache-dir", ".ascend-accuracy"]) == 0
    out = capsys.readouterr().out
    key = entry.rstrip("/").split("/")[-1]
    assert (f"      .ascend-accuracy/golden/{key[:2]}/{key}  model wide, inputs x: [1, 2, 8]\n"
            in out)


def test_the_golden_of_the_same_inputs_is_compared_as_before(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    model = _model(tmp_path / "wide.onnx")
    cache = Cache(tmp_path / ".ascend-accuracy")
    inputs = {"x": np.ones((1, 2, 6), np.float32)}
    golden = golden_dump(model, inputs, cache=cache)
    backend = EmulatorBackend(cache, dump_mode="all")
    backend.run(backend.convert(model, input_shape={"x": [1, 2, 6]}), inputs,
                dump_dir=tmp_path / "dump")
    assert main(["compare", "dump", golden.meta["cache_entry"], "--threshold", "0.99"]) == 0
    assert "other inputs" not in capsys.readouterr().out
