"""``ascend-accuracy compare DUMP GOLDEN`` where the golden was made from other input values of
the same shapes (another seed or file) and the dump holds what its ops read (dump mode ``all``
or ``input``): before, the compare failed at the first op and its next step blamed float16
("no float16 overflow seen: ... diagnose"), which no conversion mode can fix. The values the
dump's first ops read from the graph's inputs are judged against the golden's as diagnose's
data step judges them (float16 rounding only), and the next step says the inputs differ."""
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


def _model(path, fused=False):
    """``x [1, 3, 8, 8] -> Conv 'conv' (-> Relu 'relu', fused into it) -> y``."""
    w = np.random.default_rng(5).standard_normal((4, 3, 3, 3)).astype(np.float32)
    nodes = [h.make_node("Conv", ["x", "w"], ["c" if fused else "y"], name="conv",
                         pads=[1, 1, 1, 1])]
    if fused:
        nodes.append(h.make_node("Relu", ["c"], ["y"], name="relu"))
    graph = h.make_graph(nodes, "net", [h.make_tensor_value_info("x", TP.FLOAT, [1, 3, 8, 8])],
                         [h.make_tensor_value_info("y", TP.FLOAT, None)], [nh.from_array(w, "w")])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), str(path))
    return path


def _seeded(seed, scale=1.0):
    return {"x": np.random.default_rng(seed).random((1, 3, 8, 8), dtype=np.float32) * scale}


@pytest.fixture
def made(tmp_path, monkeypatch):
    """run(dump inputs, mode, fused) -> (dump folder, the golden of seed 0's cache entry, the
    conversion's om json), in tmp_path as the working directory."""
    monkeypatch.chdir(tmp_path)

    def run(inputs, mode="all", fused=False):
        model = _model(tmp_path / "net.onnx", fused)
        cache = Cache(tmp_path / ".ascend-accuracy")
        golden = golden_dump(model, _seeded(0), cache=cache)
        backend = EmulatorBackend(cache, dump_mode=mode)
        converted = backend.convert(model)
        backend.run(converted, inputs, dump_dir=tmp_path / "dump")
        return "dump", golden.meta["cache_entry"], str(converted.om_json)
    return run


def _next_step(capsys) -> str:
    out = capsys.readouterr().out
    return next(line for line in out.splitlines() if line.startswith("next step: "))


def test_a_golden_of_another_seed_is_named_not_float16(made, capsys):
    dump, entry, _ = made(_seeded(1))
    assert main(["compare", dump, entry, "--threshold", "0.99"]) == 1
    step = _next_step(capsys)
    assert step.startswith(
        "next step: the dump's inputs are not the golden's: conv input:0 carries graph input "
        "'x' and differs from the values the golden was made from (rel-L2 ")
    assert ("no conversion mode changes an input, only float16 rounding may: the golden was "
            "made from other inputs of the same shapes (another seed or file), or the device's "
            "pre-processing differs (AIPP, mean and scale, channel order): compare against the "
            "golden of the dump's inputs (ascend-accuracy cache --entries --cache-dir "
            ".ascend-accuracy lists each golden with its model and input shapes), or check the "
            "pre-processing") in step
    assert "float16 overflow" not in step and "diagnose" not in step


def test_a_scaled_input_reads_as_a_mean_and_scale_mistake(made, capsys):
    dump, entry, _ = made(_seeded(0, scale=255.0))
    assert main(["compare", dump, entry, "--threshold", "0.99"]) == 1
    assert "looks like golden * 255 (check mean/scale)" in _next_step(capsys)


def test_a_fused_first_op_is_read_through_its_om_json(made, capsys):
    dump, entry, om_json = made(_seeded(1), fused=True)
    assert main(["compare", dump, entry, "--threshold", "0.99", "--om-json", om_json]) == 1
    assert _next_step(capsys).startswith(
        "next step: the dump's inputs are not the golden's: convrelu input:0 carries graph "
        "input 'x'")


def test_the_same_inputs_failing_by_float16_rounding_keep_the_float16_advice(made, capsys):
    dump, entry, _ = made(_seeded(0))
    assert main(["compare", dump, entry, "--metric", "max_abs", "--threshold", "1e-6"]) == 1
    step = _next_step(capsys)
    assert "inputs are not the golden's" not in step and "diagnose" in step


def test_a_dump_of_op_outputs_cannot_tell_and_keeps_the_float16_advice(made, capsys):
    dump, entry, _ = made(_seeded(1), mode="output")
    assert main(["compare", dump, entry, "--threshold", "0.99"]) == 1
    assert "inputs are not the golden's" not in _next_step(capsys)


