"""``ascend-accuracy compare <dump> <stored golden>`` of a model with dynamic inputs whose golden
was stored from the arrays' shapes (``golden_dump(m, inputs, path=...)``, ``"input_shape": {}``
recorded) printed ``diagnose m.onnx --mode ...`` without ``--input-shape``, refused pasted ('2
inputs are left dynamic'; a BERT trial). The command carries the sizes the golden's tensors
ran at and, pasted, runs; so does ``judge`` of the result saved before. Where the tensors do
not tell the sizes, the command gives 1s and says so, and still runs pasted."""
import json
import re
import shlex

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

from pytest_ascend_accuracy.cli import main

pytest.importorskip("onnxruntime")


def _model(nodes, inputs, inits):
    graph = helper.make_graph(nodes, "m", inputs,
                              [helper.make_tensor_value_info("y", T.FLOAT, None)],
                              initializer=[numpy_helper.from_array(np.asarray(v), k)
                                           for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def tokens():
    """BERT's mask pattern: (1 - mask) * float32 min leaves float16, added to embeddings."""
    r = np.random.default_rng(3)
    return _model(
        [helper.make_node("Gather", ["table", "input_ids"], ["emb"], name="emb/Gather"),
         helper.make_node("Cast", ["attention_mask"], ["maskf"], name="mask/Cast", to=T.FLOAT),
         helper.make_node("Unsqueeze", ["maskf", "axis2"], ["m3"], name="mask/Unsqueeze"),
         helper.make_node("Sub", ["one", "m3"], ["inv"], name="mask/Sub"),
         helper.make_node("Mul", ["inv", "fmin"], ["big"], name="mask/Mul"),
         helper.make_node("Add", ["emb", "big"], ["scores"], name="att/Add"),
         helper.make_node("Softmax", ["scores"], ["y"], name="att/Softmax", axis=1)],
        [helper.make_tensor_value_info("input_ids", T.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("attention_mask", T.INT64, ["batch", "seq"])],
        {"table": (r.standard_normal((10, 4)) * 0.5).astype(np.float32),
         "axis2": np.array([2], np.int64), "one": np.array(1.0, np.float32),
         "fmin": np.array(-3.4e38, np.float32)})


def reduced():
    """x [N, 4] summed over N: no stored tensor shows N."""
    return _model([helper.make_node("ReduceSum", ["x", "ax0"], ["s"], name="sum", keepdims=0),
                   helper.make_node("Mul", ["s", "big"], ["m"], name="scale/Mul"),
                   helper.make_node("Mul", ["m", "small"], ["y"], name="unscale/Mul")],
                  [helper.make_tensor_value_info("x", T.FLOAT, ["N", 4])],
                  {"ax0": np.array([0], np.int64), "big": np.array(1e5, np.float32),
                   "small": np.array(1e-5, np.float32)})


def reshaped():
    """x [N] reshaped to [2, -1]: no stored tensor names N, and N = 1 does not fit."""
    return _model([helper.make_node("Reshape", ["x", "to"], ["r"], name="rs"),
                   helper.make_node("Mul", ["r", "big"], ["m"], name="scale/Mul"),
                   helper.make_node("Mul", ["m", "small"], ["y"], name="unscale/Mul")],
                  [helper.make_tensor_value_info("x", T.FLOAT, ["N"])],
                  {"to": np.array([2, -1], np.int64), "big": np.array(1e5, np.float32),
                   "small": np.array(1e-5, np.float32)})


def _pair(folder, proto, shape):
    """The emulated dump at ``shape`` and the golden stored from the arrays alone (no
    input_shape given, as ``golden_dump(MODEL, inputs, path=...)`` does)."""
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.golden.stored import store_golden
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    folder.mkdir()
    model = folder / "m.onnx"
    onnx.save(proto, str(model))
    cache = Cache(folder / "cache")
    backend = EmulatorBackend(cache)
    inputs = make_inputs(model, seed=0, input_shape=shape)
    dump = backend.run(backend.convert(model, None, input_shape=shape), inputs,
                       dump_dir=folder / "dump")
    store_golden(folder / "golden", golden_dump(model, inputs, cache=cache))
    assert json.loads((folder / "golden" / "golden.json").read_text())["input_shape"] == {}
    return str(dump.root), inputs


def _command(out):
    """The command as printed (before its first parenthesis), and the parenthesis after it."""
    found = re.search(r"(ascend-accuracy diagnose [^()]*?)( \((?!or )[^()]*\))?"
                      r"(?: \(or --mode [^()]*\))? passes with exit status 0", out)
    assert found, out
    return found.group(1), found.group(2) or ""


def _runs_pasted(command, capsys, tmp_path):
    argv = shlex.split(command)[1:] + ["--cache-dir", str(tmp_path / "dcache")]
    assert main(argv) == 0, capsys.readouterr()  # the printed "passes with exit status 0"
    assert "PASSES" in capsys.readouterr().out


def test_compare_and_judge_give_the_sizes_the_golden_ran_at(tmp_path, capsys, monkeypatch):
    dump, _ = _pair(tmp_path / "p", tokens(), {"input_ids": (2, 8), "attention_mask": (2, 8)})
    monkeypatch.chdir(tmp_path / "p")
    assert main(["compare", dump, "golden", "--json", "saved.json"]) == 1
    command, said = _command(capsys.readouterr().out)
    assert command == ("ascend-accuracy diagnose m.onnx --mode '{keep_dtype: [\"mask/Mul\", "
                       "\"att/Add\", \"att/Softmax\"]}' --input-shape "
                       "'input_ids:2,8;attention_mask:2,8'")
    assert said == ""  # diagnose's seed-0 inputs at those sizes are the golden's (its digest)
    _runs_pasted(command, capsys, tmp_path)
    # a result saved before the sizes were read: judge reads them from its rows
    saved = json.loads((tmp_path / "p" / "saved.json").read_text())
    saved["meta"]["diagnose"].update(input_shape="", seed=None)
    (tmp_path / "p" / "saved.json").write_text(json.dumps(saved))
    assert main(["judge", "saved.json"]) == 1
    assert _command(capsys.readouterr().out) == (command, "")


def test_sizes_no_tensor_tells_are_given_as_1_and_said_so(tmp_path, capsys, monkeypatch):
    dump, inputs = _pair(tmp_path / "p", reduced(), {"x": (3, 4)})
    monkeypatch.chdir(tmp_path / "p")
    assert main(["compare", dump, "golden"]) == 1
    command, said = _command(capsys.readouterr().out)
    assert command.endswith(" --input-shape x:1,4")
    assert said == (" (the sizes the golden ran at are not known: its record and tensors do not "
                    "give those of 'x', and --input-shape gives 1 for each dynamic dimension: "
                    "choose them, or give the inputs the golden was made from in place of "
                    "--input-shape: --inputs x=FILE.npy)")
    _runs_pasted(command, capsys, tmp_path)
    np.save(tmp_path / "x.npy", inputs["x"])  # the other way it names
    other = command.replace(" --input-shape x:1,4", f" --inputs x={tmp_path / 'x.npy'}")
    _runs_pasted(other, capsys, tmp_path)


STORED = '''
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.99)
def test_stored(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("m.onnx", seed=0, input_shape={"input_ids": (2, 8),
                                                           "attention_mask": (2, 8)})
    check_accuracy(ascend_model("m.onnx").run(inputs), golden_dump("m.onnx", inputs,
                                                                   path="golden/t"))
'''


def test_judge_of_a_plugin_report_names_the_stored_goldens_model(pytester, capsys, tmp_path):
    onnx.save(tokens(), str(pytester.path / "m.onnx"))
    pytester.makepyfile(test_s=STORED)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)  # golden written
    assert json.loads((pytester.path / "golden/t/golden.json").read_text())["input_shape"] == {}
    pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep").assert_outcomes(failed=1)
    (saved,) = pytester.path.glob("rep/*/compare.json")
    capsys.readouterr()
    assert main(["judge", str(saved)]) == 1  # said MODEL.onnx: the report names golden.json only
    command, said = _command(capsys.readouterr().out)
    assert command.startswith("ascend-accuracy diagnose m.onnx --mode ")
    assert command.endswith(" --input-shape 'input_ids:2,8;attention_mask:2,8' --threshold 0.99")
    assert said == ""
    _runs_pasted(command, capsys, tmp_path)


def test_sizes_of_1_the_model_refuses_are_not_printed_as_a_command_that_passes(
        tmp_path, capsys, monkeypatch):
    """A review: '--input-shape x:1' was printed as passing with exit status 0, and pasted
    diagnose failed ('Reshape ... incompatible shapes', exit 2)."""
    dump, inputs = _pair(tmp_path / "p", reshaped(), {"x": (12,)})
    monkeypatch.chdir(tmp_path / "p")
    assert main(["compare", dump, "golden"]) == 1
    command, said = _command(capsys.readouterr().out)
    assert "--input-shape" not in command
    assert said == (" (the sizes the golden ran at are not known: its record and tensors do not "
                    "give those of 'x', and 1 for each dynamic dimension does not fit the model: "
                    "its ONNX shape inference or onnxruntime refuses it; add --input-shape with "
                    "the sizes the "
                    "golden ran at, or give the inputs it was made from: --inputs x=FILE.npy)")
    np.save(tmp_path / "x.npy", inputs["x"])  # either way it names, filled in
    _runs_pasted(f"{command} --inputs x={tmp_path / 'x.npy'}", capsys, tmp_path)
    _runs_pasted(f"{command} --input-shape x:12", capsys, tmp_path)


def test_compare_with_a_golden_cache_entry_gives_the_sizes_it_records(tmp_path, capsys,
                                                                      monkeypatch):
    """A PP-OCRv4 trial: compare against a golden cache entry (its golden.json records the
    model's name and input shapes, no model file) printed 'diagnose MODEL.onnx' without
    --input-shape; pasted it was refused as dynamic, and the refusal's e.g. (1s) said PASSES
    of a dump failing at 48x320. The command carries the recorded sizes now."""
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    shape = {"input_ids": (2, 8), "attention_mask": (2, 8)}
    folder = tmp_path / "p"
    folder.mkdir()
    onnx.save(tokens(), str(folder / "m.onnx"))
    cache = Cache(folder / "cache")
    backend = EmulatorBackend(cache)
    inputs = make_inputs(folder / "m.onnx", seed=0, input_shape=shape)
    dump = backend.run(backend.convert(folder / "m.onnx", None, input_shape=shape), inputs,
                       dump_dir=folder / "dump")
    golden = golden_dump(folder / "m.onnx", inputs, cache=cache, input_shape=shape)
    monkeypatch.chdir(folder)
    assert main(["compare", str(dump.root), str(golden.root)]) == 1
    command, _ = _command(capsys.readouterr().out)
    assert command.startswith("ascend-accuracy diagnose MODEL.onnx ")
    assert command.endswith(" --input-shape 'input_ids:2,8;attention_mask:2,8'")
    _runs_pasted(command.replace("MODEL.onnx", "m.onnx"), capsys, tmp_path)