def _two_inputs(path):
    """``Add(a, b)`` of two inputs of one shape (a BERT's input_ids and attention_mask share
    theirs), then a Relu."""
    nodes = [h.make_node("Add", ["a", "b"], ["s"], name="join"),
             h.make_node("Relu", ["s"], ["y"], name="act")]
    graph = h.make_graph(nodes, "pair", [h.make_tensor_value_info(n, TP.FLOAT, [1, 32])
                                         for n in ("a", "b")],
                         [h.make_tensor_value_info("y", TP.FLOAT, None)])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), str(path))
    return path


def _ids(path):
    """``Gather(table, ids)``: integer token ids into a float table."""
    table = np.random.default_rng(2).standard_normal((16, 4)).astype(np.float32)
    nodes = [h.make_node("Gather", ["table", "ids"], ["e"], name="embed"),
             h.make_node("Relu", ["e"], ["y"], name="act")]
    graph = h.make_graph(nodes, "ids", [h.make_tensor_value_info("ids", TP.INT64, [1, 8])],
                         [h.make_tensor_value_info("y", TP.FLOAT, None)],
                         [nh.from_array(table, "table")])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), str(path))
    return path


def _compare(tmp_path, model, golden_inputs, dump_inputs):
    cache = Cache(tmp_path / ".ascend-accuracy")
    golden = golden_dump(model, golden_inputs, cache=cache)
    backend = EmulatorBackend(cache, dump_mode="all")
    backend.run(backend.convert(model), dump_inputs, dump_dir=tmp_path / "dump")
    return main(["compare", "dump", golden.meta["cache_entry"], "--threshold", "0.99"])


def test_inputs_sharing_a_shape_are_judged_too(tmp_path, monkeypatch, capsys):
    """A review: models of several same-shaped inputs never got the step."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    pair = [{n: rng.standard_normal((1, 32)).astype(np.float32) for n in "ab"} for _ in "12"]
    assert _compare(tmp_path, _two_inputs(tmp_path / "pair.onnx"), *pair) == 1
    assert _next_step(capsys).startswith(
        "next step: the dump's inputs are not the golden's: join input:0 carries graph input "
        "'a' or 'b' and differs from the values the golden was made from (rel-L2 ")


def test_integer_ids_that_differ_are_counted_not_read_as_an_image(tmp_path, monkeypatch, capsys):
    """A review: token ids got "not a linear transform of the golden input (check channel
    order, layout, resize)"."""
    monkeypatch.chdir(tmp_path)
    ids = np.arange(8, dtype=np.int64).reshape(1, 8)
    other = ids.copy()
    other[0, :3] = [9, 10, 11]
    assert _compare(tmp_path, _ids(tmp_path / "ids.onnx"), {"ids": ids}, {"ids": other}) == 1
    step = _next_step(capsys)
    assert "embed input:1 carries graph input 'ids' and differs from the values the golden was " \
           "made from (3 of 8 values differ)" in step, step
    assert "channel order" not in step.split("no conversion mode")[0]


def test_a_fused_ops_last_member_reading_another_input_is_not_paired(tmp_path, monkeypatch,
                                                                     capsys):
    """A re-review: ``Add(b, MatMul(a, W))``, fused, dumped without its om json, is known by
    its last member, the Add, whose first slot reads ``b``; the fused op's first slot reads
    ``a``: a dump of the golden's own inputs was told its inputs were not the golden's."""
    monkeypatch.chdir(tmp_path)
    w = np.random.default_rng(4).standard_normal((32, 32)).astype(np.float32)
    nodes = [h.make_node("MatMul", ["a", "w"], ["m"], name="mm"),
             h.make_node("Add", ["b", "m"], ["y"], name="bias")]
    graph = h.make_graph(nodes, "late", [h.make_tensor_value_info(n, TP.FLOAT, [1, 32])
                                         for n in ("a", "b")],
                         [h.make_tensor_value_info("y", TP.FLOAT, None)], [nh.from_array(w, "w")])
    model = tmp_path / "late.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), str(model))
    rng = np.random.default_rng(0)
    same = {n: rng.standard_normal((1, 32)).astype(np.float32) for n in "ab"}
    cache = Cache(tmp_path / ".ascend-accuracy")
    golden = golden_dump(model, same, cache=cache)
    backend = EmulatorBackend(cache, dump_mode="all")
    backend.run(backend.convert(model), same, dump_dir=tmp_path / "dump")
    main(["compare", "dump", golden.meta["cache_entry"], "--metric", "max_abs",
          "--threshold", "1e-9"])
    assert "inputs are not the golden's" not in capsys.readouterr().out
